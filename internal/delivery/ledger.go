package delivery

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/sink"
)

// Source is where a sink's arrivals are read from; *sink.Sink is one.
// Arrivals(since) returns the arrivals of index since and after not handed
// over before, and the index to pass next time; a source that did not keep
// some returns fewer than next − since, and the ledger counts the
// difference as missed.
type Source interface {
	Arrivals(since int) ([]sink.Arrival, int)
}

// MaxLostIDs is how many lost ids a figure lists.
const MaxLostIDs = 100

// Ledger holds a run's expected ids and the arrivals at its sinks.
type Ledger struct {
	seed   maphash.Seed
	sinks  []*track
	shards [32]shard
	// progress is when the last first delivery of an expected id arrived
	// (zero: none yet). Poll, its only writer, runs on one goroutine.
	progress time.Time
	// drained is set when Drain ended: from then on Step counts the ids
	// still missing as lost when the drain was complete, as undelivered
	// when it was not.
	drained, complete bool
}

type shard struct {
	mu       sync.Mutex
	expected map[key]*sent
	rejected map[rejectKey]int64
}

type key struct {
	sink int
	id   string
}

type rejectKey struct{ sink, step int }

// sent is one expected id: when its iteration was meant to start, in which
// step, and what arrived for it.
type sent struct {
	at       time.Time
	step     int
	arrivals int       // deliveries seen (answered below 400)
	first    time.Time // the first delivery
}

// track is one sink's reading position and the arrivals that matched no
// expected id (yet).
type track struct {
	name   string
	src    Source
	since  int
	missed int64                  // arrivals the source did not keep for us
	orphan map[string][]time.Time // arrived before (or without) its Expect
}

// New returns a ledger over the sinks, in the plan's order. It reads each
// sink once, which tells a *sink.Sink that it has a reader: from then on it
// keeps up to sink.MaxUnread arrivals between two polls instead of a few
// thousand.
func New(names []string, srcs []Source) *Ledger {
	l := &Ledger{seed: maphash.MakeSeed()}
	for i := range names {
		l.sinks = append(l.sinks, &track{name: names[i], src: srcs[i], orphan: map[string][]time.Time{}})
	}
	for i := range l.shards {
		l.shards[i].expected = map[key]*sent{}
		l.shards[i].rejected = map[rejectKey]int64{}
	}
	l.Poll()
	return l
}

func (l *Ledger) shard(k key) *shard {
	return &l.shards[maphash.String(l.seed, k.id)%uint64(len(l.shards))]
}

// Expect notes that an accepted iteration of step (-1: warm-up, not
// counted), meant to start at at, expects id at sink: its delivery latency
// is measured from at, as the headline latency is from the intended send
// time.
func (l *Ledger) Expect(sinkIdx int, id string, at time.Time, step int) {
	k := key{sinkIdx, id}
	sh := l.shard(k)
	sh.mu.Lock()
	if _, dup := sh.expected[k]; !dup {
		sh.expected[k] = &sent{at: at, step: step}
	}
	sh.mu.Unlock()
}

// Reject notes an iteration of step that the target did not accept: its id
// is not expected anywhere.
func (l *Ledger) Reject(sinkIdx, step int) {
	sh := &l.shards[0]
	sh.mu.Lock()
	sh.rejected[rejectKey{sinkIdx, step}]++
	sh.mu.Unlock()
}

// Poll reads the sinks' new arrivals and matches them.
func (l *Ledger) Poll() {
	for i, t := range l.sinks {
		arrivals, next := t.src.Arrivals(t.since)
		if gap := next - t.since - len(arrivals); gap > 0 {
			t.missed += int64(gap)
		}
		t.since = next
		for _, a := range arrivals {
			if a.Status >= 400 || a.ID == "" {
				continue // refused by the sink: not delivered
			}
			l.arrive(i, t, a.ID, a.At)
		}
		// Ids that arrived before their Expect was noted (a fast target).
		for id, ats := range t.orphan {
			k := key{i, id}
			sh := l.shard(k)
			sh.mu.Lock()
			s := sh.expected[k]
			sh.mu.Unlock()
			if s != nil {
				delete(t.orphan, id)
				for _, at := range ats {
					l.arrive(i, t, id, at)
				}
			}
		}
	}
}

