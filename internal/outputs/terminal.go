package outputs

import (
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
func (t *Terminal) Progress(p *results.Progress) { t.live.Update(*p) }

// Step ends the step's line with its final figures: this run of it, not
// its repeats combined.
func (t *Terminal) Step(f *run.Finished) error {
	t.live.Update(f.Measured.Progress())
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
func (t *Terminal) Drain(d *results.Draining) { t.live.Drain(*d) }

// Stop does nothing: the table comes after, from the result.
func (t *Terminal) Stop(*results.Result) error { return nil }
