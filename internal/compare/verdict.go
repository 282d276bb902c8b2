package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// control checks the control scenario's changes between A and B, and
// when it moved, marks the host busy: every change that would have been
// significant is Suppressed instead, and the verdict is unknown.
//
// The control is judged by what says the host was slower or faster: its
// latency (p50, p95, p99), and its throughput only where that is its own
// measurement: when it ran alone (--each). In a mix its throughput is not
// its own (see Change.alone). Its error rate is not checked: one timeout
// of a static page is not a busy host.
//
// A figure moved when its change passes the same test as any change
// would: with 5 repeats a side the rank test (A's repeats against B's:
// the tolerance is their own spread), with 2 to 4 the CoV rule (beyond
// CoVFactor times the larger CoV), and in both the minimum effect and a
// latency's floor. Without repeats (no spread) a figure may move
// ControlTolerance percent, a latency at least its floor. The control's
// own changes are never significant: it gauges the host, it is not judged.
func (r *Report) control() {
	if r.Control == "" {
		return
	}
	seen, throughput, moved := false, false, false
	for i := range r.Changes {
		c := &r.Changes[i]
		if !c.Control {
			continue
		}
		seen = true
		wouldCount := c.Significant
		c.Significant = false // the control gauges the host; it is not judged
		if c.Metric == results.MetricErrorRate || c.Metric == results.MetricThroughput && !c.alone || !slices.Contains(Metrics, c.Metric) {
			continue // not the host's speed: errors, a share of a mix, deliveries, the target's CPU and memory
		}
		if c.answers < tailNeeds(c.Metric) {
			continue // a tail of too few answers: chance, not the host (thinControl says so)
		}
		throughput = throughput || c.Metric == results.MetricThroughput
		var why string
		switch c.Test {
		case TestNone:
			beyond := c.DeltaPct == nil || math.Abs(*c.DeltaPct) > ControlTolerance
			if !beyond || isLatency(c.Metric) && math.Abs(c.B-c.A) < c.FloorMS {
				continue
			}
			why = fmt.Sprintf("beyond %s %% without repeats", num(ControlTolerance))
		case TestRank:
			if !wouldCount {
				continue
			}
			why = fmt.Sprintf("p=%s over its repeats, CoV %.1f/%.1f %%", strconv.FormatFloat(*c.PValue, 'g', 2, 64), c.CoVA, c.CoVB)
		default:
			if !wouldCount {
				continue
			}
			why = fmt.Sprintf("beyond %s × its CoV %.1f %%", num(CoVFactor), max(c.CoVA, c.CoVB))
		}
		if isLatency(c.Metric) {
			why += ", past its floor " + results.Millis(c.FloorMS)
		}
		c.Moved, moved = true, true
		r.note("host busy: the control moved: %s%s %s → %s (%s, %s)",
			levelOf(c), scenarioText(c), value(c.Metric, c.A), value(c.Metric, c.B), deltaText(c), why)
	}
	if !seen {
		r.note("the control %q is not among the compared scenarios: it was not checked", r.Control)
		return
	}
	if moved {
		r.busy("the control moved") // once its own changes are no longer significant
		return
	}
	if !r.HostBusy {
		what := "latency (in a mix its throughput is not its own: it follows the other scenarios)"
		if throughput {
			what = "throughput and latency"
		}
		r.note("the control %q held: its %s", r.Control, what)
	}
}

// busy says compare cannot tell the host from the target, why, and keeps
// every change from counting: each that would have been significant is
// Suppressed.
func (r *Report) busy(why string) {
	if !r.HostBusy {
		r.Why = why
	}
	r.HostBusy = true
	r.suppress(func(*Change) bool { return true })
}

// suppress marks the significant changes that which selects Suppressed.
func (r *Report) suppress(which func(*Change) bool) {
	for i := range r.Changes {
		if c := &r.Changes[i]; c.Significant && which(c) {
			c.Significant, c.Suppressed = false, true
		}
	}
}

