package results

import (
	"math"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// The metrics a repeat's spread is kept for, as keys of Repeat's maps.
const (
	MetricAchieved   = "achieved_rate"
	MetricThroughput = "throughput"
	MetricP50        = "p50"
	MetricP95        = "p95"
	MetricP99        = "p99"
	MetricErrorRate  = "error_rate"
	// MetricHostOther is the CPU the host's other processes used during
	// each repeat (Generator.HostOtherPct), kept when every repeat has it:
	// not a figure of the target, but what tells compare a busy host.
	MetricHostOther = "host_other_cpu_pct"
)

// RepeatMetrics lists them in the order tables show them.
var RepeatMetrics = []string{MetricAchieved, MetricThroughput, MetricP50, MetricP95, MetricP99, MetricErrorRate}

// Repeat is how a step's (or a scenario's) figures spread over the repeats
// of a run (--repeat N): each figure's value in every repeat, in run order,
// and its coefficient of variation. The step's own figures are then the
// medians of these values (latency percentiles included: the median of the
// repeats' percentiles), counts are summed, and its histogram merges every
// repeat's; Histograms keeps each repeat's, so nothing is averaged that
// should be merged.
type Repeat struct {
	// N is how many repeats ran this step (an interrupted one left out).
	N int `json:"n"`
	// CoVPct is each metric's standard deviation over its mean, in percent
	// (0 when the mean is 0 or N < 2).
	CoVPct map[string]float64 `json:"cov_pct"`
	// Values holds each metric's value in every repeat: rates per second,
	// latencies in milliseconds, error_rate a fraction.
	Values map[string][]float64 `json:"values"`
	// Histograms are the repeats' latency histograms, encoded as Step's.
	Histograms []string `json:"histograms,omitempty"`
	// Passed counts the repeats in which the step passed (find: its SLO
	// held, its verdict was not OVERLOADED or GENERATOR LIMITED, its
	// figures valid).
	Passed int `json:"passed"`
}

// Repeats returns the most repeats any step of r ran (1 without repeats).
func (r *Result) Repeats() int {
	n := 1
	for _, s := range r.Steps {
		if s.Repeat != nil {
			n = max(n, s.Repeat.N)
		}
	}
	return n
}

// Median returns the median of v (the mean of the two middle values for
// an even count); NaN for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// CoV returns the coefficient of variation of v in percent: the sample
// standard deviation over the mean. 0 for fewer than two values or a zero
// mean.
func CoV(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return 100 * math.Sqrt(ss/float64(len(v)-1)) / math.Abs(mean)
}

// Combine makes one step of the repeats of a level, in run order: their
// figures by CombineFigures (counts summed, rates, error rate and latency
// percentiles the medians of the repeats', histograms merged, Repeat
// holding each figure's values and spread), every repeat's warnings once,
// and the last repeat's verdict until the caller judges the step again.
// Interrupted repeats are left out unless no other ran. One step is
// returned as it is; passed says whether each repeat passed (see
// Repeat.Passed).
func Combine(reps []Step, passed []bool) (Step, error) {
	var figures []Figures
	ok, lastDone := 0, -1
	for i := range reps {
		if !reps[i].Interrupted {
			figures = append(figures, reps[i].Figures)
			lastDone = i
			if i < len(passed) && passed[i] {
				ok++
			}
		}
	}
	switch {
	case len(reps) == 0:
		return Step{}, nil
	case len(figures) == 0:
		return reps[len(reps)-1], nil
	case len(reps) == 1:
		return reps[0], nil
	}
	out := reps[lastDone]
	f, err := CombineFigures(figures)
	if err != nil {
		return out, err
	}
	out.Figures = f
	out.Repeat.Passed = ok
	return out, nil
}

// spreadOf collects each repeat's figures into a Repeat.
func spreadOf[T any](reps []T, figures func(T) map[string]float64) *Repeat {
	r := &Repeat{N: len(reps), CoVPct: map[string]float64{}, Values: map[string][]float64{}}
	for _, x := range reps {
		for k, v := range figures(x) {
			r.Values[k] = append(r.Values[k], v)
		}
	}
	for k, v := range r.Values {
		r.CoVPct[k] = CoV(v)
	}
	return r
}

// medianLatency takes the median of each percentile over the repeats and
// the largest maximum.
func medianLatency(l []metrics.Latency) metrics.Latency {
	pick := func(f func(metrics.Latency) float64) float64 { return Median(each(l, f)) }
	return metrics.Latency{
		P50: pick(func(x metrics.Latency) float64 { return x.P50 }), P90: pick(func(x metrics.Latency) float64 { return x.P90 }),
		P95: pick(func(x metrics.Latency) float64 { return x.P95 }), P99: pick(func(x metrics.Latency) float64 { return x.P99 }),
		P999: pick(func(x metrics.Latency) float64 { return x.P999 }), Mean: pick(func(x metrics.Latency) float64 { return x.Mean }),
		Max: slices.Max(each(l, func(x metrics.Latency) float64 { return x.Max })),
	}
}

func each[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
