package report

import (
	"fmt"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// answer is what find's one-line answer is made of: the search's facts
// and the steps it ran, judged.
type answer struct {
	search *results.Search
	terms  []slo.Term
	result *results.Result
}

// FindAnswer is find's one-line answer, e.g. "edge: 480/s at p99<50ms,
// errors<1%; 500/s fails: p99 1.2 s", phrased from r's search (nothing when
// r has none). A result written before the search's facts were kept
// carries its answer as it was written, and that is returned.
func FindAnswer(r *results.Result) string {
	if r.Search == nil {
		return ""
	}
	if r.Search.Answer != "" {
		return r.Search.Answer
	}
	terms, _ := slo.Parse(r.Search.SLO) // the run parsed it before any step: it parses
	return answer{search: r.Search, terms: terms, result: r}.String()
}

// String phrases the answer.
func (a answer) String() string {
	r := a.search
	if r.Outcome == search.Unfinished.String() {
		var got []string
		if r.PassedLevel > 0 {
			got = append(got, a.level(r.PassedLevel)+" passed")
		}
		if r.FailedLevel > 0 {
			got = append(got, a.level(r.FailedLevel)+" failed")
		}
		if len(got) == 0 {
			got = append(got, "no level was judged")
		}
		return fmt.Sprintf("interrupted before the edge was found: %s, and the search had not narrowed and confirmed it", strings.Join(got, ", "))
	}
	criteria := r.SLO
	if criteria == "" {
		criteria = "a verdict better than OVERLOADED"
	}
	fail := ""
	if r.FailedLevel > 0 {
		fail = fmt.Sprintf("; %s fails: %s", a.level(r.FailedLevel), a.whyFailed(r.FailedLevel))
	}
	switch r.Outcome {
	case search.Edge.String():
		return fmt.Sprintf("edge: %s at %s%s%s", a.level(r.PassedLevel), criteria, a.repeats(r.PassedLevel), fail)
	case search.NoFailure.String():
		return fmt.Sprintf("no failure up to %s at %s: the edge is above it (raise --max)", a.level(r.PassedLevel), criteria)
	case search.StartFails.String():
		return fmt.Sprintf("no passing level: even the start, %s, fails: %s", a.level(r.FailedLevel), a.whyFailed(r.FailedLevel))
	case search.GeneratorLimited.String():
		return fmt.Sprintf("generator limit reached at %s: ceiling could not drive more, so this is not the target's edge (last passing level %s)", a.level(r.LastLevel), a.level(r.PassedLevel))
	}
	return fmt.Sprintf("no edge confirmed within %d steps: the target's verdicts near %s are unstable (last passing level %s%s)", r.Probes, a.level(r.FailedLevel), a.level(r.PassedLevel), fail)
}

// repeats says in how many repeats the last step run at level passed, ""
// without repeats: with them, a level passes in the majority.
func (a answer) repeats(level float64) string {
	st := a.last(level)
	if st == nil || st.Repeat == nil {
		return ""
	}
	return fmt.Sprintf(" (passed in %d of %d repeats)", st.Repeat.Passed, st.Repeat.N)
}

// last returns the last step run at level, nil if none was.
func (a answer) last(level float64) *results.Step {
	var st *results.Step
	for i := range a.result.Steps {
		x := &a.result.Steps[i]
		if x.TargetRate == level || (a.search.Users && x.VUs == int(level)) {
			st = x
		}
	}
	return st
}

func (a answer) level(v float64) string {
	if a.search.Users {
		return fmt.Sprintf("%.0f users", v)
	}
	return Rate(v)
}

// whyFailed names what failed in the last step run at level: the SLO
// terms, else the verdict, else the figures' validity.
func (a answer) whyFailed(level float64) string {
	st := a.last(level)
	if st == nil {
		return "not run"
	}
	var why []string
	for _, t := range a.terms {
		f, judged := a.result.TermFigures(st, t)
		if v, ok := t.Eval(f); judged && !ok && (t.OfEvents() || t.LowerBound(f)) {
			why = append(why, termText(t, f, v))
		} else if judged && !ok {
			why = append(why, fmt.Sprintf("%s %s", t.Metric, TermValue(t.Metric, v)))
		}
	}
	if len(why) == 0 && st.VerdictReason != "" {
		why = append(why, st.VerdictReason)
	}
	if r := st.Repeat; r != nil {
		why = append(why, fmt.Sprintf("passed in %d of %d repeats", r.Passed, r.N))
	}
	return strings.Join(why, ", ")
}