func (l *Ledger) arrive(i int, t *track, id string, at time.Time) {
	k := key{i, id}
	sh := l.shard(k)
	sh.mu.Lock()
	s := sh.expected[k]
	if s != nil {
		s.arrivals++
		if s.arrivals == 1 || at.Before(s.first) {
			s.first = at
		}
	}
	sh.mu.Unlock()
	if s != nil && s.arrivals == 1 && at.After(l.progress) {
		l.progress = at
	}
	if s == nil {
		t.orphan[id] = append(t.orphan[id], at)
	}
}

// Drain polls until every expected id has arrived, the timeout passes or
// ctx ends. It returns how long after stop the last expected id arrived
// (the whole wait when some never did), and whether the drain was
// complete: every id arrived, or none had arrived for quiet before it
// ended. The ids still missing after a complete drain are lost; after an
// incomplete one (arrivals were still coming when the timeout or ctx ended
// it) they are undelivered: queued, perhaps, not proven lost.
func (l *Ledger) Drain(ctx context.Context, stop time.Time, timeout, quiet time.Duration) (time.Duration, bool) {
	deadline := stop.Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	end := func(took time.Duration, complete bool) (time.Duration, bool) {
		l.drained, l.complete = true, complete
		return took, complete
	}
	for {
		l.Poll()
		last, missing := l.lastArrival()
		if missing == 0 {
			return end(max(last.Sub(stop), 0), true)
		}
		now := time.Now()
		if !now.Before(deadline) {
			return end(now.Sub(stop), l.quietFor(quiet, stop, now))
		}
		select {
		case <-ctx.Done():
			now := time.Now()
			return end(now.Sub(stop), l.quietFor(quiet, stop, now))
		case <-tick.C:
		}
	}
}

// quietFor reports whether the drain, from stop to now, saw no delivery
// for quiet: only time it watched counts (a drain of 0, or one ended at
// once, proves nothing lost).
func (l *Ledger) quietFor(quiet time.Duration, stop, now time.Time) bool {
	return quiet > 0 && now.Sub(maxTime(l.progress, stop)) >= quiet
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// QuietFor returns the quiet period that proves ids lost at the end of a
// drain of timeout: DrainQuiet, or half the drain when it is shorter.
func QuietFor(timeout time.Duration) time.Duration {
	return min(DrainQuiet, timeout/2)
}

// DrainQuiet is how long no delivery may arrive before the end of a drain
// for the ids still missing to be called lost rather than undelivered.
const DrainQuiet = 5 * time.Second

// Settle waits for the backlog of earlier steps to clear before another
// step: until every counted expected id has arrived, or none has arrived
// for quiet (the rest are late or lost, and waiting longer proves
// nothing), or timeout passes, or ctx ends. It returns how long it waited
// and how many counted ids were still missing.
func (l *Ledger) Settle(ctx context.Context, quiet, timeout time.Duration) (time.Duration, int) {
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	progress, best := start, -1
	for {
		l.Poll()
		_, missing := l.lastArrival()
		now := time.Now()
		if best < 0 || missing < best {
			progress, best = now, missing
		}
		if missing == 0 || now.Sub(progress) >= quiet || now.Sub(start) >= timeout {
			return now.Sub(start), missing
		}
		select {
		case <-ctx.Done():
			return time.Since(start), missing
		case <-tick.C:
		}
	}
}

// lastArrival returns the latest first delivery and how many counted
// expected ids have none.
func (l *Ledger) lastArrival() (time.Time, int) {
	var last time.Time
	missing := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for _, s := range sh.expected {
			if s.step < 0 {
				continue // warm-up: not counted, not waited for
			}
			if s.arrivals == 0 {
				missing++
			} else if s.first.After(last) {
				last = s.first
			}
		}
		sh.mu.Unlock()
	}
	return last, missing
}

