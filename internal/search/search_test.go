package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

// knee is a target that passes every level up to k.
func knee(k float64) func(float64) bool { return func(l float64) bool { return l <= k } }

// fataler is testing.TB or *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func search(t fataler, cfg Config, pass func(float64) bool) Result {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		lvl, _, done := s.Next()
		if done {
			return s.Result()
		}
		s.Record(pass(lvl))
	}
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		pass    func(float64) bool
		outcome Outcome
		lo, hi  float64 // the edge must be in [lo, hi]
	}{
		{"knee at 480", Config{Start: 50, Precision: 0.05}, knee(480), Edge, 480 * 0.95, 480},
		{"knee at 1200, 2%", Config{Start: 100, Precision: 0.02}, knee(1200), Edge, 1200 * 0.98, 1200},
		{"start fails", Config{Start: 50}, knee(10), StartFails, 0, 0},
		{"no failure up to max", Config{Start: 50, Max: 1000}, knee(1e9), NoFailure, 1000, 1000},
		{"knee exactly at start", Config{Start: 50}, knee(50), Edge, 50, 50},
		{"users", Config{Start: 10, Integer: true}, knee(37), Edge, 37, 37},
		{"one user", Config{Start: 1, Integer: true}, knee(1), Edge, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := search(t, tt.cfg, tt.pass)
			if r.Outcome != tt.outcome || r.Edge < tt.lo || r.Edge > tt.hi {
				t.Errorf("search = outcome %d, edge %v (probes %v), want outcome %d, edge in [%v, %v]", r.Outcome, r.Edge, r.Probes, tt.outcome, tt.lo, tt.hi)
			}
			if r.Outcome == Edge && !r.Probes[len(r.Probes)-1].Confirm {
				t.Errorf("the edge was not confirmed by a last run: %v", r.Probes)
			}
		})
	}
}

// The edge is within the precision of the true knee, for any knee and
// start, and the search stays short.
func TestPropertyEdgeWithinPrecision(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.Float64Range(1, 1e6).Draw(t, "knee")
		start := rapid.Float64Range(math.Max(0.5, k/1000), k).Draw(t, "start")
		prec := rapid.Float64Range(0.01, 0.2).Draw(t, "precision")
		r := search(t, Config{Start: start, Precision: prec}, knee(k))
		if r.Outcome != Edge || r.Edge > k || (k-r.Edge)/k > prec+1e-9 {
			t.Fatalf("knee %v, start %v, precision %v: outcome %d edge %v", k, start, prec, r.Outcome, r.Edge)
		}
		if len(r.Probes) > 40 {
			t.Fatalf("%d steps", len(r.Probes))
		}
	})
}

// Near the knee a step passes or fails by chance (noise of ±n %): the edge
// still lands near the knee, below its noisy band's top, and every level
// reported passed when it was last run.
func TestPropertyNoiseDoesNotWander(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.Float64Range(10, 1e5).Draw(t, "knee")
		noise := rapid.Float64Range(0, 0.05).Draw(t, "noise")
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		pass := func(l float64) bool {
			return l <= k*(1+noise*(2*rng.Float64()-1))
		}
		r := search(t, Config{Start: k / 20, Precision: 0.05}, pass)
		if r.Outcome == Exhausted {
			return // allowed, though rare: the budget ran out on a coin-flipping edge
		}
		if r.Outcome != Edge || r.Edge > k*(1+noise) || r.Edge < k*(1-noise)*(1-0.05)*(1-0.05) {
			t.Fatalf("knee %v ±%.1f%%: outcome %d, edge %v, probes %v", k, noise*100, r.Outcome, r.Edge, r.Probes)
		}
		last := map[float64]bool{}
		for _, p := range r.Probes {
			last[p.Level] = p.Pass
		}
		if !last[r.Edge] {
			t.Fatalf("edge %v failed when last run: %v", r.Edge, r.Probes)
		}
	})
}

// fakeRunner runs levels against a knee, and can be generator-limited or
// fail.
type fakeRunner struct {
	knee, genLimit float64
	err            error
	levels         []float64
}

func (f *fakeRunner) Run(_ context.Context, level float64, _ bool) (Step, error) {
	f.levels = append(f.levels, level)
	if f.err != nil {
		return Step{}, f.err
	}
	return Step{Pass: level <= f.knee, GeneratorLimited: f.genLimit > 0 && level > f.genLimit}, nil
}

func TestDriver(t *testing.T) {
	s, _ := New(Config{Start: 100})
	r, err := Run(context.Background(), s, &fakeRunner{knee: 700})
	if err != nil || r.Outcome != Edge || math.Abs(r.Edge-700) > 35 {
		t.Errorf("Run = %+v, %v; want the edge near 700", r, err)
	}
	s, _ = New(Config{Start: 100})
	f := &fakeRunner{knee: 5000, genLimit: 1000}
	r, _ = Run(context.Background(), s, f)
	if r.Outcome != GeneratorLimited || r.Edge != 800 || f.levels[len(f.levels)-1] != 1600 {
		t.Errorf("Run = %+v after %v; want a generator limit at 1600 with 800 the last good level", r, f.levels)
	}
	s, _ = New(Config{Start: 100})
	boom := errors.New("interrupted")
	if r, err := Run(context.Background(), s, &fakeRunner{err: boom}); !errors.Is(err, boom) || r.Outcome != Unfinished {
		t.Errorf("Run = %v, %v; want the runner's error and an unfinished search (not an edge)", r.Outcome, err)
	}
	if _, err := New(Config{Start: 0}); err == nil {
		t.Errorf("New(start 0) accepted")
	}
}
