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

// Combine makes one step of the repeats of a level, in run order: counts
// summed, rates, error rate and latency percentiles the medians of the
// repeats' (a maximum the largest), the latency histograms merged, the
// per-second series of every repeat kept, and Repeat holding each figure's
// values and spread. Scenarios are combined the same way, by name. The
// last repeat gives what is not a figure of the repeats (model, level,
// window, target, deliveries, sockets, logins). Interrupted repeats are
// left out unless no other ran. One step is returned as it is; passed says
// whether each repeat passed (see Repeat.Passed).
func Combine(reps []Step, passed []bool) (Step, error) {
	done := make([]Step, 0, len(reps))
	ok := 0
	for i, s := range reps {
		if !s.Interrupted {
			done = append(done, s)
			if i < len(passed) && passed[i] {
				ok++
			}
		}
	}
	switch {
	case len(reps) == 0:
		return Step{}, nil
	case len(done) == 0:
		return reps[len(reps)-1], nil
	case len(reps) == 1:
		return reps[0], nil
	}
	out := done[len(done)-1]
	out.Interrupted = false
	out.Sent, out.Completed, out.OK, out.Limited, out.Failed = 0, 0, 0, 0, 0
	out.Late, out.NotSent, out.Retried, out.Redirected, out.RetryAfters = 0, 0, 0, 0, 0
	out.BytesIn, out.BytesOut = 0, 0
	out.Errors = map[string]int64{}
	out.Warnings, out.Notes, out.Status4xx = []string{}, nil, 0 // Series: the last repeat's seconds
	var hists []string
	for _, s := range done {
		out.Sent += s.Sent
		out.Completed += s.Completed
		out.OK += s.OK
		out.Limited += s.Limited
		out.Failed += s.Failed
		out.Late += s.Late
		out.NotSent += s.NotSent
		out.Retried += s.Retried
		out.Redirected += s.Redirected
		out.RetryAfters += s.RetryAfters
		out.BytesIn += s.BytesIn
		out.BytesOut += s.BytesOut
		out.MaxLagMS = max(out.MaxLagMS, s.MaxLagMS)
		out.Status4xx = metrics.SameStatus(out.Status4xx, s.Status4xx)
		out.RetryAfterS = max(out.RetryAfterS, s.RetryAfterS)
		for k, v := range s.Errors {
			out.Errors[k] += v
		}
		for _, w := range s.Warnings {
			if !slices.Contains(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w)
			}
		}
		hists = append(hists, s.Histogram)
	}
	figure := func(f func(Step) float64) float64 {
		v := make([]float64, len(done))
		for i, s := range done {
			v[i] = f(s)
		}
		return Median(v)
	}
	out.AchievedRate = figure(func(s Step) float64 { return s.AchievedRate })
	out.Throughput = figure(func(s Step) float64 { return s.Throughput })
	out.ErrorRate = figure(func(s Step) float64 { return s.ErrorRate })
	out.MeanLagMS = figure(func(s Step) float64 { return s.MeanLagMS })
	out.LatencyMS = medianLatency(done, func(s Step) metrics.Latency { return s.LatencyMS })
	out.ServiceMS = medianLatency(done, func(s Step) metrics.Latency { return s.ServiceMS })
	var err error
	if out.Histogram, err = mergeHistograms(hists); err != nil {
		return out, err
	}
	if out.ServiceHist, err = mergeHistograms(each(done, func(s Step) string { return s.ServiceHist })); err != nil {
		return out, err
	}
	out.Repeat = spread(done, func(s Step) map[string]float64 {
		return map[string]float64{
			MetricAchieved: s.AchievedRate, MetricThroughput: s.Throughput, MetricErrorRate: s.ErrorRate,
			MetricP50: s.LatencyMS.P50, MetricP95: s.LatencyMS.P95, MetricP99: s.LatencyMS.P99,
		}
	})
	out.Repeat.Histograms, out.Repeat.Passed = hists, ok
	out.Delivery = sumDeliveries(done)
	if out.Scenarios, err = combineScenarios(done); err != nil {
		return out, err
	}
	return out, nil
}

