package run

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// ticking returns the executor's progress callback that passes each second
// of a step on as a report.Progress, or nil when nobody listens.
func ticking(on func(report.Progress)) func(load.Progress) {
	if on == nil {
		return nil
	}
	return func(p load.Progress) {
		t := p.Total
		errs := 0.0
		if c := t.Completed(); c > 0 {
			errs = float64(t.Failed()) / float64(c)
		}
		on(report.Progress{
			Index: p.Step.Index, Rate: p.Step.TargetRate(), VUs: p.Step.VUs,
			Warmup: p.Step.Warmup, Length: p.Step.Length, Elapsed: p.Elapsed, Warming: p.Warming,
			Achieved: p.Achieved, P50: metrics.Quantile(t.Latency, 0.5), P99: metrics.Quantile(t.Latency, 0.99),
			ErrorRate: errs, Completed: t.Completed(),
		})
	}
}

// done is a finished step's progress: its final figures.
func done(st load.Step, s *results.Step) report.Progress {
	return report.Progress{
		Index: s.Index, Rate: s.TargetRate, VUs: s.VUs, Warmup: st.Warmup, Length: st.Length,
		Elapsed: time.Duration(s.DurationS * float64(time.Second)), Done: true,
		Achieved: s.AchievedRate, P50: s.LatencyMS.P50, P99: s.LatencyMS.P99, ErrorRate: s.ErrorRate,
		Completed: s.Completed,
	}
}
