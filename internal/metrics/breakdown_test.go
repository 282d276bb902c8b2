package metrics

import (
	"fmt"
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