// host compares how busy the machine was during each result's steps,
// where both measured it (results.Generator.HostOtherPct, per repeat when
// kept): other processes' CPU that differs by more than HostBusyDelta, or
// a hypervisor's steal by more than HostStealDelta, is a busy host, the
// same as a control that moved, and a host measured busy on one side
// only is said.
func (r *Report) host(a, b *results.Result) {
	r.HostOtherA, r.HostStealA = hostLoad(a)
	r.HostOtherB, r.HostStealB = hostLoad(b)
	if r.HostOtherA == nil || r.HostOtherB == nil {
		return
	}
	oa, ob := *r.HostOtherA, *r.HostOtherB
	if math.Abs(ob-oa) > HostBusyDelta {
		r.busy(fmt.Sprintf("the host was not as busy in both: other processes used %.0f%% CPU during B's steps, %.0f%% during A's", ob, oa))
		r.note("host busy: other processes used %.0f%% of a core during B's steps and %.0f%% during A's (more than %.0f points apart): the target cannot be told from the machine", ob, oa, HostBusyDelta)
	}
	if r.HostStealA != nil && r.HostStealB != nil && math.Abs(*r.HostStealB-*r.HostStealA) > HostStealDelta {
		r.busy(fmt.Sprintf("the hypervisor took %.0f%% CPU during B's steps, %.0f%% during A's", *r.HostStealB, *r.HostStealA))
		r.note("host busy: the hypervisor stole %.0f%% of a core during B's steps and %.0f%% during A's", *r.HostStealB, *r.HostStealA)
	}
}

// hostLoad is the median over r's steps (each repeat's, when kept) of the
// CPU other processes used and of the steal; nil when a step was not
// measured.
func hostLoad(r *results.Result) (other, steal *float64) {
	var os, ss []float64
	for _, s := range r.Steps {
		g := s.Generator
		if g == nil || g.HostOtherPct == nil {
			return nil, nil
		}
		if v := s.Repeat; v != nil && len(v.Values[results.MetricHostOther]) > 0 {
			os = append(os, v.Values[results.MetricHostOther]...)
		} else {
			os = append(os, *g.HostOtherPct)
		}
		if g.HostStealPct != nil {
			ss = append(ss, *g.HostStealPct)
		}
	}
	if len(os) == 0 {
		return nil, nil
	}
	o := results.Median(os)
	other = &o
	if len(ss) == len(r.Steps) {
		st := results.Median(ss)
		steal = &st
	}
	return other, steal
}

// tailOnly keeps a change in the tail alone from being a confident
// "worse" where nothing tells a busier runner from a slower service (no
// control): when every significant change for the worse is a p95 or p99
// whose step and scenario kept their p50 and throughput, they are
// Suppressed, and compare cannot tell. A control that held, or a move of
// the median or the throughput, makes the change the service's.
func (r *Report) tailOnly() {
	if r.Control != "" || r.HostBusy {
		return
	}
	where := func(c *Change) string { return fmt.Sprint(c.Step, "\x00", c.StepScenario, "\x00", c.Scenario) }
	body := map[string]bool{} // a step and scenario whose p50 or throughput moved
	worse := 0
	for i := range r.Changes {
		c := &r.Changes[i]
		if !c.Significant {
			continue
		}
		if c.Metric == results.MetricP50 || c.Metric == results.MetricThroughput {
			body[where(c)] = true
		}
		if c.Direction == Worse {
			worse++
		}
	}
	tail := func(c *Change) bool {
		return c.Direction == Worse && (c.Metric == results.MetricP95 || c.Metric == results.MetricP99) && !body[where(c)]
	}
	n := 0
	for i := range r.Changes {
		if c := &r.Changes[i]; c.Significant && tail(c) {
			n++
		}
	}
	if worse == 0 || n < worse {
		return
	}
	r.TailOnly = true
	r.Why = "only the tail moved (p95, p99: p50 and throughput held), and without a control a busier runner looks the same as a slower service"
	r.suppress(tail)
	r.note("could not tell: %s; name a control: scenario (a static page) so that compare can tell them apart", r.Why)
}

