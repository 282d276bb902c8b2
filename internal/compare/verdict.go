package compare

import (
	"fmt"
	"math"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// control checks the control scenario's changes: when its throughput or a
// latency percentile moved by more than its own CoV (the larger side's;
// ControlTolerance without repeats), the host was busy and no other change
// is significant. The control's own changes are never significant: it
// gauges the host, it is not judged. Its error rate is not checked: one timeout of a static
// page is not a busy host.
func (r *Report) control() {
	if r.Control == "" {
		return
	}
	seen := false
	for i := range r.Changes {
		c := &r.Changes[i]
		if !c.Control {
			continue
		}
		seen = true
		c.Significant = false // the control gauges the host; it is not judged
		if c.Metric == "error_rate" {
			continue
		}
		tol, why := ControlTolerance, "10 % without repeats"
		if c.NA >= 2 && c.NB >= 2 {
			tol, why = max(c.CoVA, c.CoVB), fmt.Sprintf("its CoV %.1f %%", max(c.CoVA, c.CoVB))
		}
		latency := c.Metric != results.MetricThroughput
		if latency && math.Abs(c.B-c.A) < ControlFloorMS {
			continue // jitter, not a busy host
		}
		if c.DeltaPct == nil || math.Abs(*c.DeltaPct) > tol {
			c.Moved = true
			r.HostBusy = true
			r.note("host busy: the control moved: %s %q %s %s → %s (%s, beyond %s)",
				levelOf(c), c.Scenario, c.Metric, value(c.Metric, c.A), value(c.Metric, c.B), deltaText(c), why)
		}
	}
	if !seen {
		r.note("the control %q is not among the compared scenarios: it was not checked", r.Control)
	}
	if r.HostBusy {
		for i := range r.Changes {
			r.Changes[i].Significant = false
		}
	}
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
	r.Test = testText(r.Changes, r.MinEffectPct)
	switch {
	case r.HostBusy || tested == 0:
		r.Verdict = Unknown
	case worse > 0:
		r.Verdict = Worse
	case better > 0:
		r.Verdict = Better
	default:
		r.Verdict = Same
	}
	if tested > 0 && tested < r.Comparisons {
		r.note("%d of %d comparisons had no noise estimate (a side with a single run): deltas only", r.Comparisons-tested, r.Comparisons)
	}
}

// Failed reports whether the comparison should fail a CI job: a threshold
// was crossed, or (with failOnRegression) a significant change is worse.
func (r *Report) Failed(failOnRegression bool) bool {
	return len(r.Crossed) > 0 || failOnRegression && r.Verdict == Worse
}

// The tests' rules, as reports state them.
const (
	rankRule = "Mann-Whitney U rank test (benchstat's), α = 0.05, with ≥ 5 repeats per side"
	covRule  = "seed 003's CoV rule: |Δ| > 2 × the larger side's CoV (from 0: B's median beyond A's range by more than 2 × the larger standard deviation), with 2–4 repeats per side"
	noneRule = "no noise estimate (use --repeat): deltas only"
)

// testText states the tests the changes were judged by, and the minimum
// effect.
func testText(cs []Change, minEffect float64) string {
	used := map[string]bool{}
	for _, c := range cs {
		used[c.Test] = true
	}
	s := ""
	for _, t := range []struct{ name, rule string }{{TestRank, rankRule}, {TestCoV, covRule}, {TestNone, noneRule}} {
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
		s += fmt.Sprintf("; a change counts only when it also exceeds %s %% (--min-effect)", num(minEffect))
	}
	return s
}
