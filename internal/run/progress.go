package run

import (
	"github.com/ceiling-dev/ceiling/internal/delivery"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// ticking returns the executor's progress callback that passes each second
// of a step on as a Progress, with its delivery when the plan has sinks (k,
// nil when not), or nil when no output follows the step.
func ticking(outs []ProgressOutput, k *sinks) func(load.Progress) {
	if len(outs) == 0 {
		return nil
	}
	return func(p load.Progress) {
		t := p.Total
		errs := 0.0
		if c := t.Completed(); c > 0 {
			errs = float64(t.Failed()) / float64(c)
		}
		now := &results.Progress{
			Index: p.Step.Index, Rate: p.Step.TargetRate(), VUs: p.Step.VUs,
			Warmup: p.Step.Warmup, Length: p.Step.Length, Elapsed: p.Elapsed, Warming: p.Warming,
			Achieved: p.Achieved, P50: metrics.Quantile(t.Latency, 0.5), P99: metrics.Quantile(t.Latency, 0.99),
			ErrorRate: errs, Completed: t.Completed(), Delivery: liveDelivery(k, p.Step.Index),
		}
		for _, o := range outs {
			o.Progress(now)
		}
	}
}

// liveDelivery is how a running step's delivery stands, nil without sinks.
func liveDelivery(k *sinks, step int) *results.DeliveryNow {
	if k == nil {
		return nil
	}
	c := k.now(step)
	return &results.DeliveryNow{Expected: c.Expected, Delivered: c.Delivered, Backlog: c.Backlog}
}

// draining returns the ledger's drain callback that passes how the drain
// stands on as a Draining, with what arrived since the last call, or nil
// when no output follows it.
func draining(outs []ProgressOutput) func(delivery.Draining) {
	if len(outs) == 0 {
		return nil
	}
	var last delivery.Draining
	return func(d delivery.Draining) {
		now := &results.Draining{Elapsed: d.Elapsed, Timeout: d.Timeout, Missing: d.Missing, Arrived: d.Arrived - last.Arrived}
		for _, o := range outs {
			o.Drain(now)
		}
		last = d
	}
}
