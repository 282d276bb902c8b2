package metrics

import "sync"

// Shard is one worker group's share of a Recorder.
type Shard struct {
	mu  sync.Mutex
	cur *Tally
	_   [40]byte // keep neighbouring shards' locks off one cache line
}

// Record adds one finished exchange. It allocates nothing.
func (s *Shard) Record(x *Sample) {
	s.mu.Lock()
	s.cur.add(x)
	s.mu.Unlock()
}

// Recorder is a set of shards collected together.
type Recorder struct {
	shards []*Shard
	spare  []*Tally
}

// NewRecorder returns a recorder with n shards (at least one).
func NewRecorder(n int) *Recorder {
	n = max(n, 1)
	r := &Recorder{shards: make([]*Shard, n), spare: make([]*Tally, n)}
	for i := range r.shards {
		r.shards[i] = &Shard{cur: NewTally()}
		r.spare[i] = NewTally()
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
