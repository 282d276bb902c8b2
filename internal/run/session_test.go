package run

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/search"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

func TestMain(m *testing.M) {
	if os.Getenv(spinEnv) != "" {
		spin() // the test binary, started again as a CPU hog
		return
	}
	if soakChild() { // the test binary, started again as a soak's target
		return
	}
	if addr := os.Getenv(serverEnv); addr != "" {
		serveAndLog(addr, os.Getenv(serverLogEnv)) // the test binary, started again as a target
		return
	}
	if standIn() { // the test binary, started again as the demo target or as a run
		return
	}
	testkit.Own() // the soak's targets, in a shell's loop, end with the test binary
	flag.Parse()
	// The parallel tests wait on short steps of loopback load more than
	// they compute; those that run sessions side by side against servers
	// of their own, in this process, leave those servers a processor.
	testkit.ParallelWaits(8)
	testkit.LoopProcs(1)
	goleak.VerifyTestMain(m)
}

// server is a fake target of slots workers that each take service per
// request: it answers slots ÷ service requests a second, and past that a
// queue grows. Its time is the synctest bubble's.
type server struct {
	slots   chan struct{}
	service time.Duration
	kind    transport.Kind
}

func newServer(slots int, service time.Duration) *server {
	return &server{slots: make(chan struct{}, slots), service: service, kind: transport.OK}
}

func (s *server) Session() transport.Session { return s }
func (s *server) Close()                     {}
func (s *server) Do(_ *transport.Request, out *transport.Outcome) {
	if s.kind == transport.Refused {
		*out = transport.Outcome{Kind: transport.Refused}
		return
	}
	s.slots <- struct{}{}
	time.Sleep(s.service)
	<-s.slots
	*out = transport.Outcome{Kind: transport.OK, Status: 200, BytesIn: 2}
}

