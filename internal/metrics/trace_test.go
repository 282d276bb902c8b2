package metrics

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Under its capacity, the trace keeps every counted exchange that ended
// at or after its start, once, with its intended time, response time and
// kind; not those of the warm-up, nor those that ended before.
func TestTraceKeepsEachExchange(t *testing.T) {
	r := NewRecorder(2)
	r.StartTrace(time.Second, 4096)
	warm := sample(990*time.Millisecond, 990*time.Millisecond, 1100*time.Millisecond, transport.OK)
	warm.Counted = false
	r.Shard(0).Record(warm)
	r.Shard(0).Record(sample(900*time.Millisecond, 900*time.Millisecond, 999*time.Millisecond, transport.OK)) // ended before
	r.Shard(1).Record(sample(950*time.Millisecond, 950*time.Millisecond, 1200*time.Millisecond, transport.Timeout))
	for i := range 1000 {
		at := time.Second + time.Duration(i)*time.Millisecond
		k := transport.OK
		if i%10 == 3 {
			k = transport.Refused
		}
		r.Shard(i).Record(sample(at, at+time.Millisecond, at+time.Duration(i)*time.Microsecond, k))
	}
	got := r.Trace()
	if len(got) != 1001 {
		t.Fatalf("Trace() kept %d exchanges, want 1001 (the one in flight at the start, and the 1000 after)", len(got))
	}
	if first := got[0]; first.Intended != 950*time.Millisecond || first.Latency != 250*time.Millisecond || first.Kind != transport.Timeout || first.Weight != 1 {
		t.Errorf("first kept = %+v, want the timeout intended at 950ms, 250ms long", first)
	}
	for i, x := range got[1:] {
		want := Traced{Intended: time.Second + time.Duration(i)*time.Millisecond, Latency: time.Duration(i) * time.Microsecond, Kind: transport.OK, Weight: 1}
		if i%10 == 3 {
			want.Kind = transport.Refused
		}
		if x != want {
			t.Fatalf("kept[%d] = %+v, want %+v", i+1, x, want)
		}
	}
	r.Collect(NewTally()) // collecting the seconds leaves the trace alone
	if n := len(r.Trace()); n != 1001 {
		t.Errorf("after Collect, Trace() kept %d, want 1001", n)
	}
	if tr := NewRecorder(1).Trace(); tr != nil {
		t.Errorf("Trace() without StartTrace = %v, want nil", tr)
	}
}

// Past its capacity a shard keeps one in 2^k of its exchanges, evenly:
// the exchanges kept are exactly every stride-th, and they stand for all
// of them (the weights sum to the exchanges, less than one stride over).
func TestTraceHalvesEvenly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40000).Draw(t, "exchanges")
		r := NewRecorder(1)
		r.StartTrace(0, rapid.IntRange(1, 4000).Draw(t, "capacity"))
		for i := range n {
			at := time.Duration(i) * time.Millisecond
			r.Shard(0).Record(sample(at, at, at+time.Millisecond, transport.OK))
		}
		got := r.Trace()
		stride := got[0].Weight
		var sum int64
		for i, x := range got {
			if x.Weight != stride || x.Intended != time.Duration(int64(i)*stride)*time.Millisecond {
				t.Fatalf("kept[%d] = %+v, want exchange %d with weight %d", i, x, int64(i)*stride, stride)
			}
			sum += x.Weight
		}
		if len(got) > len(r.shards[0].trace.buf) || sum < int64(n) || sum >= int64(n)+stride {
			t.Fatalf("%d exchanges: kept %d (capacity %d) of weight %d each, summing to %d; want within the capacity, summing to [n, n+stride)",
				n, len(got), len(r.shards[0].trace.buf), stride, sum)
		}
	})
}

// Recording into a trace, halving included, allocates nothing.
func TestTraceRecordAllocatesNothing(t *testing.T) {
	r := NewRecorder(1)
	r.StartTrace(0, minShardTrace)
	sh := r.Shard(0)
	s := sample(time.Second, time.Second, time.Second+time.Millisecond, transport.OK)
	if n := testing.AllocsPerRun(5*minShardTrace, func() { sh.Record(s) }); n != 0 {
		t.Errorf("Record with a trace allocates %v times per exchange, want 0", n)
	}
	if st := r.shards[0].trace.stride; st < 4 {
		t.Errorf("stride %d after %d exchanges in a trace of %d: want it halved at least twice", st, 5*minShardTrace, minShardTrace)
	}
}

func BenchmarkRecordTraced(b *testing.B) {
	r := NewRecorder(1)
	r.StartTrace(0, 0)
	sh := r.Shard(0)
	s := sample(time.Second, time.Second+time.Microsecond, time.Second+3*time.Millisecond, transport.OK)
	b.ReportAllocs()
	for b.Loop() {
		sh.Record(s)
	}
}
