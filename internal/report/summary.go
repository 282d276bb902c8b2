package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// level is a step's load as a number: its target rate, or its users in the
// closed model.
func level(s results.Step) float64 {
	if s.Model == "closed" {
		return float64(s.VUs)
	}
	return s.TargetRate
}

// judged returns the steps that were judged (results.Step.Pass), sorted
// by level (a find runs them out of order; with load.each, within each
// scenario's stairs), each with whether it passed: HEALTHY or STRESSED
// and its SLO held, as the run's outcome counts them.
func judged(r *results.Result) ([]results.Step, []bool) {
	var steps []results.Step
	for _, s := range r.Steps {
		if _, ok := s.Pass(); ok {
			steps = append(steps, s)
		}
	}
	group := map[string]int{} // load.each: each scenario's stairs apart, in run order
	for _, s := range steps {
		if _, ok := group[s.Scenario]; !ok {
			group[s.Scenario] = len(group)
		}
	}
	slices.SortStableFunc(steps, func(a, b results.Step) int {
		return cmp.Or(cmp.Compare(group[a.Scenario], group[b.Scenario]), cmp.Compare(level(a), level(b)))
	})
	passed := make([]bool, len(steps))
	for i := range steps {
		passed[i], _ = steps[i].Pass()
	}
	return steps, passed
}

// Summary is a run's one-line answer, the counterpart of find's: the
// highest step that passed its SLO and verdict, or that none did, e.g.
// "highest step that passed: 400/s (step 2); 800/s (step 3) failed: p99
// 3.90 s, errors 16.7%". It is empty for a find (whose answer is in
// Search) and for a run with no judged step.
func Summary(r *results.Result) string {
	if r.Search != nil {
		return ""
	}
	if r.Soak != nil {
		return SoakAnswer(r)
	}
	steps, passed := judged(r)
	if len(steps) == 0 {
		return ""
	}
	// With load.each, each scenario ran its own stairs: one answer each.
	var parts []string
	for start := 0; start < len(steps); {
		end := start + 1
		for end < len(steps) && steps[end].Scenario == steps[start].Scenario {
			end++
		}
		line := summarize(r, steps[start:end], passed[start:end])
		if sc := steps[start].Scenario; sc != "" {
			line = sc + ": " + line
		}
		parts = append(parts, line)
		start = end
	}
	return strings.Join(parts, "; ")
}

// summarize answers for one stairs, in run order: the highest step that
// passed with every step before it passing, and the first that failed; a
// step that passed after one failed does not hide that failure.
func summarize(r *results.Result, steps []results.Step, passed []bool) string {
	first := slices.Index(passed, false)
	var b strings.Builder
	switch {
	case first == 0 && count(passed) == 0:
		b.WriteString("no step passed")
	case first == 0:
		b.WriteString("the first step did not pass")
	case first < 0:
		last := steps[len(steps)-1]
		fmt.Fprintf(&b, "highest step that passed: %s (step %d)", levelOf(last), last.Index+1)
		return b.String()
	default:
		ok := steps[first-1]
		fmt.Fprintf(&b, "highest step that passed: %s (step %d)", levelOf(ok), ok.Index+1)
	}
	f := steps[first]
	fmt.Fprintf(&b, "; %s (step %d) failed: %s", levelOf(f), f.Index+1, whyFailed(r, &f))
	if n := count(passed[first+1:]); n > 0 {
		fmt.Fprintf(&b, " (%d later steps passed after it)", n)
	}
	return b.String()
}

// count counts the true values.
func count(v []bool) int {
	n := 0
	for _, x := range v {
		if x {
			n++
		}
	}
	return n
}

// whyFailed names what failed in step s: the SLO's terms that did not
// hold there (read back from the result's thresholds), else its verdict's
// reason, else the figures' validity.
func whyFailed(r *results.Result, s *results.Step) string {
	var why []string
	for _, t := range terms(r) {
		f, judged := r.TermFigures(s, t)
		if v, ok := t.Eval(f); judged && !ok {
			why = append(why, termText(t, f, v))
		}
	}
	if len(why) == 0 && s.VerdictReason != "" {
		why = append(why, s.VerdictReason)
	}
	if r := s.Repeat; r != nil {
		why = append(why, fmt.Sprintf("passed in %d of %d repeats", r.Passed, r.N))
	}
	if len(why) == 0 {
		return "see its verdict"
	}
	return strings.Join(why, ", ")
}

