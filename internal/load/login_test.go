package load

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
)

// loginSet is a plan whose users log in (one request) before their one
// GET, compiled.
func loginSet(tb testing.TB) *scenario.Set {
	tb.Helper()
	p := &plan.Plan{
		Load:      plan.Load{Rates: []float64{1}},
		Login:     []plan.Step{{Request: plan.Request{Method: "POST", URL: "http://x.test/login"}}},
		Scenarios: []plan.Scenario{{Request: plan.Request{URL: "http://x.test/"}}},
	}
	if err := p.Validate(); err != nil {
		tb.Fatal(err)
	}
	s, err := scenario.Compile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// A user logs in once, at its first iteration: in a step's warm-up for the
// users the step adds. Those logins are the step's, however quiet its
// warm-up's seconds were (nothing in them is counted but the logins); the
// users that logged in during an earlier step are counted apart.
func TestLoginsOfTheWarmupAreTheSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []Step
	}{
		{"closed", []Step{{VUs: 10}, {VUs: 15}, {VUs: 15}}},
		{"open", []Step{{Rate: 100}, {Rate: 200}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{delay: constant(20 * time.Millisecond)}
				r := newRunner(t, f, func(c *Config) { c.Scenarios = loginSet(t); c.MaxWorkers = 4 })
				defer r.Close()
				users := 0 // of the steps so far
				for i, st := range tc.steps {
					st.Index, st.Warmup, st.Length = i, 2*time.Second, 2*time.Second
					res := r.Run(context.Background(), st)
					l := &res.Total.Logins
					before := users
					users = max(users, res.Workers)
					if got, want := l.Attempts(), int64(users-before); got != want || l.OK() != want {
						t.Errorf("step %d: login attempts, ok = %d, %d, want %d, %d: the logins of the step's new users, made in its warm-up",
							i+1, got, l.OK(), want, want)
					}
					if want := min(before, res.Workers); res.LoggedInEarlier != want {
						t.Errorf("step %d: logged in earlier = %d, want %d (of %d users)", i+1, res.LoggedInEarlier, want, res.Workers)
					}
					if l.Latency.TotalCount() != l.Attempts() {
						t.Errorf("step %d: login latencies = %d, want one per attempt (%d)", i+1, l.Latency.TotalCount(), l.Attempts())
					}
				}
			})
		})
	}
}
