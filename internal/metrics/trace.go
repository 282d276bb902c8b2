package metrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// TraceCapacity is how many exchanges a step's trace keeps at most, over
// all the shards that record it: 16 bytes each, 512 KiB in all.
const TraceCapacity = 1 << 15

// minShardTrace is the least a shard's trace holds.
const minShardTrace = 1 << 10

// Traced is one exchange a trace kept.
type Traced struct {
	// Intended is when it was meant to start, as an offset from the run's
	// base.
	Intended time.Duration
	// Latency is its response time: end − intended.
	Latency time.Duration
	// Kind is how it ended.
	Kind transport.Kind
	// Weight is how many exchanges it stands for: 1, or 2^k once its
	// shard kept only one in 2^k (see Recorder.StartTrace).
	Weight int64
}

// traced is a Traced in a shard's buffer: 16 bytes (the weight is the
// shard's).
type traced struct {
	intended  time.Duration
	latencyUS uint32
	kind      transport.Kind
}

// trace is a shard's share of a step's trace. The shard's lock guards it.
//
// It keeps every exchange until its buffer is full; then it drops every
// other one it holds and from then on keeps one in two, and so on: one in
// stride, evenly over the shard's exchanges, each standing for stride of
// them. The buffer is allocated once; halving it moves half of it, once
// per doubling of the exchanges, so that recording stays O(1) amortized.
type trace struct {
	from   time.Duration // keep counted exchanges that end at or after from
	buf    []traced
	n      int // exchanges held
	stride int64
	skip   int64 // exchanges still to pass over before the next kept one
}

// add keeps s if it belongs to the trace and its turn has come. It
// allocates nothing.
func (t *trace) add(s *Sample) {
	if !s.Counted || s.End < t.from {
		return
	}
	if t.skip > 0 {
		t.skip--
		return
	}
	us := (s.End - s.Intended) / time.Microsecond
	t.buf[t.n] = traced{intended: s.Intended, latencyUS: uint32(min(max(us, 0), 1<<32-1)), kind: s.Outcome.Kind}
	t.n++
	t.skip = t.stride - 1
	if t.n == len(t.buf) {
		// Keep exchanges 0, 2, 4...: kept at stride s, they are the
		// shard's exchanges 0, 2s, 4s... The next to keep, 2s after the
		// last held (held n−2), is s after the one just added (n−1): skip
		// stays s−1.
		for i := range t.n / 2 {
			t.buf[i] = t.buf[2*i]
		}
		t.n /= 2
		t.stride *= 2
	}
}

// StartTrace makes the shards keep, besides their tallies, the counted
// exchanges that end at or after from (an offset from the run's base),
// one by one: when each was meant to start, its response time and how it
// ended, for measuring a recovery to the millisecond. capacity (zero:
// TraceCapacity) bounds the exchanges kept over the shards; a shard
// that fills its share keeps one in two from then on, evenly (see
// Traced.Weight). Call it before recording starts.
func (r *Recorder) StartTrace(from time.Duration, capacity int) {
	if capacity <= 0 {
		capacity = TraceCapacity
	}
	per := max(capacity/len(r.shards), minShardTrace) &^ 1 // even: halving keeps exactly half
	for _, s := range r.shards {
		s.mu.Lock()
		s.trace = &trace{from: from, buf: make([]traced, per), stride: 1}
		s.mu.Unlock()
	}
}

// Trace returns the exchanges the shards kept since StartTrace, in the
// order of their intended starts, each with its weight; nil without
// StartTrace. Call it once recording has ended.
func (r *Recorder) Trace() []Traced {
	var out []Traced
	for _, s := range r.shards {
		s.mu.Lock()
		if t := s.trace; t != nil {
			for _, k := range t.buf[:t.n] {
				out = append(out, Traced{Intended: k.intended, Latency: time.Duration(k.latencyUS) * time.Microsecond, Kind: k.kind, Weight: t.stride})
			}
		}
		s.mu.Unlock()
	}
	slices.SortStableFunc(out, func(a, b Traced) int { return cmp.Compare(a.Intended, b.Intended) })
	return out
}
