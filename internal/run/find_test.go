package run

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// capacity is a fake target that answers at most rate requests a second
// (a token bucket with a 20 ms burst), each in a millisecond, and 503
// past it: a target whose capacity is known. Make it inside the bubble.
func capacity(rate float64) *answers {
	var mu sync.Mutex
	tokens, last := rate*0.02, time.Now()
	return answering(func(req *transport.Request, out *transport.Outcome) {
		mu.Lock()
		now := time.Now()
		tokens = min(rate*0.02, tokens+now.Sub(last).Seconds()*rate)
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		time.Sleep(time.Millisecond)
		if !ok {
			status(req, out, 503, "")
			return
		}
		status(req, out, 200, "ok")
	})
}

// find opens a session of p against ex and searches it as ceiling find
// does with flags f.
func find(t *testing.T, p *plan.Plan, ex transport.Exchanger, f SearchFlags) *results.Result {
	t.Helper()
	cfg, err := f.Config(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), p, Options{Exchanger: ex, GoTimer: true, RefusedStops: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := Find(t.Context(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A search on a target of known capacity (200/s) finds it within the
// precision (10 %), confirms it with a step at the edge, and its answer
// names what failed above it.
func TestFindKnownCapacity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := quickPlan(t, "errors<1%", 600*time.Millisecond, 200*time.Millisecond, 1)
		res := find(t, p, capacity(200), SearchFlags{Start: "50", Precision: "10%"})
		if res.Edge == nil || res.Edge.Rate < 200*0.9 || res.Edge.Rate > 200 || !res.Passed {
			t.Fatalf("edge = %+v (passed %v), want 200/s within 10%% below; %d steps", res.Edge, res.Passed, len(res.Steps))
		}
		if answer := report.FindAnswer(res); !strings.HasPrefix(answer, "edge: ") || !strings.Contains(answer, "fails: errors") {
			t.Errorf("answer %q, want the edge and the errors that failed above it", answer)
		}
		confirm := res.Steps[res.Edge.Step]
		if confirm.TargetRate != res.Edge.Rate || confirm.SLOPassed == nil || !*confirm.SLOPassed {
			t.Errorf("edge step %d = %v/s, slo %v; want the confirming step at the edge", res.Edge.Step, confirm.TargetRate, confirm.SLOPassed)
		}
	})
}

// When even the start fails the search has no edge, does not pass, and
// says why.
func TestFindStartFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := quickPlan(t, "errors<1%", 400*time.Millisecond, 0, 1)
		res := find(t, p, capacity(20), SearchFlags{Start: "100", Precision: "5%"})
		if res.Edge != nil || res.Passed {
			t.Errorf("edge %+v, passed %v; want none", res.Edge, res.Passed)
		}
		if answer := report.FindAnswer(res); !strings.Contains(answer, "even the start, 100/s, fails: errors") {
			t.Errorf("answer %q, want the start's failure and the reason", answer)
		}
	})
}

// In the closed model the search is over numbers of users: a target that
// serves 6 requests at a time and refuses the 7th has its edge at 6 users.
func TestFindUsers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		slots := make(chan struct{}, 6)
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			select {
			case slots <- struct{}{}:
				time.Sleep(5 * time.Millisecond)
				<-slots
				status(req, out, 200, "ok")
			default:
				time.Sleep(time.Millisecond)
				status(req, out, 503, "")
			}
		})
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: {vus: [1], step: 400ms, warmup: 100ms}\nslo: errors<1%%\nscenarios: [{request: {url: /}}]\n")
		res := find(t, p, ex, SearchFlags{Start: "1", Precision: "5%"})
		if res.Edge == nil || res.Edge.VUs != 6 || !res.Passed {
			t.Errorf("edge = %+v, passed %v; want 6 users", res.Edge, res.Passed)
		}
	})
}

// A search with repeats runs each probe three times, with new users each
// time: a level passes in the majority of them, and the answer says in
// how many.
func TestFindRepeats(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := quickPlan(t, "errors<1%", 400*time.Millisecond, 100*time.Millisecond, 1)
		p.Repeat = 3
		res := find(t, p, capacity(200), SearchFlags{Start: "50", Max: "400", Precision: "30%"})
		if res.Edge == nil || res.Edge.Rate > 200 {
			t.Fatalf("edge = %+v, want at most the target's 200/s", res.Edge)
		}
		for i, s := range res.Steps {
			if s.Repeat == nil || s.Repeat.N != 3 {
				t.Errorf("step %d: repeat %+v, want 3 repeats", i+1, s.Repeat)
			}
		}
		edge := res.Steps[res.Edge.Step].Repeat
		if want := fmt.Sprintf("(passed in %d of 3 repeats)", edge.Passed); !strings.Contains(report.FindAnswer(res), want) || edge.Passed < 2 {
			t.Errorf("answer %q lacks %q, or the edge passed in fewer than 2 of 3", report.FindAnswer(res), want)
		}
	})
}
