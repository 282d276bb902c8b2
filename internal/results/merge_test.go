package results

import (
	"slices"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"pgregory.net/rapid"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// partStep is a generator's step from its response times (µs).
func partStep(t *rapid.T, samples []int64, second int) Step {
	h := metrics.NewHistogram()
	for _, us := range samples {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(samples))
	return Step{Figures: Figures{Model: "open", TargetRate: 100, Sent: n, Completed: n, OK: n, AchievedRate: float64(n), Throughput: float64(n),
		Histogram: enc, ServiceHist: enc, LatencyMS: metrics.Summarize(h), Errors: map[string]int64{},
		Scenarios: []Breakdown{{Name: "browse", Completed: n, OK: n, Histogram: enc, AvgBodyBytes: 10}},
		Series:    []Point{{T: float64(second), Completed: n, OK: n, Rate: float64(n), Histogram: enc}}}}
}

func decoded(t *rapid.T, enc string) *hdrhistogram.Histogram {
	h, err := metrics.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sameHist reports whether two histograms hold the same counts.
func sameHist(a, b *hdrhistogram.Histogram) bool {
	return a.TotalCount() == b.TotalCount() && slices.Equal(a.Distribution(), b.Distribution())
}

// Merging the parts of a step gives the histogram of all their samples,
// whatever the split, and the order and grouping of merges do not matter
// (associative, commutative); counts add up exactly.
func TestMergeStepsExact(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		all := rapid.SliceOfN(rapid.Int64Range(1, 5_000_000), 1, 400).Draw(t, "samples")
		k := rapid.IntRange(1, 5).Draw(t, "parts")
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(all)), k-1, k-1).Draw(t, "cuts")
		slices.Sort(cuts)
		var parts []Step
		prev := 0
		for _, c := range append(cuts, len(all)) {
			parts = append(parts, partStep(t, all[prev:c], 1))
			prev = c
		}
		whole := partStep(t, all, 1)
		m, err := MergeSteps(parts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !sameHist(decoded(t, m.Histogram), decoded(t, whole.Histogram)) || m.LatencyMS != whole.LatencyMS {
			t.Fatalf("merged latency %+v, all samples %+v", m.LatencyMS, whole.LatencyMS)
		}
		if m.Completed != int64(len(all)) || m.Scenarios[0].Completed != int64(len(all)) || m.Scenarios[0].LatencyMS != whole.LatencyMS {
			t.Fatalf("merged counts %d / scenario %+v, want %d", m.Completed, m.Scenarios[0], len(all))
		}
		if len(m.Series) != 1 || m.Series[0].P99 != metrics.Quantile(decoded(t, whole.Histogram), 0.99) {
			t.Fatalf("merged second %+v, want the p99 of all samples", m.Series)
		}
		if m.Agents != k || len(m.Parts) != k {
			t.Fatalf("agents %d, parts %d; want %d", m.Agents, len(m.Parts), k)
		}
		// Commutative: the parts reversed.
		rev := slices.Clone(parts)
		slices.Reverse(rev)
		r, err := MergeSteps(rev, nil)
		if err != nil || !sameHist(decoded(t, r.Histogram), decoded(t, m.Histogram)) || r.Completed != m.Completed {
			t.Fatalf("merging in reverse order differs (%v)", err)
		}
		// Associative: the first two merged first.
		if k >= 3 {
			ab, _ := MergeSteps(parts[:2], nil)
			abc, err := MergeSteps(append([]Step{ab}, parts[2:]...), nil)
			if err != nil || !sameHist(decoded(t, abc.Histogram), decoded(t, m.Histogram)) || abc.Completed != m.Completed || abc.Throughput != m.Throughput {
				t.Fatalf("(a+b)+c differs from a+b+c (%v)", err)
			}
		}
	})
}

// One generator that could not hold its share limits the merged step, even
// when the others' figures dilute its lateness.
func TestMergeStepsGeneratorLimited(t *testing.T) {
	ok := Step{Figures: Figures{Model: "open", Sent: 10000, Completed: 10000, Errors: map[string]int64{}}}
	late := Step{Figures: Figures{Model: "open", Sent: 1000, Completed: 1000, Late: 400, Errors: map[string]int64{}}}
	m, err := MergeSteps([]Step{ok, ok, late}, []string{"a:1", "b:1", "c:1"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.generatorLimited() || !m.Parts[2].GeneratorLimited || m.Parts[0].GeneratorLimited {
		t.Errorf("parts %+v: want the step limited by c:1 alone", m.Parts)
	}
	if r := m.generatorReason(); !strings.Contains(r, "agent c:1 could not hold its share") {
		t.Errorf("reason %q names no agent", r)
	}
	if _, err := MergeSteps([]Step{ok, {Figures: Figures{Model: "closed"}}}, nil); err == nil {
		t.Errorf("an open and a closed step merged")
	}
}
