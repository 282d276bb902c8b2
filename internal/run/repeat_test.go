package run

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// A plan repeated 3 times runs its stairs three times: each step's figures
// are the medians over the repeats, with their spread (values, CoV,
// histograms) in the result and in the table, its counts the repeats'
// sums. A steady target spreads nothing, and a single run's p50 is the
// repeats' median. Each repeat after the first is noted.
func TestRepeatMedians(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := quickPlan(t, "", 400*time.Millisecond, 100*time.Millisecond, 20, 40)
		p.Repeat = 3
		rec := newRecorder(2)
		res, err := runPlan(t, p, Options{Exchanger: newServer(10, 5*time.Millisecond), GoTimer: true, OnNote: rec.note})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Steps) != 2 || !res.Passed {
			t.Fatalf("%d steps, passed %v; want the 2 levels (each over 3 repeats), passed", len(res.Steps), res.Passed)
		}
		for i, s := range res.Steps {
			rep := s.Repeat
			if rep == nil || rep.N != 3 || len(rep.Values["p50"]) != 3 || len(rep.Histograms) != 3 || rep.Passed != 3 {
				t.Fatalf("step %d: repeat %+v, want 3 repeats, all passed", i+1, rep)
			}
			if got, want := s.LatencyMS.P50, results.Median(rep.Values["p50"]); got != want || got < 5 || got > 5.01 {
				t.Errorf("step %d: p50 %v, want the median of %v, the target's 5 ms", i+1, got, rep.Values["p50"])
			}
			if want := 3 * int64(s.TargetRate*0.4); s.Completed != want {
				t.Errorf("step %d: %d completed, want the 3 repeats' sum, %d", i+1, s.Completed, want)
			}
			if c, r := rep.CoVPct["p50"], rep.CoVPct["achieved_rate"]; c != 0 || r != 0 {
				t.Errorf("step %d: CoV of p50 %.2f%% over %v, of the achieved rate %.2f%% over %v; want none from a steady target", i+1, c, rep.Values["p50"], r, rep.Values["achieved_rate"])
			}
		}
		one := quickPlan(t, "", 400*time.Millisecond, 100*time.Millisecond, 20)
		single, err := runPlan(t, one, Options{Exchanger: newServer(10, 5*time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, med := single.Steps[0].LatencyMS.P50, res.Steps[0].LatencyMS.P50; got != med {
			t.Errorf("a single run's p50 %v ms, the repeats' median %v ms: want them equal", got, med)
		}
		if text := table(t, res); !strings.Contains(text, "median of 3 repeats") || !strings.Contains(text, " ±") {
			t.Errorf("table without the repeats' spread:\n%s", text)
		}
		if notes := rec.shown(); !strings.Contains(notes, "repeat 2 of 3") || !strings.Contains(notes, "repeat 3 of 3") {
			t.Errorf("notes %q, want each repeat after the first", notes)
		}
	})
}

// Each repeat starts clean, with new users and so new connections: 2
// users × 3 repeats open 6 sessions on the target, besides the
// preflight's.
func TestRepeatNewUsers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: {vus: [2], step: 200ms, warmup: 0s, think: 10ms}\nrepeat: 3\nscenarios: [{request: {url: /}}]\n")
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			time.Sleep(time.Millisecond)
			status(req, out, 200, "")
		})
		s, err := Open(t.Context(), p, Options{Exchanger: ex, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		opened := ex.sessions.Load()
		res, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := ex.sessions.Load() - opened; n != 6 {
			t.Errorf("%d sessions for 2 users × 3 repeats, want 6 (each repeat's users connect anew)", n)
		}
		if rep := res.Steps[0].Repeat; rep == nil || rep.N != 3 {
			t.Errorf("repeat = %+v, want 3", rep)
		}
	})
}