// terms are the SLO's terms, parsed back from the thresholds the run
// evaluated (each threshold is one term's text).
func terms(r *results.Result) []slo.Term {
	var out []slo.Term
	for _, th := range r.Thresholds {
		if ts, err := slo.Parse(th.Expr); err == nil {
			out = append(out, ts...)
		}
	}
	return out
}

// termText is a term's metric and its value in a step, read from f:
// "p99 3.90 s", "recovery 2.00 s", "recovery: an event did not recover".
func termText(t slo.Term, f slo.Figures, v float64) string {
	name := t.Metric
	if t.Scenario != "" {
		name = t.Scenario + "." + name
	}
	if t.OfEvents() && f.Unrecovered > 0 {
		return fmt.Sprintf("%s: %d of %d events did not recover", name, f.Unrecovered, f.Events)
	}
	if t.LowerBound(f) {
		return fmt.Sprintf("%s ≥ %s (%d of %d delivered)", name, TermValue(t.Metric, v), f.Arrived, f.Expected)
	}
	return name + " " + TermValue(t.Metric, v)
}

// BrokeFirst says what broke first from the result alone: at the lowest
// level that failed, which of the SLO's terms failed and which held, and
// how the target's gauges and CPU moved from the highest level below it
// that passed. It is empty when no step failed. The demo, which knows its
// target's design, tells the same story in that design's terms (DemoStory).
func BrokeFirst(r *results.Result) string {
	steps, passed := judged(r)
	fail := slices.Index(passed, false)
	if fail < 0 {
		return ""
	}
	s := &steps[fail]
	var b strings.Builder
	fmt.Fprintf(&b, "What broke first, at %s (step %d): %s.", levelOf(*s), s.Index+1, whyFailed(r, s))
	var held []string
	for _, t := range terms(r) {
		f, judged := r.TermFigures(s, t)
		if v, ok := t.Eval(f); judged && ok {
			held = append(held, termText(t, f, v))
		}
	}
	if len(held) > 0 {
		fmt.Fprintf(&b, " What held there: %s.", strings.Join(held, ", "))
	}
	if d := s.Delivery; d != nil && d.Expected > 0 {
		n := d.Delivered
		when := "in the end"
		if d.AtStepEnd != nil {
			n, when = *d.AtStepEnd, "by the step's end"
		}
		fmt.Fprintf(&b, " %d of %d messages had been delivered %s.", n, d.Expected, when)
	}
	var prev *results.Step
	for i := fail - 1; i >= 0; i-- {
		if passed[i] {
			prev = &steps[i]
			break
		}
	}
	if prev != nil {
		if moved := targetMoves(prev, s); len(moved) > 0 {
			fmt.Fprintf(&b, " From %s, the highest level below it that passed: %s.", levelOf(*prev), strings.Join(moved, "; "))
		}
	}
	return b.String()
}

// targetMoves lists what grew on the target between two steps: its CPU,
// and the gauges whose highest value at least doubled (the three that grew
// most), e.g. "demo_queue_depth max 3 → 412".
func targetMoves(from, to *results.Step) []string {
	var out []string
	if measured(from.Target) && measured(to.Target) {
		out = append(out, fmt.Sprintf("target CPU %.0f%% → %.0f%%", from.Target.CPUPct, to.Target.CPUPct))
	}
	if from.Target == nil || to.Target == nil {
		return out
	}
	type grown struct {
		name     string
		a, b, by float64
	}
	var gs []grown
	for name, m := range to.Target.Metrics {
		p, ok := from.Target.Metrics[name]
		if !ok || m.Counter || m.Max <= 2*p.Max || m.Max <= 0 {
			continue
		}
		by := math.Inf(1)
		if p.Max > 0 {
			by = m.Max / p.Max
		}
		gs = append(gs, grown{name, p.Max, m.Max, by})
	}
	slices.SortFunc(gs, func(x, y grown) int {
		return cmp.Or(cmp.Compare(y.by, x.by), cmp.Compare(x.name, y.name))
	})
	for _, g := range gs[:min(len(gs), 3)] {
		out = append(out, fmt.Sprintf("%s max %s → %s", g.name, MetricValue(g.name, g.a), MetricValue(g.name, g.b)))
	}
	return out
}