// Figures are one step's (or the run's) delivery.
type Figures struct {
	Expected, Delivered, Duplicates, Rejected int64
	// Lost counts the ids still missing after a complete drain (nothing
	// arrived for its quiet period); Undelivered those missing before the
	// drain ended, or after one that ended while arrivals were still coming.
	Lost, Undelivered int64
	// LostIDs lists the first MaxLostIDs missing ids (lost or
	// undelivered), in the order they were sent.
	LostIDs []string
	// Latency summarises intended send → first delivery.
	Latency metrics.Latency
	// Missed counts the arrivals the sinks recorded but did not keep for
	// the ledger (their unread log was full: sink.MaxUnread arrivals
	// between two polls), over the whole run so far whatever the step.
	// Non-zero makes every figure incomplete: some lost ids may have
	// arrived, and delivered, duplicates and latency may be short.
	Missed int64
}

// Step returns the figures of step (-1: every counted step).
func (l *Ledger) Step(step int) Figures {
	var f Figures
	h := metrics.NewHistogram()
	type lost struct {
		id string
		at time.Time
	}
	var lostIDs []lost
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for k, s := range sh.expected {
			if s.step < 0 || (step >= 0 && s.step != step) {
				continue
			}
			f.Expected++
			switch {
			case s.arrivals == 0:
				if l.drained && l.complete {
					f.Lost++
				} else {
					f.Undelivered++
				}
				lostIDs = append(lostIDs, lost{k.id, s.at})
			default:
				f.Delivered++
				f.Duplicates += int64(s.arrivals - 1)
				// The histogram's range bounds the value; nothing else does:
				// a delivery before its own request's answer is a real one.
				us := int64(s.first.Sub(s.at) / time.Microsecond)
				_ = h.RecordValue(min(max(us, metrics.LowestUS), metrics.HighestUS))
			}
		}
		for rk, n := range sh.rejected {
			if rk.step >= 0 && (step < 0 || rk.step == step) {
				f.Rejected += n
			}
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(lostIDs, func(a, b lost) int { return a.at.Compare(b.at) })
	for _, x := range lostIDs[:min(len(lostIDs), MaxLostIDs)] {
		f.LostIDs = append(f.LostIDs, x.id)
	}
	f.Latency = metrics.Summarize(h)
	for _, t := range l.sinks {
		f.Missed += t.missed
	}
	return f
}

// Point is one second of deliveries.
type Point struct {
	// T is the end of the second, in seconds from base.
	T float64 `json:"t_s"`
	// Arrived counts first deliveries in the second.
	Arrived int64 `json:"arrived"`
	// Backlog is the ids expected by the end of the second and not yet
	// delivered.
	Backlog int64 `json:"backlog"`
}

// Series returns one point per second from base to end.
func (l *Ledger) Series(base, end time.Time) []Point {
	n := int(end.Sub(base)/time.Second) + 1
	if n <= 0 {
		return nil
	}
	expected := make([]int64, n+1)
	arrived := make([]int64, n+1)
	sec := func(t time.Time) int { return min(max(int(t.Sub(base)/time.Second), 0), n) }
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for _, s := range sh.expected {
			expected[sec(s.at)]++
			if s.arrivals > 0 {
				arrived[sec(s.first)]++
			}
		}
		sh.mu.Unlock()
	}
	out := make([]Point, 0, n)
	var cumE, cumA int64
	for i := range n {
		cumE += expected[i]
		cumA += arrived[i]
		out = append(out, Point{T: float64(i + 1), Arrived: arrived[i], Backlog: max(cumE-cumA, 0)})
	}
	return out
}
