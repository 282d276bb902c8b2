package run

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/delivery"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// ticking returns the executor's progress callback that passes each second
// of a step on as a report.Progress, with its delivery when the plan has
// sinks (k, nil when not), or nil when nobody listens.
func ticking(on func(report.Progress), k *sinks) func(load.Progress) {
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
			ErrorRate: errs, Completed: t.Completed(), Delivery: liveDelivery(k, p.Step.Index),
		})
	}
}

// liveDelivery is how a running step's delivery stands, nil without sinks.
func liveDelivery(k *sinks, step int) *report.Delivery {
	if k == nil {
		return nil
	}
	c := k.now(step)
	return &report.Delivery{Expected: c.Expected, Delivered: c.Delivered, Backlog: c.Backlog}
}

// draining returns the ledger's drain callback that passes how the drain
// stands on as a report.Draining, with what arrived since the last call,
// or nil when nobody listens.
func draining(on func(report.Draining)) func(delivery.Draining) {
	if on == nil {
		return nil
	}
	var last delivery.Draining
	return func(d delivery.Draining) {
		on(report.Draining{
			Elapsed: d.Elapsed, Timeout: d.Timeout, Missing: d.Missing,
			Arrived: d.Arrived - last.Arrived,
		})
		last = d
	}
}

// done is a finished step's progress: its final figures.
func done(st load.Step, s *results.Step) report.Progress {
	p := report.Progress{
		Index: s.Index, Rate: s.TargetRate, VUs: s.VUs, Warmup: st.Warmup, Length: st.Length,
		Elapsed: time.Duration(s.DurationS * float64(time.Second)), Done: true,
		Achieved: s.AchievedRate, P50: s.LatencyMS.P50, P99: s.LatencyMS.P99, ErrorRate: s.ErrorRate,
		Completed: s.Completed,
	}
	if d := s.Delivery; d != nil {
		p.Delivery = &report.Delivery{Expected: d.Expected, Delivered: d.Delivered}
		if d.AtStepEnd != nil {
			p.Delivery.Delivered = *d.AtStepEnd
		}
		if d.BacklogEnd != nil {
			p.Delivery.Backlog = *d.BacklogEnd
		}
	}
	return p
}
