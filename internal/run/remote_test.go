package run

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// trapRemote is a coordinator's agents that answered every request after a
// redirect: the merged step a login page would make.
type trapRemote struct{ base time.Time }

func (r *trapRemote) Step(_ context.Context, st load.Step) (results.Step, Window, error) {
	s := results.Step{Figures: results.Figures{Index: st.Index, Model: "open", TargetRate: st.Rate, DurationS: st.Length.Seconds(),
		Sent: 200, Iterations: 200, Completed: 200, OK: 200, Redirected: 200, AchievedRate: 100, Throughput: 100,
		Errors: map[string]int64{}, Warnings: []string{}, VerdictReasons: []string{}}, Agents: 2}
	now := time.Now()
	return s, Window{Start: now.Add(-st.Length), End: now}, nil
}
func (r *trapRemote) Fresh(context.Context) error { return nil }
func (r *trapRemote) Agents() []results.Agent     { return nil }
func (r *trapRemote) Base() time.Time             { return r.base }
func (r *trapRemote) Close()                      {}

// A run over agents is strict by default, as a run here is: answers after
// a redirect make its step INVALID and fail it, unless the plan says
// strict: false.
func TestRemoteRunIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		strict *bool
		passed bool
	}{
		{"by default", nil, false},
		{"strict: false", new(bool), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := quickPlan(t, "", time.Second, 0, 100)
			p.Strict = tc.strict
			s, err := Open(t.Context(), p, Options{Out: filepath.Join(t.TempDir(), "result.json"), Args: []string{"test"}, Remote: &trapRemote{base: time.Now()}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st, err := s.Step(t.Context(), Level(p, 100))
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Finish(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tc.passed || res.Outcome.Strict != (tc.strict == nil) {
				t.Errorf("step %s %q; run passed %v, outcome %+v; want passed %v, strict %v", st.Verdict, st.VerdictReasons, res.Passed, res.Outcome, tc.passed, tc.strict == nil)
			}
		})
	}
}
