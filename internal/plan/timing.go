package plan

import (
	"math"
	"time"
)

// Steps returns how many steps the plan runs: one per rate or per number of
// virtual users, and one for a ramp.
func (p *Plan) Steps() int {
	l := &p.Load
	switch {
	case p.closed():
		return len(l.VUs)
	case l.Ramp != nil:
		return 1
	}
	return len(l.Rates)
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
	if !p.closed() && l.Ramp != nil {
		step = l.Ramp.Over.Duration
	}
	var total time.Duration
	for range p.Steps() {
		total = addSat(addSat(total, warmup), step)
	}
	return total
}

// closed reports whether the plan uses the closed model, also before
// Validate has filled the model in.
func (p *Plan) closed() bool {
	return p.Load.Model == Closed || p.Load.Model == "" && len(p.Load.VUs) > 0
}

// addSat adds two non-negative durations, saturating at the largest one.
func addSat(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