// quickPlan is a validated plan of one GET at rates, steps of length.
func quickPlan(t *testing.T, slo string, step, warmup time.Duration, rates ...float64) *plan.Plan {
	t.Helper()
	p := &plan.Plan{
		Target:    "http://127.0.0.1:1",
		Load:      plan.Load{Rates: rates, Step: plan.Duration{Duration: step}, Warmup: &plan.Duration{Duration: warmup}},
		Scenarios: []plan.Scenario{{Request: plan.Request{URL: "/"}}},
		SLO:       slo,
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// A whole session without sockets: open, three steps under the target's
// capacity of 400/s, then a search for the edge, which finishes it. Every
// step is on disk, numbered in the order run, and the edge is the
// capacity's within the precision.
func TestSessionStepsThenFind(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.json")
		rec := newRecorder(0)
		p := quickPlan(t, "p99<50ms, errors<1%", 2*time.Second, 500*time.Millisecond, 100)
		s, err := Open(t.Context(), p, Options{Out: out, Args: []string{"test"}, Exchanger: newServer(4, 10*time.Millisecond), GoTimer: true,
			Outputs: []Output{rec}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stepsUnderCapacity(t, s, p, out)
		res, err := Find(t.Context(), s, search.Config{Start: 200, Precision: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		checkFound(t, res, out, rec)
	})
}

// stepsUnderCapacity runs steps of 100, 200 and 300/s in s, each HEALTHY at
// its rate with the target's 10 ms p99, and each on disk in out as it
// ends.
func stepsUnderCapacity(t *testing.T, s *Session, p *plan.Plan, out string) {
	t.Helper()
	for _, rate := range []float64{100, 200, 300} {
		st, err := s.Step(t.Context(), Level(p, rate))
		if err != nil {
			t.Fatal(err)
		}
		if st.Verdict != results.Healthy || st.AchievedRate < 0.99*rate || st.AchievedRate > 1.01*rate || st.LatencyMS.P99 < 9.9 || st.LatencyMS.P99 > 10.1 {
			t.Errorf("step at %v/s: %s, achieved %v/s, p99 %v ms; want HEALTHY, %v/s, 10 ms", rate, st.Verdict, st.AchievedRate, st.LatencyMS.P99, rate)
		}
	}
	if on, _ := results.Read(out); on == nil || len(on.Steps) != 3 || on.Steps[2].Index != 2 || !on.Unfinished || on.Passed {
		t.Fatalf("result.json after three steps = %+v, want the three steps, unfinished, not passed", on)
	}
}

// checkFound checks the result of a search for an edge near 400/s: the
// edge, its answer and its step, the same on disk in out with every step
// numbered in the order run, and rec told of every step.
func checkFound(t *testing.T, res *results.Result, out string, rec *recorder) {
	t.Helper()
	if res.Edge == nil || res.Edge.Rate < 380 || res.Edge.Rate > 440 || !res.Passed || res.EndedAt == nil {
		t.Fatalf("edge = %+v, passed %v, ended %v; want an edge near 400/s, passed, ended", res.Edge, res.Passed, res.EndedAt)
	}
	if res.Command != "ceiling test" {
		t.Errorf("command = %q, want the arguments as a command line", res.Command)
	}
	answer := report.FindAnswer(res)
	if !strings.HasPrefix(answer, "edge: ") || !strings.Contains(answer, "fails: p99") {
		t.Errorf("answer = %q, want the edge and the p99 that failed above it", answer)
	}
	if edge := res.Steps[res.Edge.Step]; edge.TargetRate != res.Edge.Rate || edge.SLOPassed == nil || !*edge.SLOPassed {
		t.Errorf("the edge's step %d = %v/s, slo %v; want the edge's rate, passed", res.Edge.Step, edge.TargetRate, edge.SLOPassed)
	}
	on, err := results.Read(out)
	if err != nil || len(on.Steps) != len(res.Steps) || len(on.Steps) < 6 || on.Search == nil || report.FindAnswer(on) != answer || on.Unfinished || !on.Passed {
		t.Fatalf("result.json = %d steps (err %v), want the %d run, with the answer, finished and passed", len(on.Steps), err, len(res.Steps))
	}
	for i, st := range on.Steps {
		if st.Index != i {
			t.Errorf("step %d has index %d", i, st.Index)
		}
	}
	if len(rec.steps) != len(res.Steps) || rec.ticks < len(res.Steps) {
		t.Errorf("progress: %d ends and %d ticks for %d steps", len(rec.steps), rec.ticks, len(res.Steps))
	}
}

// 50/s for 2 s against a 250 ms endpoint: every request is sent on time and
// answered, so the step achieved 50/s and is STRESSED by its p95, not
// OVERLOADED because responses still in flight at the window's end were
// counted against the rate.
func TestSlowEndpointIsStressedNotOverloaded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := quickPlan(t, "", 2*time.Second, 0, 50)
		s, err := Open(t.Context(), p, Options{Exchanger: newServer(100, 250*time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		st := res.Steps[0]
		if st.AchievedRate != 50 || st.Verdict != results.Stressed || st.LatencyMS.P95 < 100 || st.LatencyMS.P95 > 500 {
			t.Errorf("achieved %v/s, p95 %v ms, verdict %s %q; want 50/s, STRESSED", st.AchievedRate, st.LatencyMS.P95, st.Verdict, st.VerdictReasons)
		}
		if len(st.VerdictReasons) != 1 || !strings.HasPrefix(st.VerdictReasons[0], "p95 250") {
			t.Errorf("verdict reasons = %q, want the p95", st.VerdictReasons)
		}
		// Responses of the first 250 ms end inside the window only from then on.
		if st.Throughput < 40 || st.Throughput > 45 {
			t.Errorf("throughput = %v/s, want ≈ 43.75 (the first 250 ms answer nothing)", st.Throughput)
		}
	})
}

// Two steps, 50/s and 100/s, of 600 ms after 200 ms of warm-up, against a
// target that answers in 20 ms: each step sends exactly its rate's share
// of the window, every latency and service time is the target's 20 ms,
// nothing fails, and each step keeps its series and histogram. The SLO's
// line in the table says whether p99 held, and the run passes exactly when
// it did; the command that reproduces the run is quoted for a shell.
func TestStepsHoldTheirRates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		slo, line string
		passed    bool
	}{
		{"p99<1s", "ok   p99<1s", true},
		{"p99<5ms", "FAIL p99<5ms", false},
	} {
		synctest.Test(t, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			p := quickPlan(t, tc.slo, 600*time.Millisecond, 200*time.Millisecond, 50, 100)
			res, err := runPlan(t, p, Options{Out: out, Args: []string{"run", "--rate", "50,100", "--slo", tc.slo}, Exchanger: newServer(100, 20*time.Millisecond), GoTimer: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Steps) != 2 || res.Passed != tc.passed || res.EndedAt == nil {
				t.Fatalf("%s: %d steps, passed %v, ended %v; want 2, %v, ended", tc.slo, len(res.Steps), res.Passed, res.EndedAt, tc.passed)
			}
			for _, s := range res.Steps {
				if want := int64(s.TargetRate * 0.6); s.Sent != want || s.Completed != want || s.Failed != 0 {
					t.Errorf("step %d: sent %d, completed %d, failed %d; want %d, %d, 0", s.Index, s.Sent, s.Completed, s.Failed, want, want)
				}
				if s.LatencyMS.P50 < 20 || s.LatencyMS.P50 > 20.1 || s.LatencyMS.P99 > 20.1 || s.ServiceMS.P50 < 20 || s.ServiceMS.P50 > 20.1 {
					t.Errorf("step %d: latency p50 %v p99 %v, service p50 %v ms; want the target's 20 ms", s.Index, s.LatencyMS.P50, s.LatencyMS.P99, s.ServiceMS.P50)
				}
				if len(s.Series) == 0 || s.Histogram == "" {
					t.Errorf("step %d has no series or histogram", s.Index)
				}
			}
			if want := "ceiling run --rate 50,100 --slo '" + tc.slo + "'"; res.Command != want {
				t.Errorf("command = %q, want %q", res.Command, want)
			}
			if text := table(t, res); !strings.Contains(text, tc.line) {
				t.Errorf("the table lacks %q:\n%s", tc.line, text)
			}
			if on, err := results.Read(out); err != nil || len(on.Steps) != 2 || on.Passed != tc.passed {
				t.Errorf("result.json = %+v (err %v), want the two steps", on, err)
			}
		})
	}
}

// A target that stalls for a second 1.2 s into a 2.5 s step at 100/s: the
// requests sent during the stall wait for its end, and since latency
// counts from each request's intended start, the p99 is nearly the whole
// second while the p50 is the target's ordinary millisecond. The stall
// makes the one step OVERLOADED: the run does not pass.
func TestStallShowsInP99(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		stall := time.Now().Add(1200 * time.Millisecond)
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			if now := time.Now(); !now.Before(stall) && now.Before(stall.Add(time.Second)) {
				time.Sleep(stall.Add(time.Second).Sub(now))
			}
			time.Sleep(time.Millisecond)
			status(req, out, 200, "ok")
		})
		res, err := runPlan(t, quickPlan(t, "", 2500*time.Millisecond, 0, 100), Options{Exchanger: ex, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Steps[0]
		if s.LatencyMS.P99 < 970 || s.LatencyMS.P99 > 1001 || s.LatencyMS.P50 > 1.01 {
			t.Errorf("p99 %v ms, p50 %v ms; want the stall's second in p99, the target's 1 ms in p50", s.LatencyMS.P99, s.LatencyMS.P50)
		}
		if s.Verdict != results.Overloaded || res.Passed {
			t.Errorf("verdict %s (%s), passed %v; want OVERLOADED, not passed", s.Verdict, s.VerdictReason, res.Passed)
		}
	})
}

