package outputs

import (
	"fmt"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// The JUnit report's SLO terms: their cases, and how a term that failed
// says so, with the value it measured.

// thresholdCase is an SLO term's case, judged over the run as result.json
// records it (a term holds only if it holds in every judged step): it
// fails naming each step it failed in, with the value measured there.
func thresholdCase(r *results.Result, th results.Threshold) junitCase {
	c := junitCase{Name: "slo: " + th.Expr, Classname: JUnitSLO}
	ts, err := slo.Parse(th.Expr)
	parsed := err == nil && len(ts) == 1
	if th.OK {
		if parsed {
			c.SystemOut = "held in every judged step; worst: " + termMeasure(ts[0], th.Value)
		}
		return c
	}
	var why []string
	switch {
	case !parsed:
		why = append(why, fmt.Sprintf("worst value %g", th.Value))
	case ts[0].OfEvents():
		f := r.EventFigures(-1)
		v, _ := ts[0].Eval(f)
		why = append(why, termFailure(ts[0], f, v))
	default:
		for i := range r.Steps {
			s := &r.Steps[i]
			if s.Interrupted {
				continue
			}
			if f, ok := termFigures(r, s, ts[0]); ok {
				if v, held := ts[0].Eval(f); !held {
					why = append(why, fmt.Sprintf("step %d (%s): %s", s.Index+1, strings.TrimPrefix(stepName(s), fmt.Sprintf("step %d: ", s.Index+1)), termFailure(ts[0], f, v)))
				}
			}
		}
		if len(why) == 0 {
			why = append(why, "no finished step to judge it on")
		}
	}
	c.Failure = &junitProblem{Type: failThreshold, Message: th.Expr + " failed: " + strings.Join(why, "; "), Text: strings.Join(why, "\n")}
	return c
}

// termsOf returns the SLO's terms, parsed back from the thresholds the run
// evaluated (each threshold is one term's text).
func termsOf(r *results.Result) []slo.Term {
	var out []slo.Term
	for _, th := range r.Thresholds {
		if ts, err := slo.Parse(th.Expr); err == nil {
			out = append(out, ts...)
		}
	}
	return out
}

// termFigures returns what term t reads in step s, as Evaluate judges it;
// false when t does not judge s: a term of another scenario than the one
// the step ran alone (load.each), or a recovery term in a step without
// events.
func termFigures(r *results.Result, s *results.Step, t slo.Term) (slo.Figures, bool) {
	if t.Scenario != "" && s.Scenario != "" && s.Scenario != t.Scenario {
		return slo.Figures{}, false
	}
	return r.TermFigures(s, t)
}

// termFailure says how term t failed on figures f, on which it measured
// v: "p99 312 ms > 200 ms", "errors 3.10% > 1.00%", or why there was no
// evidence: "p99: no samples".
func termFailure(t slo.Term, f slo.Figures, v float64) string {
	name := termName(t)
	if why := noEvidence(t, f); why != "" {
		return name + ": " + why
	}
	if t.LowerBound(f) {
		return fmt.Sprintf("%s ≥ %s (%d of %d ids delivered, the missing counted at their wait so far): not proven %s %s",
			name, report.TermValue(t.Metric, v), f.Arrived, f.Expected, t.Op, report.TermValue(t.Metric, t.Value))
	}
	rel := "="
	switch {
	case v > t.Value:
		rel = ">"
	case v < t.Value:
		rel = "<"
	}
	return fmt.Sprintf("%s %s %s %s", name, report.TermValue(t.Metric, v), rel, report.TermValue(t.Metric, t.Value))
}

// termMeasure is a term's metric and a value of it: "p99 182 ms".
func termMeasure(t slo.Term, v float64) string {
	return termName(t) + " " + report.TermValue(t.Metric, v)
}

// termName is a term's metric, with its scenario: "p99", "send.errors".
func termName(t slo.Term) string {
	if t.Scenario != "" {
		return t.Scenario + "." + t.Metric
	}
	return t.Metric
}

// noEvidence says why t had nothing to judge on f (slo.Term.Eval then
// fails it whatever its bound), "" when it had.
func noEvidence(t slo.Term, f slo.Figures) string {
	switch {
	case t.OfEvents() && f.Events == 0:
		return "no event happened"
	case t.OfEvents() && f.Unrecovered > 0:
		return fmt.Sprintf("%d of %d events did not recover", f.Unrecovered, f.Events)
	case t.OfEvents():
		return ""
	case t.Metric == "delivered" && f.Expected == 0:
		return "no delivery expected"
	case strings.HasPrefix(t.Metric, "delivery_") && f.Arrived == 0 && f.DeliveryUpper == nil:
		return "nothing delivered"
	case t.Metric == "rate" && f.Target <= 0:
		return "no target rate"
	case f.Completed == 0:
		return "no samples (no exchange completed)"
	}
	return ""
}