// thresholds marks the changes that crossed a --threshold: the delta went
// the bad way by more than its limit (from 0, any move the bad way).
func (r *Report) thresholds(ts []Threshold) {
	for _, t := range ts {
		for i := range r.Changes {
			c := &r.Changes[i]
			if c.Control || c.Metric != t.Metric || !t.crossed(c) {
				continue
			}
			if c.Threshold == "" {
				c.Threshold = t.String()
			}
			r.Crossed = append(r.Crossed, fmt.Sprintf("%s: %s%s %s → %s (%s)",
				t, levelOf(c), scenarioText(c), value(c.Metric, c.A), value(c.Metric, c.B), deltaText(c)))
		}
	}
}

// verdict decides: unknown when the host was busy or nothing had a noise
// estimate; worse when any significant change is; better when any is;
// same otherwise. The control's changes are not the verdict's.
func (r *Report) verdict() {
	var tested, worse, better int
	for _, c := range r.Changes {
		if c.Control {
			continue
		}
		r.Comparisons++
		if c.Test != TestNone {
			tested++
		}
		if c.Significant && c.Direction == Worse {
			worse++
		}
		if c.Significant && c.Direction == Better {
			better++
		}
	}
	r.Tested = tested
	r.Test = testText(r.Changes, r.MinEffectPct, r.MinAbsMS)
	switch {
	case r.HostBusy || r.TailOnly || tested == 0:
		r.Verdict = Unknown
	case worse > 0:
		r.Verdict = Worse
	case better > 0:
		r.Verdict = Better
	default:
		r.Verdict = Same
	}
	if tested > 0 && tested < r.Comparisons {
		r.note("%d of %d comparisons had no noise estimate (a side with a single run, or a step's deliveries or target, kept once for all its repeats): deltas only", r.Comparisons-tested, r.Comparisons)
	}
}

// Failed reports whether the comparison should fail a CI job: a threshold
// was crossed, or (with failOnRegression) a significant change is worse.
func (r *Report) Failed(failOnRegression bool) bool {
	return len(r.Crossed) > 0 || failOnRegression && r.Verdict == Worse
}

// CouldNotTell reports whether the control moved where compare could
// otherwise have told a change from noise: a CI job gated on regressions
// should then neither pass nor fail as if it could (the cli's exit 4).
// Single runs tell nothing either way, control or not: they are never a
// regression, and never a "could not tell".
func (r *Report) CouldNotTell() bool {
	return (r.HostBusy || r.TailOnly) && r.Tested > 0
}

// The tests' rules, as reports state them.
const (
	rankRule = "Mann-Whitney U rank test (benchstat's), α = 0.05, with ≥ 5 repeats per side"
	covRule  = "the CoV rule: |Δ| > 2 × the larger side's CoV (from 0: B's median beyond A's range by more than 2 × the larger standard deviation), with 2–4 repeats per side"
	noneRule = "no noise estimate (use --repeat): deltas only"
	// figuresRule is for the step figures (StepMetrics) of repeated runs,
	// which keep one value per step.
	figuresRule = "deliveries and the target's CPU and memory, one figure per step: deltas only"
)

// testText states the tests the changes were judged by, the minimum
// effect and the latencies' floor.
func testText(cs []Change, minEffect, minAbsMS float64) string {
	used := map[string]bool{}
	figures := false
	for _, c := range cs {
		if c.Test == TestNone && slices.Contains(StepMetrics, c.Metric) {
			figures = true // stated apart, unless single runs leave everything untested
			continue
		}
		used[c.Test] = true
	}
	none := noneRule
	if figures && !used[TestNone] {
		used[TestNone], none = true, figuresRule
	}
	s := ""
	for _, t := range []struct{ name, rule string }{{TestRank, rankRule}, {TestCoV, covRule}, {TestNone, none}} {
		if !used[t.name] {
			continue
		}
		if s != "" {
			s += "; "
		}
		s += t.rule
	}
	if s == "" {
		return "nothing compared"
	}
	if used[TestRank] || used[TestCoV] {
		s += fmt.Sprintf("; a change counts only when it also exceeds %s %% (--min-effect), a latency only when it also moves by %s ms (--min-abs) or %s %% of its p50, whichever is larger, and by more than the histogram's resolution",
			num(minEffect), num(minAbsMS), num(100*FloorShareOfP50))
	}
	return s
}
