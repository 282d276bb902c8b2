package results

import (
	"math"
	"slices"
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