// Ten users of the closed model against a target that answers in 10 ms,
// with no think time: each user's next request follows its answer, so the
// step achieves 1000/s.
func TestClosedModelUsers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: {model: closed, vus: [10], step: 1s, warmup: 200ms}\nscenarios: [{request: {url: /}}]\n")
		res, err := runPlan(t, p, Options{Exchanger: newServer(10, 10*time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Steps[0]
		if s.AchievedRate < 990 || s.AchievedRate > 1010 || s.Model != "closed" || s.VUs != 10 || s.Failed != 0 {
			t.Errorf("closed step = %s, %d users at %v/s, %d failed; want closed, 10, 1000/s", s.Model, s.VUs, s.AchievedRate, s.Failed)
		}
	})
}

// A step overdriven 20× past what its workers can carry (20,000/s asked,
// 50 workers × 50 ms = 1000/s possible) ends on time, well within its
// window, the timeout and the grace (4 s): at the window's end and its
// last answers' 50 ms. It counts the arrivals it never sent (each late),
// and is GENERATOR LIMITED.
func TestOverdrivenStepEndsOnTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: {rates: [20000], step: 1s, warmup: 0s, max_workers: 50}\nhttp: {timeout: 1s}\nscenarios: [{request: {url: /}}]\n")
		start := time.Now()
		res, err := runPlan(t, p, Options{Exchanger: newServer(1000, 50*time.Millisecond), GoTimer: true})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		// the preflight's 50 ms, the window's 1 s, the last answers' 50 ms
		if took > 1100*time.Millisecond {
			t.Errorf("the run took %v, want 1.1s", took)
		}
		s := res.Steps[0]
		if s.NotSent < 10000 || s.Sent+s.NotSent != 20000 || s.Verdict != results.GeneratorLimited || s.Late < s.NotSent {
			t.Errorf("sent %d, not sent %d, late %d, verdict %s %q; want most of 20000 not sent (and late), GENERATOR LIMITED",
				s.Sent, s.NotSent, s.Late, s.Verdict, s.VerdictReasons)
		}
	})
}

// What stops a session from starting is told apart: a bad plan is an
// failure.InputError, a target that does not answer failure.ErrUnreachable.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		down := newServer(1, 0)
		down.kind = transport.Refused
		_, err := Open(t.Context(), quickPlan(t, "", time.Second, 0, 10), Options{Exchanger: down, GoTimer: true})
		if !errors.Is(err, failure.ErrUnreachable) || !strings.Contains(err.Error(), "nothing is listening") {
			t.Errorf("Open against a refusing target = %v, want failure.ErrUnreachable with a hint", err)
		}
		p := quickPlan(t, "", time.Second, 0, 10)
		p.SLO = "p99<fast"
		var in *failure.InputError
		if _, err := Open(t.Context(), p, Options{Exchanger: newServer(1, 0), GoTimer: true}); !errors.As(err, &in) {
			t.Errorf("Open with a bad SLO = %v, want a failure.InputError", err)
		}
	})
}

