package run

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// soakPlan is a validated plan of one GET at rate, held for length in
// windows of window.
func soakPlan(t *testing.T, slo string, rate float64, length, window time.Duration) *plan.Plan {
	t.Helper()
	p := &plan.Plan{
		Target: "http://127.0.0.1:1",
		Load: plan.Load{Rates: []float64{rate}, Warmup: &plan.Duration{Duration: 500 * time.Millisecond},
			Soak: &plan.Soak{For: plan.Duration{Duration: length}, Window: plan.Duration{Duration: window}}},
		Scenarios: []plan.Scenario{{Request: plan.Request{URL: "/"}}},
		SLO:       slo,
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// windows reads result.json after each window, as someone would who
// opened it while the soak ran.
type windows struct {
	path string
	held []float64 // soak.held_s of each read
	bad  []string
}

func (w *windows) Start(*results.Result) error { return nil }
func (w *windows) Step(*Finished) error        { return nil }
func (w *windows) Stop(*results.Result) error  { return nil }
func (w *windows) Window(res *results.Result) error {
	on, err := results.Read(w.path)
	switch {
	case err != nil:
		w.bad = append(w.bad, err.Error())
	case on.Soak == nil || !on.Unfinished || on.Passed || len(on.Steps) != 0 || on.Soak.HeldS != res.Soak.HeldS:
		w.bad = append(w.bad, "result.json does not hold the soak so far, unfinished")
	default:
		w.held = append(w.held, on.Soak.HeldS)
	}
	return nil
}

// growing is a target whose every answer takes base plus grow for each
// second since start: a p99 that climbs steadily. Its time is the
// synctest bubble's.
type growing struct {
	start      time.Time
	base, grow time.Duration
}

func (g *growing) Session() transport.Session { return g }
func (g *growing) Close()                     {}
func (g *growing) Do(_ *transport.Request, out *transport.Outcome) {
	time.Sleep(g.base + time.Duration(time.Since(g.start).Seconds()*float64(g.grow)))
	*out = transport.Outcome{Kind: transport.OK, Status: 200, BytesIn: 2}
}

// A soak is one step of its length, written window by window: result.json
// holds the soak so far after each window (unfinished, no step yet), and
// at the end the step, without a series, and the soak's windows, trends
// and outcome. A steady target under its capacity passes.
func TestSoakWritesWindows(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.json")
		w := &windows{path: out}
		p := soakPlan(t, "p99<50ms", 100, 20*time.Second, 2*time.Second)
		s, err := Open(t.Context(), p, Options{Out: out, Exchanger: newServer(4, 10*time.Millisecond), GoTimer: true, Outputs: []Output{w}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(w.bad) > 0 || len(w.held) < 8 || w.held[0] != 2 || w.held[len(w.held)-1] < 18 {
			t.Errorf("result.json after each window: soak held %v, problems %q", w.held, w.bad)
		}
		k := res.Soak
		if k == nil || len(res.Steps) != 1 || res.Steps[0].Series != nil || res.Steps[0].DurationS != 20 {
			t.Fatalf("result: soak %v, steps %+v", k != nil, res.Steps)
		}
		if len(k.Windows) != 10 || k.HeldS != 20 || k.Stopped != "" || k.SLOWindows != 10 || k.SLOBrokenCount != 0 {
			t.Errorf("soak: %d windows, held %g s, stopped %q, SLO in %d windows broken %d", len(k.Windows), k.HeldS, k.Stopped, k.SLOWindows, k.SLOBrokenCount)
		}
		var n int64
		for _, win := range k.Windows {
			n += win.Completed
			checkOwnMemory(t, win)
		}
		if n != res.Steps[0].Completed {
			t.Errorf("the windows count %d exchanges, the step %d", n, res.Steps[0].Completed)
		}
		for _, tr := range k.Trends {
			if tr.Figure == "p99_ms" && tr.Verdict != results.Stable {
				t.Errorf("p99 of a steady target: %+v, want STABLE", tr)
			}
		}
		if !res.Passed {
			t.Errorf("outcome %+v, want passed", res.Outcome)
		}
	})
}

// checkOwnMemory checks that a window measured ceiling's own memory: its
// heap, the runtime's memory and, on Linux, its RSS, the private part of
// it (less) and its threads.
func checkOwnMemory(t *testing.T, win results.SoakWindow) {
	t.Helper()
	c := win.Ceiling
	switch {
	case c == nil || c.HeapMB <= 0:
		t.Errorf("window %g–%g: ceiling's own memory %+v, want it measured", win.StartS, win.EndS, c)
	case runtime.GOOS == "linux" && (c.RSSMB == nil || c.AnonMB == nil || *c.AnonMB <= 0 || *c.AnonMB >= *c.RSSMB):
		t.Errorf("window %g–%g: ceiling's RSS %v MB, private %v MB, want both, the private part less", win.StartS, win.EndS, c.RSSMB, c.AnonMB)
	case c.RuntimeMB <= 0 || runtime.GOOS == "linux" && c.Threads < 2:
		t.Errorf("window %g–%g: the runtime's own %v MB, %d threads; want both measured", win.StartS, win.EndS, c.RuntimeMB, c.Threads)
	}
}

// A p99 that climbs 2 ms a second: DRIFTING at 7200 ms/h, projected to
// the SLO's bound, which the later windows break: the soak fails for both
// reasons, through the one outcome.
func TestSoakLatencyDrift(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := &growing{start: time.Now(), base: 5 * time.Millisecond, grow: 2 * time.Millisecond}
		p := soakPlan(t, "p99<60ms", 50, 40*time.Second, 2*time.Second)
		s, err := Open(t.Context(), p, Options{Exchanger: g, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var p99 *results.Trend
		for i, tr := range res.Soak.Trends {
			if tr.Figure == "p99_ms" {
				p99 = &res.Soak.Trends[i]
			}
		}
		if p99 == nil || p99.Verdict != results.Drifting || math.Abs(p99.SlopePerH-7200)/7200 > 0.05 || p99.Projection == nil || !p99.Projection.WithinHorizon {
			t.Fatalf("p99 trend %+v, want DRIFTING at 7200 ms/h, projected within the horizon", p99)
		}
		kinds := map[string]bool{}
		for _, r := range res.Outcome.Reasons {
			kinds[r.Kind] = true
		}
		if res.Passed || !kinds[results.ReasonSoakDrift] || !kinds[results.ReasonSoakSLO] {
			t.Errorf("outcome %+v, want failed by the drift and the SLO broken in windows", res.Outcome)
		}
	})
}

// A soak stopped by a Ctrl-C keeps its windows, ends its last where it
// stopped, and says so.
func TestSoakInterrupted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p := soakPlan(t, "", 100, time.Minute, 2*time.Second)
		s, err := Open(ctx, p, Options{Exchanger: newServer(4, 10*time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		time.AfterFunc(7500*time.Millisecond, cancel) // 7 s into the soak, after its warm-up
		res, err := s.Run(ctx)
		if err != nil && !errors.Is(err, failure.ErrInterrupted) {
			t.Fatal(err)
		}
		k := res.Soak
		if k.Stopped != "interrupted" || len(k.Windows) != 4 || math.Abs(k.HeldS-7) > 0.1 || res.Outcome.Status != results.StatusInterrupted {
			t.Errorf("soak: stopped %q, %d windows, held %g s, outcome %s; want interrupted, 4 windows, about 7 s", k.Stopped, len(k.Windows), k.HeldS, res.Outcome.Status)
		}
	})
}
