package plan

import (
	"fmt"
	"math"
	"time"
)

// Steps returns how many steps the plan's result holds: one per rate or per
// number of virtual users, one for a ramp, each once per scenario with
// each (repeats run the same steps again).
func (p *Plan) Steps() int {
	l := &p.Load
	n := len(l.Rates)
	switch {
	case l.Soak != nil:
		return 1
	case p.Closed():
		n = len(l.VUs)
	case l.Ramp != nil:
		n = 1
	}
	if l.Each {
		n *= len(p.Scenarios) // the stairs once per scenario alone
	}
	return n
}

// Duration returns the total planned time of the run: for each step, its
// warmup and its counted length (Load.Step, or Ramp.Over for a ramp). It
// saturates rather than overflow. Call it on a validated plan.
func (p *Plan) Duration() time.Duration {
	l := &p.Load
	warmup := DefaultWarmup
	if l.Warmup != nil {
		warmup = l.Warmup.Duration
	}
	step := l.Step.Duration
	switch {
	case l.Soak != nil:
		step = l.Soak.For.Duration
	case !p.Closed() && l.Ramp != nil:
		step = l.Ramp.Over.Duration
	}
	runs := max(p.Repeat, 1) // the stairs run once per repeat
	var total time.Duration
	for range runs * p.Steps() {
		total = addSat(addSat(total, warmup), step)
	}
	return total
}

// Closed reports whether the plan uses the closed model, also before
// Validate has filled the model in.
func (p *Plan) Closed() bool {
	return p.Load.Model == Closed || p.Load.Model == "" && len(p.Load.VUs) > 0
}

// addSat adds two non-negative durations, saturating at the largest one.
func addSat(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Describe says what a validated plan's load is and how long it takes,
// e.g. "3 steps at [50 100 200]/s, about 3m15s in all", with the wait for
// late deliveries when the plan has sinks.
func (p *Plan) Describe() string {
	var levels string
	switch {
	case p.Load.Soak != nil:
		levels = p.describeSoak()
	case len(p.Load.VUs) > 0:
		levels = fmt.Sprintf("%s of %v users", count(len(p.Load.VUs), "step"), p.Load.VUs)
	case p.Load.Ramp != nil:
		levels = fmt.Sprintf("a ramp from %g/s to %g/s", p.Load.Ramp.From, p.Load.Ramp.To)
	default:
		levels = fmt.Sprintf("%s at %v/s", count(len(p.Load.Rates), "step"), p.Load.Rates)
	}
	if p.Load.Each {
		levels += fmt.Sprintf(", for each of %s alone", count(len(p.Scenarios), "scenario"))
	}
	if p.Repeat > 1 {
		levels += fmt.Sprintf(", %d times", p.Repeat)
	}
	load := p.Duration().Round(time.Second)
	var drain time.Duration
	for _, k := range p.Sinks {
		drain = max(drain, k.Drain.Duration)
	}
	if drain > 0 {
		waits := time.Duration(max(p.Repeat, 1)) * drain // each repeat after the first waits for the last one's too
		return fmt.Sprintf("%s, about %v of load, then up to %v waiting for late deliveries (about %v in all at most)", levels, load, drain, addSat(load, waits).Round(time.Second))
	}
	return fmt.Sprintf("%s, about %v in all", levels, load)
}

// describeSoak says what a soak holds, for how long, in what windows.
func (p *Plan) describeSoak() string {
	k := p.Load.Soak
	level := fmt.Sprintf("%g/s", firstOr(p.Load.Rates))
	if p.Closed() {
		level = fmt.Sprintf("%d users", firstOr(p.Load.VUs))
	}
	return fmt.Sprintf("a soak at %s for %v in windows of %v (drifts projected to %v)", level, k.For.Duration, k.Window.Duration, k.Horizon.Duration)
}

// firstOr is the first of v, or zero.
func firstOr[T any](v []T) T {
	var zero T
	if len(v) == 0 {
		return zero
	}
	return v[0]
}

// count writes n and the noun, plural unless n is 1: "1 step", "3 steps".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
