package metrics

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

func iter(sc int, site string, lat time.Duration, k transport.Kind) *Iteration {
	return &Iteration{Scenario: sc, Tags: []string{site}, End: lat, Kind: k, BodyBytes: 100, Counted: true}
}

func TestBreakdowns(t *testing.T) {
	l := Layout{Scenarios: 2, TagKeys: 1, TagLimit: 3}
	r := NewRecorderFor(2, l)
	for i := range 100 {
		k := transport.OK
		if i%10 == 0 {
			k = transport.Limited
		}
		r.Shard(i).RecordIteration(iter(i%2, fmt.Sprintf("site%d", i%5), time.Duration(i+1)*time.Millisecond, k))
	}
	warm := iter(0, "site0", time.Millisecond, transport.OK)
	warm.Counted = false
	r.Shard(0).RecordIteration(warm)
	total := NewTallyFor(l)
	r.Collect(total)
	if a, b := total.Scenarios[0].Completed(), total.Scenarios[1].Completed(); a != 50 || b != 50 {
		t.Errorf("scenario iterations = %d, %d, want 50, 50 (the warm-up one not counted)", a, b)
	}
	if got := total.Scenarios[0].Limited(); got != 10 {
		t.Errorf("scenario 0 limited = %d, want 10", got)
	}
	if got := total.Scenarios[1].BodyBytes; got != 5000 {
		t.Errorf("scenario 1 body bytes = %d, want 5000", got)
	}
	tags := total.Tags[0]
	if len(tags) != 4 || tags[Other] == nil {
		t.Fatalf("tag values = %d (%v), want 3 sites and other", len(tags), keys(tags))
	}
	var sum int64
	for _, s := range tags {
		sum += s.Completed()
	}
	if sum != 100 || total.Folded == 0 {
		t.Errorf("tag iterations = %d, folded %d; want 100 in all, some folded", sum, total.Folded)
	}
	// A second interval keeps the limit across merges.
	r.Shard(0).RecordIteration(iter(0, "brand-new", time.Millisecond, transport.OK))
	r.Collect(total)
	if len(total.Tags[0]) != 4 || total.Tags[0][Other].Completed() < 41 {
		t.Errorf("after a new value past the limit: %v", keys(total.Tags[0]))
	}
}

func keys(m map[string]*Sub) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func BenchmarkRecordIteration(b *testing.B) {
	r := NewRecorderFor(1, Layout{Scenarios: 3, TagKeys: 1})
	sh := r.Shard(0)
	it := iter(1, "site7", 3*time.Millisecond, transport.OK)
	sh.RecordIteration(it)
	b.ReportAllocs()
	for b.Loop() {
		sh.RecordIteration(it)
	}
}

// The times an interim tally's breakdowns keep come out of a merge as the
// very histogram a full tally would have recorded: each scenario's and
// tag value's, exactly, through a second interim tally on the way.
func TestInterimBreakdownsMergeExactly(t *testing.T) {
	l := Layout{Scenarios: 3, TagKeys: 1}
	direct, interim, second := NewTallyFor(l), NewInterimTallyFor(l), NewInterimTallyFor(l)
	for i := range 5000 {
		it := iter(i%3, fmt.Sprintf("site%d", i%7), time.Duration(i*i%900_001+1)*time.Microsecond, transport.OK)
		direct.breakdowns.add(it)
		interim.breakdowns.add(it)
	}
	if interim.Scenarios[0].Latency != nil {
		t.Fatal("an interim tally's breakdown holds a histogram")
	}
	second.Merge(interim)
	full := NewTallyFor(l)
	full.Merge(second)
	for i := range l.Scenarios {
		if !full.Scenarios[i].Latency.Equals(direct.Scenarios[i].Latency) || full.Scenarios[i].Kinds != direct.Scenarios[i].Kinds {
			t.Errorf("scenario %d: p99 %d through interim tallies, %d recorded directly", i,
				full.Scenarios[i].Latency.ValueAtQuantile(99), direct.Scenarios[i].Latency.ValueAtQuantile(99))
		}
	}
	for v, s := range direct.Tags[0] {
		if got := full.Tags[0][v]; got == nil || !got.Latency.Equals(s.Latency) || got.BodyBytes != s.BodyBytes {
			t.Errorf("tag value %s differs through interim tallies", v)
		}
	}
	// Reset keeps the times' memory for the next second, and empties them.
	interim.Reset()
	if s := interim.Scenarios[0]; len(s.vals) != 0 || cap(s.vals) == 0 || s.Completed() != 0 {
		t.Errorf("after Reset: %d times kept (capacity %d), %d iterations; want none, the memory kept", len(s.vals), cap(s.vals), s.Completed())
	}
}

// A recorder's shards hold no histogram per scenario: the breakdowns of a
// plan of 200 scenarios cost a recorder of 8 shards about what their
// totals do, not 8 × 2 × 200 histograms (about 600 MB).
func TestRecorderBreakdownsCostTheirTimes(t *testing.T) {
	l := Layout{Scenarios: 200, TagKeys: 2}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	r := NewRecorderFor(8, l)
	for i := range 8000 {
		r.Shard(i).RecordIteration(&Iteration{Scenario: i % 200, Tags: []string{fmt.Sprint(i % 200), fmt.Sprint(i % 50)}, End: time.Millisecond, Kind: transport.OK, Counted: true})
	}
	grew := heap() - before
	runtime.KeepAlive(r)
	t.Logf("a recorder of 8 shards, 200 scenarios, 2 tag keys: %.1f MB", float64(grew)/(1<<20))
	if grew > 16<<20 {
		t.Errorf("the recorder holds %.1f MB, want at most 16 MB (its 16 tallies' totals, and the times)", float64(grew)/(1<<20))
	}
}
