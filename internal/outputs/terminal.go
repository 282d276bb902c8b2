package outputs

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// Terminal is the live line on the terminal as a run's output: a running
// step's progress each second, its final figures when it ends, a soak's
// windows as they end, and the wait for late deliveries (report.Live
// draws them).
type Terminal struct {
	live *report.Live
}

var (
	_ run.Output         = (*Terminal)(nil)
	_ run.ProgressOutput = (*Terminal)(nil)
	_ run.WindowOutput   = (*Terminal)(nil)
)

// NewTerminal returns the output that draws a run's progress with live.
func NewTerminal(live *report.Live) *Terminal { return &Terminal{live: live} }

// Start does nothing: the line begins with the first step.
func (t *Terminal) Start(*results.Result) error { return nil }

// Progress shows how the running step stands.
func (t *Terminal) Progress(p *run.Progress) {
	t.live.Update(report.Progress{
		Index: p.Index, Rate: p.Rate, VUs: p.VUs, Warmup: p.Warmup, Length: p.Length,
		Elapsed: p.Elapsed, Warming: p.Warming, Achieved: p.Achieved, P50: p.P50, P99: p.P99,
		ErrorRate: p.ErrorRate, Completed: p.Completed, Delivery: liveDelivery(p.Delivery),
	})
}

func liveDelivery(d *run.DeliveryNow) *report.Delivery {
	if d == nil {
		return nil
	}
	return &report.Delivery{Expected: d.Expected, Delivered: d.Delivered, Backlog: d.Backlog}
}

// Step ends the step's line with its final figures: this run of it, not
// its repeats combined.
func (t *Terminal) Step(f *run.Finished) error {
	s := f.Measured
	p := report.Progress{
		Index: s.Index, Rate: s.TargetRate, VUs: s.VUs,
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
	t.live.Update(p)
	return nil
}

// Window writes a soak's window as a line of its own.
func (t *Terminal) Window(res *results.Result) error {
	if line := report.WindowLine(res); line != "" {
		t.live.Window(line)
	}
	return nil
}

// Drain shows the wait for late deliveries after the load.
func (t *Terminal) Drain(d *run.Draining) {
	t.live.Drain(report.Draining{
		Elapsed: d.Elapsed, Timeout: d.Timeout, Missing: d.Missing, Arrived: d.Arrived,
		Done: d.Done, Complete: d.Complete,
	})
}

// Stop does nothing: the table comes after, from the result.
func (t *Terminal) Stop(*results.Result) error { return nil }