// combineScenarios combines the repeats' breakdowns by scenario name, in
// the order the last repeat lists them.
func combineScenarios(done []Step) ([]Breakdown, error) {
	last := done[len(done)-1].Scenarios
	out := make([]Breakdown, 0, len(last))
	for _, b := range last {
		var reps []Breakdown
		var durations []float64
		for _, s := range done {
			for _, x := range s.Scenarios {
				if x.Name == b.Name {
					reps = append(reps, x)
					durations = append(durations, s.DurationS)
				}
			}
		}
		c := b
		c.Completed, c.OK, c.Failed, c.Limited = 0, 0, 0, 0
		c.Errors = nil
		for _, x := range reps {
			c.Completed += x.Completed
			c.OK += x.OK
			c.Failed += x.Failed
			c.Limited += x.Limited
			for k, v := range x.Errors {
				if c.Errors == nil {
					c.Errors = map[string]int64{}
				}
				c.Errors[k] += v
			}
		}
		c.LatencyMS = medianLatency(reps, func(x Breakdown) metrics.Latency { return x.LatencyMS })
		c.AvgBodyBytes = Median(each(reps, func(x Breakdown) float64 { return x.AvgBodyBytes }))
		var err error
		if c.Histogram, err = mergeHistograms(each(reps, func(x Breakdown) string { return x.Histogram })); err != nil {
			return nil, err
		}
		i := 0
		c.Repeat = spread(reps, func(x Breakdown) map[string]float64 {
			d := durations[i]
			i++
			m := map[string]float64{MetricP50: x.LatencyMS.P50, MetricP95: x.LatencyMS.P95, MetricP99: x.LatencyMS.P99, MetricErrorRate: 0, MetricThroughput: 0}
			if x.Completed > 0 {
				m[MetricErrorRate] = float64(x.Failed) / float64(x.Completed)
			}
			if d > 0 {
				m[MetricThroughput] = float64(x.OK+x.Limited) / d
			}
			return m
		})
		out = append(out, c)
	}
	return out, nil
}

// spread collects each repeat's figures into a Repeat.
func spread[T any](reps []T, figures func(T) map[string]float64) *Repeat {
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
func medianLatency[T any](reps []T, of func(T) metrics.Latency) metrics.Latency {
	l := each(reps, of)
	pick := func(f func(metrics.Latency) float64) float64 { return Median(each(l, f)) }
	return metrics.Latency{
		P50: pick(func(x metrics.Latency) float64 { return x.P50 }), P90: pick(func(x metrics.Latency) float64 { return x.P90 }),
		P95: pick(func(x metrics.Latency) float64 { return x.P95 }), P99: pick(func(x metrics.Latency) float64 { return x.P99 }),
		P999: pick(func(x metrics.Latency) float64 { return x.P999 }), Mean: pick(func(x metrics.Latency) float64 { return x.Mean }),
		Max: slices.Max(each(l, func(x metrics.Latency) float64 { return x.Max })),
	}
}

// mergeHistograms merges encoded histograms (empty ones skipped).
func mergeHistograms(encoded []string) (string, error) {
	merged := metrics.NewHistogram()
	found := false
	for _, e := range encoded {
		if e == "" {
			continue
		}
		h, err := metrics.Decode(e)
		if err != nil {
			return "", err
		}
		merged.Merge(h)
		found = true
	}
	if !found {
		return "", nil
	}
	return metrics.Encode(merged)
}

func each[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// sumDeliveries adds the repeats' delivery counts (each repeat's own ids)
// and their backlogs at the windows' starts and ends;
// the latency and lost ids are the last repeat's until the drain's final
// figures replace them.
func sumDeliveries(done []Step) *Delivery {
	last := done[len(done)-1].Delivery
	if last == nil {
		return nil
	}
	out := *last
	out.Expected, out.Delivered, out.Lost, out.Undelivered, out.Duplicates, out.Rejected = 0, 0, 0, 0, 0, 0
	var atEnd, backlogStart, backlogEnd int64
	backlog := true
	for _, s := range done {
		d := s.Delivery
		if d == nil {
			continue
		}
		if d.BacklogStart != nil && d.BacklogEnd != nil {
			backlogStart += *d.BacklogStart
			backlogEnd += *d.BacklogEnd
		} else {
			backlog = false
		}
		out.Expected += d.Expected
		out.Delivered += d.Delivered
		out.Lost += d.Lost
		out.Undelivered += d.Undelivered
		out.Duplicates += d.Duplicates
		out.Rejected += d.Rejected
		if d.AtStepEnd != nil {
			atEnd += *d.AtStepEnd
		}
	}
	if last.AtStepEnd != nil {
		out.AtStepEnd = &atEnd
	}
	out.BacklogStart, out.BacklogEnd = nil, nil
	if backlog { // each repeat's growth, added up
		out.BacklogStart, out.BacklogEnd = &backlogStart, &backlogEnd
	}
	return &out
}
