package report

import (
	"fmt"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// Answer is what find's one-line answer is made of.
type Answer struct {
	// Search is what the search found.
	Search search.Result
	// Users says the levels are numbers of users (the closed model), not
	// rates.
	Users bool
	// Criteria is the SLO as the plan wrote it; empty judges steps by their
	// verdict alone.
	Criteria string
	// Terms are the SLO's terms, to say which failed.
	Terms []slo.Term
	// Result holds the steps the search ran, judged.
	Result *results.Result
}

// FindAnswer is find's one-line answer, e.g. "edge: 480/s at p99<50ms,
// errors<1%; 500/s fails: p99 1.2 s".
func FindAnswer(a Answer) string {
	r := a.Search
	if r.Outcome == search.Unfinished {
		var got []string
		if r.Edge > 0 {
			got = append(got, a.level(r.Edge)+" passed")
		}
		if r.FirstFail > 0 {
			got = append(got, a.level(r.FirstFail)+" failed")
		}
		if len(got) == 0 {
			got = append(got, "no level was judged")
		}
		return fmt.Sprintf("interrupted before the edge was found: %s, and the search had not narrowed and confirmed it", strings.Join(got, ", "))
	}
	criteria := a.Criteria
	if criteria == "" {
		criteria = "a verdict better than OVERLOADED"
	}
	fail := ""
	if r.FirstFail > 0 {
		fail = fmt.Sprintf("; %s fails: %s", a.level(r.FirstFail), a.whyFailed(r.FirstFail))
	}
	switch r.Outcome {
	case search.Edge:
		return fmt.Sprintf("edge: %s at %s%s%s", a.level(r.Edge), criteria, a.repeats(r.Edge), fail)
	case search.NoFailure:
		return fmt.Sprintf("no failure up to %s at %s: the edge is above it (raise --max)", a.level(r.Edge), criteria)
	case search.StartFails:
		return fmt.Sprintf("no passing level: even the start, %s, fails: %s", a.level(r.FirstFail), a.whyFailed(r.FirstFail))
	case search.GeneratorLimited:
		last := r.Probes[len(r.Probes)-1].Level
		return fmt.Sprintf("generator limit reached at %s: ceiling could not drive more, so this is not the target's edge (last passing level %s)", a.level(last), a.level(r.Edge))
	}
	return fmt.Sprintf("no edge confirmed within %d steps: the target's verdicts near %s are unstable (last passing level %s%s)", len(r.Probes), a.level(r.FirstFail), a.level(r.Edge), fail)
}

// repeats says in how many repeats the last step run at level passed, ""
// without repeats: with them, a level passes in the majority.
func (a Answer) repeats(level float64) string {
	st := a.last(level)
	if st == nil || st.Repeat == nil {
		return ""
	}
	return fmt.Sprintf(" (passed in %d of %d repeats)", st.Repeat.Passed, st.Repeat.N)
}

// last returns the last step run at level, nil if none was.
func (a Answer) last(level float64) *results.Step {
	var st *results.Step
	for i := range a.Result.Steps {
		x := &a.Result.Steps[i]
		if x.TargetRate == level || (a.Users && x.VUs == int(level)) {
			st = x
		}
	}
	return st
}

func (a Answer) level(v float64) string {
	if a.Users {
		return fmt.Sprintf("%.0f users", v)
	}
	return Rate(v)
}

// whyFailed names what failed in the last step run at level: the SLO
// terms, else the verdict, else the figures' validity.
func (a Answer) whyFailed(level float64) string {
	st := a.last(level)
	if st == nil {
		return "not run"
	}
	var why []string
	for _, t := range a.Terms {
		f, judged := a.Result.TermFigures(st, t)
		if v, ok := t.Eval(f); judged && !ok && (t.OfEvents() || t.LowerBound(f)) {
			why = append(why, termText(t, f, v))
		} else if judged && !ok {
			why = append(why, fmt.Sprintf("%s %s", t.Metric, TermValue(t.Metric, v)))
		}
	}
	if len(why) == 0 && st.VerdictReason != "" {
		why = append(why, st.VerdictReason)
	}
	if len(why) == 0 && a.Result.StepInvalid(st.Index) {
		why = append(why, "its figures cannot be trusted (see the warnings)")
	}
	if r := st.Repeat; r != nil {
		why = append(why, fmt.Sprintf("passed in %d of %d repeats", r.Passed, r.N))
	}
	return strings.Join(why, ", ")
}