// Cancelling a run mid-way (the first Ctrl-C) 1.5 s into three steps of
// a second keeps the first step whole and the second as far as it went,
// runs no third, and finishes: the run is interrupted, does not pass, and
// result.json holds both steps.
func TestRunInterruptedKeepsFinishedSteps(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.json")
		s, err := Open(t.Context(), quickPlan(t, "", time.Second, 0, 50, 50, 50), Options{Out: out, Exchanger: newServer(10, 5*time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(1500*time.Millisecond, cancel)
		res, err := s.Run(ctx)
		if err != nil || !res.Interrupted || len(res.Steps) != 2 || res.Passed || res.Outcome.Status != results.StatusInterrupted {
			t.Fatalf("Run = %v: interrupted %v, %d steps, passed %v, outcome %s; want interrupted, 2 steps, not passed", err, res.Interrupted, len(res.Steps), res.Passed, res.Outcome.Status)
		}
		if done, part := res.Steps[0], res.Steps[1]; done.Interrupted || done.DurationS != 1 || !part.Interrupted || part.DurationS > 0.5 || part.DurationS < 0.4 {
			t.Errorf("steps: %v %vs, %v %vs; want a complete 1s step, then a partial one of about 0.5s", done.Interrupted, done.DurationS, part.Interrupted, part.DurationS)
		}
		if on, err := results.Read(out); err != nil || len(on.Steps) != 2 || !on.Interrupted {
			t.Errorf("result.json = %+v (err %v), want both steps, interrupted", on, err)
		}
	})
}

// A cancel during a step ends it early: the step is partial, the run
// interrupted and not passed, and Finish still writes what was measured.
func TestStepInterrupted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.json")
		p := quickPlan(t, "", 10*time.Second, 0, 100)
		s, err := Open(t.Context(), p, Options{Out: out, Exchanger: newServer(10, 5*time.Millisecond), GoTimer: true, Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(3*time.Second, cancel)
		st, err := s.Step(ctx, load.Step{Rate: 100, Length: 10 * time.Second})
		if !errors.Is(err, failure.ErrInterrupted) || !st.Interrupted || st.DurationS > 3.1 {
			t.Errorf("Step = %v, partial %v after %vs; want failure.ErrInterrupted, a partial step of 3s", err, st.Interrupted, st.DurationS)
		}
		res, err := s.Finish(ctx)
		if err != nil || !res.Interrupted || res.Passed {
			t.Errorf("Finish = %v, interrupted %v, passed %v; want interrupted, not passed", err, res.Interrupted, res.Passed)
		}
		if on, err := results.Read(out); err != nil || len(on.Steps) != 1 || !on.Interrupted {
			t.Errorf("result.json = %+v (err %v), want the partial step, interrupted", on, err)
		}
	})
}

// runSegment runs segment i of 2 of p against ex, one session, and
// returns its result.
func runSegment(t *testing.T, p *plan.Plan, ex transport.Exchanger, i int) *results.Result {
	t.Helper()
	s, err := Open(t.Context(), p, Options{Args: []string{"test"}, Exchanger: ex, GoTimer: true, Segment: schedule.Segment{I: i, N: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Segments merge when they ran at the same time, and are refused, with
// their times, when they ran one after the other: their rates add up to a
// load the target never received. --allow-apart merges them, said.
func TestMergeRefusesSegmentsApart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := quickPlan(t, "", time.Second, 0, 200)
		srv := newServer(8, 5*time.Millisecond)
		var together [2]*results.Result
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { together[i] = runSegment(t, p, srv, i) })
		}
		wg.Wait()
		m, err := Merge(together[:], "ceiling merge", false)
		if err != nil || m.Steps[0].TargetRate != 200 || !m.Passed {
			t.Fatalf("segments run together: merge %v, err %v; want 200/s, passed", m, err)
		}

		first := runSegment(t, p, srv, 0)
		second := runSegment(t, p, srv, 1) // a second later: the first's window is over
		_, err = Merge([]*results.Result{first, second}, "ceiling merge", false)
		var bad *failure.InputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "step 1 of the segments did not run at the same time (segment 1/2 ") {
			t.Fatalf("segments one after the other: err %v, want bad input naming the step and the times", err)
		}
		m, err = Merge([]*results.Result{first, second}, "ceiling merge", true)
		if err != nil || !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, "merged with --allow-apart: step 1") }) {
			t.Errorf("--allow-apart: err %v, warnings %q; want merged, with a warning", err, m.Warnings)
		}
	})
}
