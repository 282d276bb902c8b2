package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// A trace reads back the exchanges it was given, in the order of their
// intended starts, through result.json.
func TestTraceRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		classes := []string{"ok", "limited", "refused", "timeout"}
		xs := rapid.SliceOf(rapid.Custom(func(t *rapid.T) Exchange {
			return Exchange{
				IntendedUS: rapid.Int64Range(0, 1e10).Draw(t, "intended"),
				LatencyUS:  rapid.Int64Range(0, 36e8).Draw(t, "latency"),
				Class:      rapid.SampledFrom(classes).Draw(t, "class"),
				Weight:     rapid.Int64Range(1, 1<<20).Draw(t, "weight"),
			}
		})).Draw(t, "exchanges")
		tr, err := NewTrace(1.5, xs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		var back Trace
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, err := back.Decode()
		if err != nil {
			t.Fatal(err)
		}
		var weight int64
		for i := range got {
			if i > 0 && got[i].IntendedUS < got[i-1].IntendedUS {
				t.Fatalf("exchange %d starts before the one before it: %+v", i, got)
			}
			weight += got[i].Weight
		}
		if len(got) != len(xs) || back.Kept != int64(len(xs)) || back.Exchanges != weight || back.FromS != 1.5 {
			t.Fatalf("read back %d exchanges (kept %d, standing for %d of %d) from %v, want %d from 1.5", len(got), back.Kept, back.Exchanges, weight, back.FromS, len(xs))
		}
		for _, x := range xs { // every exchange given is there
			found := false
			for _, y := range got {
				found = found || x == y
			}
			if !found {
				t.Fatalf("exchange %+v not read back", x)
			}
		}
	})
}

func TestNewTraceRefusesNonsense(t *testing.T) {
	for _, x := range []Exchange{{IntendedUS: -1, Class: "ok", Weight: 1}, {LatencyUS: -5, Class: "ok", Weight: 1}, {Class: "ok"}} {
		if _, err := NewTrace(0, []Exchange{x}); err == nil {
			t.Errorf("NewTrace(%+v) = nil error, want one", x)
		}
	}
}

// A trace that does not read says so; it never panics.
func FuzzTraceDecode(f *testing.F) {
	tr, _ := NewTrace(0, []Exchange{{IntendedUS: 5, LatencyUS: 7, Class: "ok", Weight: 1}, {IntendedUS: 9, Class: "refused", Weight: 2}})
	f.Add(tr.Data, 2)
	f.Add("", 0)
	f.Add("////", 1)
	f.Fuzz(func(t *testing.T, data string, classes int) {
		tr := Trace{Data: data, Classes: []string{"ok", "refused", "timeout"}[:min(max(classes, 0), 3)]}
		xs, err := tr.Decode()
		if err == nil {
			for _, x := range xs {
				if x.Weight < 1 || x.IntendedUS < 0 || x.LatencyUS < 0 {
					t.Fatalf("Decode(%q) = %+v without error: want weights ≥ 1 and times ≥ 0", data, x)
				}
			}
		}
	})
}

// Merged parts of a step (agents, segments) hold every part's exchanges
// from the latest of their starts, in order; a step without traces has
// none merged.
func TestMergeTraces(t *testing.T) {
	a, _ := NewTrace(1, []Exchange{
		{IntendedUS: 900_000, LatencyUS: 50_000, Class: "ok", Weight: 1}, // ended at 0.95 s: only part a's trace has that time
		{IntendedUS: 1_000_000, LatencyUS: 1000, Class: "ok", Weight: 1},
		{IntendedUS: 1_200_000, LatencyUS: 1000, Class: "refused", Weight: 1},
	})
	b, _ := NewTrace(1.1, []Exchange{
		{IntendedUS: 1_050_000, LatencyUS: 100_000, Class: "ok", Weight: 2},
		{IntendedUS: 1_100_000, LatencyUS: 2000, Class: "timeout", Weight: 2},
	})
	m, err := MergeSteps([]Step{{Figures: Figures{Model: "open", Trace: a}}, {Figures: Figures{Model: "open", Trace: b}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Trace.Decode()
	if err != nil {
		t.Fatal(err)
	}
	want := []Exchange{
		{IntendedUS: 1_050_000, LatencyUS: 100_000, Class: "ok", Weight: 2},
		{IntendedUS: 1_100_000, LatencyUS: 2000, Class: "timeout", Weight: 2},
		{IntendedUS: 1_200_000, LatencyUS: 1000, Class: "refused", Weight: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" || m.Trace.FromS != 1.1 || m.Trace.Exchanges != 5 {
		t.Errorf("merged trace from %v, standing for %d (-want +got):\n%s", m.Trace.FromS, m.Trace.Exchanges, diff)
	}
	if m, _ := MergeSteps([]Step{{Figures: Figures{Model: "open"}}, {Figures: Figures{Model: "open"}}}, nil); m.Trace != nil {
		t.Errorf("merged steps without traces have trace %+v, want none", m.Trace)
	}
	bad := &Trace{Data: "!!", Classes: []string{"ok"}}
	if _, err := MergeSteps([]Step{{Figures: Figures{Model: "open", Trace: a}}, {Figures: Figures{Model: "open", Trace: bad}}}, nil); err == nil || !strings.Contains(err.Error(), "trace") {
		t.Errorf("merging a trace that does not read: %v, want an error about the trace", err)
	}
}

// Shift moves every exchange and the start by the same time.
func TestTraceShift(t *testing.T) {
	tr, _ := NewTrace(2, []Exchange{{IntendedUS: 2_000_000, LatencyUS: 10, Class: "ok", Weight: 1}, {IntendedUS: 2_500_000, Class: "reset", Weight: 1}})
	if err := tr.Shift(-0.25); err != nil {
		t.Fatal(err)
	}
	got, _ := tr.Decode()
	if math.Abs(tr.FromS-1.75) > 1e-9 || got[0].IntendedUS != 1_750_000 || got[1].IntendedUS != 2_250_000 {
		t.Errorf("shifted trace from %v: %+v; want from 1.75 s, exchanges at 1.75 and 2.25 s", tr.FromS, got)
	}
}
