package metrics

import (
	"math"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sample(intended, start, end time.Duration, k transport.Kind) *Sample {
	return &Sample{Intended: intended, Start: start, End: end, Outcome: transport.Outcome{Kind: k, BytesIn: 10, BytesOut: 2}, Counted: true, InWindow: true}
}

func TestTallyAdd(t *testing.T) {
	ta := NewTally()
	ta.add(sample(0, 0, 20*time.Millisecond, transport.OK))
	// Started 30ms late: response time counts from the intended time.
	ta.add(sample(0, 30*time.Millisecond, 50*time.Millisecond, transport.HTTP5xx))
	ta.add(sample(0, 0, time.Millisecond, transport.Limited))
	warm := sample(0, 0, time.Millisecond, transport.OK)
	warm.Counted = false
	ta.add(warm)

	if got := ta.Completed(); got != 3 {
		t.Errorf("Completed() = %d, want 3", got)
	}
	if ta.OK() != 1 || ta.Failed() != 1 || ta.Limited() != 1 {
		t.Errorf("ok/failed/limited = %d/%d/%d, want 1/1/1", ta.OK(), ta.Failed(), ta.Limited())
	}
	if ta.Finished != 3 {
		t.Errorf("Finished = %d, want 3 (ok, limited and the warm-up ok that ended inside the window; not the 5xx)", ta.Finished)
	}
	if ta.Late != 1 || ta.MaxLag != 30*time.Millisecond {
		t.Errorf("Late, MaxLag = %d, %v, want 1, 30ms", ta.Late, ta.MaxLag)
	}
	if got := usToMS(ta.Latency.Max()); math.Abs(got-50) > 0.1 {
		t.Errorf("max response time = %vms, want 50ms", got)
	}
	if got := usToMS(ta.Service.Max()); math.Abs(got-20) > 0.1 {
		t.Errorf("max service time = %vms, want 20ms", got)
	}
	if ta.BytesIn != 30 || ta.BytesOut != 6 {
		t.Errorf("bytes in/out = %d/%d, want 30/6", ta.BytesIn, ta.BytesOut)
	}
}

func TestClamp(t *testing.T) {
	ta := NewTally()
	ta.add(sample(0, 0, 2*time.Hour, transport.Timeout))
	ta.add(sample(0, 0, 0, transport.OK))
	if ta.Clamped != 1 {
		t.Errorf("Clamped = %d, want 1", ta.Clamped)
	}
	if ta.Latency.TotalCount() != 2 {
		t.Errorf("TotalCount() = %d, want 2: out-of-range values are clamped, not dropped", ta.Latency.TotalCount())
	}
}

func TestSummarize(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		_ = h.RecordValue(i * 1000) // 1..1000 ms
	}
	got := Summarize(h)
	check := func(name string, got, want float64) {
		if math.Abs(got-want) > want*0.001+0.001 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("p50", got.P50, 500)
	check("p90", got.P90, 900)
	check("p99", got.P99, 990)
	check("p999", got.P999, 999)
	check("max", got.Max, 1000)
	check("mean", got.Mean, 500.5)
	if (Summarize(NewHistogram()) != Latency{}) {
		t.Errorf("Summarize(empty) is not zero")
	}
}

// Merging shards equals recording everything into one histogram, and the
// order of merges does not matter.
func TestPropertyMergeExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vals := rapid.SliceOfN(rapid.Int64Range(1, int64(time.Minute/time.Microsecond)), 1, 500).Draw(t, "vals")
		n := rapid.IntRange(1, 5).Draw(t, "shards")
		whole := NewTally()
		parts := make([]*Tally, n)
		for i := range parts {
			parts[i] = NewTally()
		}
		for i, v := range vals {
			s := sample(0, 0, time.Duration(v)*time.Microsecond, transport.Kind(i%int(transport.NumKinds)))
			whole.add(s)
			parts[i%n].add(s)
		}
		fwd, rev := NewTally(), NewTally()
		for i := range parts {
			fwd.Merge(parts[i])
			rev.Merge(parts[n-1-i])
		}
		for _, m := range []*Tally{fwd, rev} {
			if !m.Latency.Equals(whole.Latency) || m.Kinds != whole.Kinds || m.Completed() != whole.Completed() {
				t.Fatalf("merged tally differs from the whole")
			}
		}
	})
}

func TestRecorderCollect(t *testing.T) {
	r := NewRecorder(4)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh := r.Shard(w)
			for range 1000 {
				sh.Record(sample(0, 0, time.Millisecond, transport.OK))
			}
		}()
	}
	total := NewTally()
	for range 5 {
		r.Collect(total) // concurrently with recording
	}
	wg.Wait()
	r.Collect(total)
	if got := total.Completed(); got != 8000 {
		t.Errorf("Completed() after collecting = %d, want 8000", got)
	}
	again := NewTally()
	r.Collect(again)
	if got := again.Completed(); got != 0 {
		t.Errorf("second Collect() = %d, want 0", got)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i < 5000; i += 7 {
		_ = h.RecordValue(i * 13)
	}
	s, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) {
		t.Errorf("Decode(Encode(h)) != h")
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder(1)
	sh := r.Shard(0)
	s := sample(time.Second, time.Second+time.Microsecond, time.Second+3*time.Millisecond, transport.OK)
	b.ReportAllocs()
	for b.Loop() {
		sh.Record(s)
	}
	if testing.AllocsPerRun(100, func() { sh.Record(s) }) != 0 {
		b.Fatal("Record allocates")
	}
}

func BenchmarkCollect(b *testing.B) {
	r := NewRecorder(8)
	total := NewTally()
	b.ReportAllocs()
	for b.Loop() {
		r.Shard(0).Record(sample(0, 0, time.Millisecond, transport.OK))
		r.Collect(total)
	}
}

// Resolution is the histogram's own bucket width: the first and last
// microsecond of the bucket holding d are recorded as one value, the next
// microsecond is not.
func TestResolution(t *testing.T) {
	h := NewHistogram()
	for _, d := range []time.Duration{0, 500 * time.Microsecond, 2047 * time.Microsecond, 2048 * time.Microsecond,
		20 * time.Millisecond, 333 * time.Millisecond, time.Second, 9 * time.Second, 40 * time.Minute} {
		res := Resolution(d)
		us, w := int64(d/time.Microsecond), int64(res/time.Microsecond)
		start := us / w * w
		if !h.ValuesAreEquivalent(start, start+w-1) || h.ValuesAreEquivalent(start, start+w) {
			t.Errorf("Resolution(%v) = %v, but the histogram's bucket at %d µs is not %d µs wide", d, res, start, w)
		}
	}
	if got := Resolution(20 * time.Millisecond); got != 16*time.Microsecond {
		t.Errorf("Resolution(20ms) = %v, want 16µs", got)
	}
}
