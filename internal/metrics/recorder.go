package metrics

import "sync"

// Shard is one worker group's share of a Recorder.
type Shard struct {
	mu    sync.Mutex
	cur   *Tally
	trace *trace   // nil unless Recorder.StartTrace
	_     [40]byte // fill the 64-byte cache line: neighbouring shards' locks stay apart
}

// Record adds one finished exchange, and keeps it in the trace when one
// was started. It allocates nothing.
func (s *Shard) Record(x *Sample) {
	s.mu.Lock()
	s.cur.add(x)
	if s.trace != nil {
		s.trace.add(x)
	}
	s.mu.Unlock()
}

// RecordIteration adds one finished iteration to the per-scenario and
// per-tag figures. It allocates only the first time a tag value appears,
// and when a breakdown holds more times than it ever has in a collection.
func (s *Shard) RecordIteration(it *Iteration) {
	s.mu.Lock()
	s.cur.breakdowns.add(it)
	s.mu.Unlock()
}

// Idle counts an iteration that sent nothing by design; counted says
// whether it belongs to the step's window.
func (s *Shard) Idle(counted bool) {
	if !counted {
		return
	}
	s.mu.Lock()
	s.cur.Idle++
	s.mu.Unlock()
}

// Recorder is a set of shards collected together.
type Recorder struct {
	shards []*Shard
	spare  []*Tally
}

// NewRecorder returns a recorder with n shards (at least one) and no
// breakdowns.
func NewRecorder(n int) *Recorder { return NewRecorderFor(n, Layout{}) }

// NewRecorderFor returns a recorder with n shards whose tallies keep the
// breakdowns l asks for, as interim tallies (NewInterimTallyFor): Collect
// merges them into a full one.
func NewRecorderFor(n int, l Layout) *Recorder {
	n = max(n, 1)
	r := &Recorder{shards: make([]*Shard, n), spare: make([]*Tally, n)}
	for i := range r.shards {
		r.shards[i] = &Shard{cur: NewInterimTallyFor(l)}
		r.spare[i] = NewInterimTallyFor(l)
	}
	return r
}

// Shard returns the shard for worker i.
func (r *Recorder) Shard(i int) *Shard { return r.shards[i%len(r.shards)] }

// Collect swaps every shard's tally for a cleared spare and merges what was
// recorded since the last call into into. Call it from one goroutine.
func (r *Recorder) Collect(into *Tally) {
	for i, s := range r.shards {
		fresh := r.spare[i]
		s.mu.Lock()
		full := s.cur
		s.cur = fresh
		s.mu.Unlock()
		into.Merge(full)
		full.Reset()
		r.spare[i] = full
	}
}
