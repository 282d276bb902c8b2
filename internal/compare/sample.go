package compare

import (
	"cmp"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// sample is one metric of one step (or scenario) of one side: its value in
// every repeat (one value for a single run), their median and CoV %.
type sample struct {
	values []float64
	median float64
	cov    float64
	n      int
}

// sampleOf returns the metric of step s, or of its scenario b when b is
// not nil: the repeats' values when the run was repeated, else the
// single run's figure.
func sampleOf(s *results.Step, b *results.Breakdown, metric string) sample {
	rep := s.Repeat
	if b != nil {
		rep = b.Repeat
	}
	if rep != nil {
		if v := finite(rep.Values[metric]); len(v) > 0 {
			cov, ok := rep.CoVPct[metric]
			if !ok {
				cov = results.CoV(v)
			}
			return sample{values: v, median: results.Median(v), cov: cov, n: len(v)}
		}
	}
	x := single(s, b, metric)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0
	}
	return sample{values: []float64{x}, median: x, n: 1}
}

// single returns a single run's figure of step s (or of its scenario b).
// A scenario's throughput is its OK and limited iterations per second of
// the step's window, its error rate failed ÷ completed.
func single(s *results.Step, b *results.Breakdown, metric string) float64 {
	if b == nil {
		switch metric {
		case results.MetricThroughput:
			return s.Throughput
		case results.MetricAchieved:
			return s.AchievedRate
		case results.MetricErrorRate:
			return s.ErrorRate
		case MetricDelivered, MetricDeliveryP50, MetricDeliveryP99:
			return deliveryFigure(s, metric)
		case MetricTargetCPU, MetricTargetRSS:
			if s.Target == nil {
				return math.NaN()
			}
			if metric == MetricTargetCPU {
				return s.Target.CPUPct
			}
			return s.Target.RSSMB
		}
		return percentile(s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99, metric)
	}
	switch metric {
	case results.MetricThroughput, results.MetricAchieved:
		if s.DurationS <= 0 {
			return 0
		}
		return float64(b.OK+b.Limited) / s.DurationS
	case results.MetricErrorRate:
		if b.Completed == 0 {
			return 0
		}
		return float64(b.Failed) / float64(b.Completed)
	}
	return percentile(b.LatencyMS.P50, b.LatencyMS.P95, b.LatencyMS.P99, metric)
}

// deliveryFigure is a step's delivered share (a fraction) or delivery
// latency percentile, as its SLO terms read them (results.Step.FiguresOf):
// delivered counts what had arrived by the step's end.
func deliveryFigure(s *results.Step, metric string) float64 {
	f := s.FiguresOf("")
	switch metric {
	case MetricDelivered:
		if f.Expected == 0 {
			return math.NaN()
		}
		return float64(f.Delivered) / float64(f.Expected)
	case MetricDeliveryP50:
		return f.Delivery.P50
	}
	return f.Delivery.P99
}

func percentile(p50, p95, p99 float64, metric string) float64 {
	switch metric {
	case results.MetricP50:
		return p50
	case results.MetricP95:
		return p95
	case results.MetricP99:
		return p99
	}
	return math.NaN()
}

// finite returns v without NaNs and infinities.
func finite(v []float64) []float64 {
	return slices.DeleteFunc(slices.Clone(v), func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
}

// rankTest returns the two-sided p-value of the Mann-Whitney U test of a
// against b, as benchstat computes it (benchmath.AssumeNothing: the exact
// distribution of U for small samples, a normal approximation past 50),
// and the U statistic of a. With ties benchmath doubles the smaller tail
// as if U were symmetric, which can pass 1: p is capped at 1. Samples that
// are all equal have p = 1.
func rankTest(a, b []float64) (p, u float64) {
	sa := benchmath.NewSample(slices.Clone(a), &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(slices.Clone(b), &benchmath.DefaultThresholds)
	return min(1, benchmath.AssumeNothing.Compare(sa, sb).P), uStatistic(a, b)
}

// uStatistic returns the Mann-Whitney U of a: the pairs (x in a, y in b)
// with x > y, a tie counting one half. U of b is len(a)·len(b) − U of a.
// It is R's W statistic of wilcox.test(a, b).
//
// It is computed from ranks, in O((n+m) log(n+m)): sort a and b together,
// give tied values their mean rank, and U = (the sum of a's ranks) −
// n(n+1)/2. Counting pairs would take n·m steps (30,000 repeats a side:
// a second a metric).
func uStatistic(a, b []float64) float64 {
	type value struct {
		x    float64
		from bool // from a
	}
	all := make([]value, 0, len(a)+len(b))
	for _, x := range a {
		all = append(all, value{x, true})
	}
	for _, y := range b {
		all = append(all, value{y, false})
	}
	slices.SortFunc(all, func(p, q value) int { return cmp.Compare(p.x, q.x) })
	var ranks float64 // of a's values, from 1
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].x == all[i].x {
			j++
		}
		mid := float64(i+1+j) / 2 // the mean of ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].from {
				ranks += mid
			}
		}
		i = j
	}
	n := float64(len(a))
	return ranks - n*(n+1)/2
}
