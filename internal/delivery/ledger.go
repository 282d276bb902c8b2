package delivery

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

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
	// polling serialises Poll: the live line polls once a second from a
	// step's collector, the run between steps and while it drains.
	polling sync.Mutex
	// progress is when the last first delivery of an expected id arrived
	// (zero: none yet). Poll, its only writer, holds polling.
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
	// counts holds, per step (-1: warm-up), the ids expected and those
	// delivered so far: what the live line shows, without a pass over
	// every id.
	counts map[int]*Count
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
		l.shards[i].counts = map[int]*Count{}
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
		sh.count(step).Expected++
	}
	sh.mu.Unlock()
}

func (sh *shard) count(step int) *Count {
	c := sh.counts[step]
	if c == nil {
		c = &Count{}
		sh.counts[step] = c
	}
	return c
}

// Reject notes an iteration of step that the target did not accept: its id
// is not expected anywhere.
func (l *Ledger) Reject(sinkIdx, step int) {
	sh := &l.shards[0]
	sh.mu.Lock()
	sh.rejected[rejectKey{sinkIdx, step}]++
	sh.mu.Unlock()
}

// Poll reads the sinks' new arrivals and matches them. It is safe from
// several goroutines: one polls at a time.
func (l *Ledger) Poll() {
	l.polling.Lock()
	defer l.polling.Unlock()
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
		if s.arrivals == 1 {
			sh.count(s.step).Delivered++
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
// it) they are undelivered: queued, perhaps, not proven lost. each, if not
// nil, is told how the drain stands about once a second, on the caller's
// goroutine.
func (l *Ledger) Drain(ctx context.Context, stop time.Time, timeout, quiet time.Duration, each func(Draining)) (time.Duration, bool) {
	deadline := stop.Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	end := func(took time.Duration, complete bool) (time.Duration, bool) {
		l.drained, l.complete = true, complete
		return took, complete
	}
	told, before := stop, l.delivered()
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
		if each != nil && now.Sub(told) >= time.Second {
			told = now
			each(Draining{Elapsed: now.Sub(stop), Timeout: timeout, Missing: int64(missing), Arrived: l.delivered() - before})
		}
		select {
		case <-ctx.Done():
			now := time.Now()
			return end(now.Sub(stop), l.quietFor(quiet, stop, now))
		case <-tick.C:
		}
	}
}

// Draining is how a drain stands.
type Draining struct {
	// Elapsed is the time since the load stopped; Timeout the longest the
	// drain waits.
	Elapsed, Timeout time.Duration
	// Missing counts the counted ids not delivered yet; Arrived those
	// first delivered since the drain began.
	Missing, Arrived int64
}

// delivered counts the counted ids delivered so far.
func (l *Ledger) delivered() int64 {
	var n int64
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for step, c := range sh.counts {
			if step >= 0 {
				n += c.Delivered
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// Count is how a step's delivery stands while it runs.
type Count struct {
	// Expected and Delivered count the step's accepted ids and those of
	// them delivered so far.
	Expected, Delivered int64
	// Backlog counts every accepted id not delivered yet, warm-ups' and
	// earlier steps' included: the queue behind the target, as the sinks
	// see it.
	Backlog int64
}

// Now polls the sinks and returns how step's delivery stands.
func (l *Ledger) Now(step int) Count {
	l.Poll()
	var out Count
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for st, c := range sh.counts {
			if st == step {
				out.Expected += c.Expected
				out.Delivered += c.Delivered
			}
			out.Backlog += c.Expected - c.Delivered
		}
		sh.mu.Unlock()
	}
	return out
}

// Backlog returns, for each of times, how many accepted ids (of every
// step, warm-ups included) had been sent by then and not yet delivered:
// the queue behind the target at that moment, read back from when each id
// was meant to be sent and when it first arrived; and the seconds those
// ids had waited by then, added (divided by the count, their mean wait:
// flat while the target keeps up, whatever the rate it accepts). Call it
// after a Poll later than the last of times.
func (l *Ledger) Backlog(times ...time.Time) (n []int64, waitS []float64) {
	n, waitS = make([]int64, len(times)), make([]float64, len(times))
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for _, s := range sh.expected {
			for j, t := range times {
				if !s.at.After(t) && (s.arrivals == 0 || s.first.After(t)) {
					n[j]++
					waitS[j] += t.Sub(s.at).Seconds()
				}
			}
		}
		sh.mu.Unlock()
	}
	return n, waitS
}

// Await polls until every id of step has arrived or been waited for at
// least wait since its intended start, deadline passes or ctx ends: then
// each id's latency is either known or known to be at least wait, which
// is what a threshold of wait on a delivery percentile needs to judge the
// step.
func (l *Ledger) Await(ctx context.Context, step int, wait time.Duration, deadline time.Time) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		l.Poll()
		now := time.Now()
		if !now.Before(deadline) || !l.waiting(step, now.Add(-wait)) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// waiting reports whether an id of step meant to be sent after since has
// not arrived yet.
func (l *Ledger) waiting(step int, since time.Time) bool {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for _, s := range sh.expected {
			if s.step == step && s.arrivals == 0 && s.at.After(since) {
				sh.mu.Unlock()
				return true
			}
		}
		sh.mu.Unlock()
	}
	return false
}

// DeliveredBy counts the ids of step first delivered by t.
func (l *Ledger) DeliveredBy(step int, t time.Time) int64 {
	var n int64
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for _, s := range sh.expected {
			if s.step == step && s.arrivals > 0 && !s.first.After(t) {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// quietFor reports whether the drain, from stop to now, saw no delivery
// for quiet: only time it watched counts (a drain of 0, or one ended at
// once, proves nothing lost).
func (l *Ledger) quietFor(quiet time.Duration, stop, now time.Time) bool {
	l.polling.Lock()
	last := l.progress
	l.polling.Unlock()
	return quiet > 0 && now.Sub(maxTime(last, stop)) >= quiet
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
	// Latency summarises intended send → first delivery. A missing id
	// counts in it at its wait so far (a censored sample: its latency is
	// at least that), so that a percentile the missing ids reach is a
	// lower bound rather than the figure of the ids that made it.
	Latency metrics.Latency
	// Upper holds, when ids are missing, each percentile's upper bound
	// (keys as Latency's JSON names: p50, p90, p95, p99, p999): its value
	// if every missing id were never delivered. A percentile whose rank
	// falls among the missing ids has none and is absent; one equal to its
	// Latency value is exact. Nil when no id is missing: Latency is exact.
	Upper map[string]float64
	// Missed counts the arrivals the sinks recorded but did not keep for
	// the ledger (their unread log was full: sink.MaxUnread arrivals
	// between two polls), over the whole run so far whatever the step.
	// Non-zero makes every figure incomplete: some lost ids may have
	// arrived, and delivered, duplicates and latency may be short.
	Missed int64
}

// quantiles are the percentiles of metrics.Latency that have upper bounds,
// by their JSON names.
var quantiles = []struct {
	name string
	q    float64
}{{"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999}}

// Step returns the figures of step (-1: every counted step) as they stand
// at now: an id not delivered by then counts in the latency at its wait
// until now.
func (l *Ledger) Step(step int, now time.Time) Figures {
	var f Figures
	all, arrived := metrics.NewHistogram(), metrics.NewHistogram()
	record := func(d time.Duration, hs ...*hdrhistogram.Histogram) {
		// The histogram's range bounds the value; nothing else does: a
		// delivery before its own request's answer is a real one.
		us := min(max(int64(d/time.Microsecond), metrics.LowestUS), metrics.HighestUS)
		for _, h := range hs {
			_ = h.RecordValue(us)
		}
	}
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
				record(now.Sub(s.at), all)
			default:
				f.Delivered++
				f.Duplicates += int64(s.arrivals - 1)
				record(s.first.Sub(s.at), all, arrived)
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
	f.Latency = metrics.Summarize(all)
	f.Upper = upper(all.TotalCount(), arrived)
	for _, t := range l.sinks {
		f.Missed += t.missed
	}
	return f
}

// upper returns each percentile's upper bound over n ids of which those in
// arrived were delivered (nil when all were): the value at the same rank
// with every missing id ranked last, as if it never arrived; absent where
// that rank falls among the missing.
func upper(n int64, arrived *hdrhistogram.Histogram) map[string]float64 {
	d := arrived.TotalCount()
	if d == n {
		return nil
	}
	out := map[string]float64{}
	for _, x := range quantiles {
		// The rank hdrhistogram reads the percentile at over all n ids
		// (its percentileRank, the same arithmetic).
		rank := n
		if r := (x.q*100/100)*float64(n) + 0.5; r < 1 {
			rank = 1
		} else if r < float64(n) {
			rank = int64(r)
		}
		if rank > d {
			continue
		}
		out[x.name] = metrics.Quantile(arrived, float64(rank)/float64(d))
	}
	return out
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
