package monitor

import (
	"math"
	"slices"
	"sort"
	"time"
)

// How a history bounds its memory. The recent readings are kept one by one,
// as many as fit in historyBudget at 8 bytes a series (at least minRaw);
// older ones are folded, blockReadings at a time, into blocks of 64 bytes a
// series; when the blocks no longer fit in historyBudget (at least
// minBlocks of them) neighbours merge, so the oldest blocks grow coarser.
// With 30 series that is 35,000 readings one by one, nearly ten hours at
// 1 Hz; with 1,000 series about 17 minutes; at most 16 MB in all.
const (
	historyBudget = 8 << 20
	blockReadings = 60
	minRaw        = 2 * blockReadings
	minBlocks     = 16
)

// acc summarises one series over consecutive readings. Summaries merge:
// a.merge(b) for b following a is the summary of both, whatever the
// grouping, so blocks give the same figures as the readings they fold.
type acc struct {
	n                          int64
	first, last, max, sum, inc float64
	firstAt, lastAt            int64 // Unix nanoseconds of the first and last values
}

// add appends one value read at at.
func (a *acc) add(v float64, at int64) {
	a.merge(acc{n: 1, first: v, last: v, max: v, sum: v, firstAt: at, lastAt: at})
}

// merge appends b, which follows a in time. The increase from a's last
// value to b's first counts as a counter's: a drop is a reset (the counter
// restarted from zero), so the increase is the new value.
func (a *acc) merge(b acc) {
	switch {
	case b.n == 0:
		return
	case a.n == 0:
		*a = b
		return
	}
	step := b.first - a.last
	if b.first < a.last {
		step = b.first
	}
	a.inc += step + b.inc
	a.last, a.lastAt = b.last, b.lastAt
	a.max = max(a.max, b.max)
	a.sum += b.sum
	a.n += b.n
}

// stat is the summary's Stat; Rate is the increase per second between the
// first and the last values, for counters.
func (a acc) stat(counter bool) Stat {
	st := Stat{Last: a.last, Max: a.max, Mean: a.sum / float64(a.n), Counter: counter}
	if secs := float64(a.lastAt-a.firstAt) / float64(time.Second); counter && secs > 0 {
		st.Rate = a.inc / secs
	}
	return st
}

// row is one reading's values (vals, NaN where a series was absent) or a
// block of readings' summaries (accs), both by series id. A row made
// before a series was first kept is shorter than the ids.
type row struct {
	from, to time.Time // the first and last readings; equal for one reading
	vals     []float64
	accs     []acc
}

// foldInto merges the row's figures into into, which is at least as long.
func (r *row) foldInto(into []acc) {
	at := r.from.UnixNano()
	for id, v := range r.vals {
		if !math.IsNaN(v) {
			into[id].add(v, at)
		}
	}
	for id := range r.accs {
		into[id].merge(r.accs[id])
	}
}

// history holds a Watcher's scraped values: blocks first, then the recent
// readings one by one, each part in time order. It is not safe for
// concurrent use: the Watcher's lock guards it.
type history struct {
	rows   []row
	blocks int // how many of rows are blocks
	budget int // bytes for the readings kept one by one, and for the blocks
	// keep, when set (Watcher.Keep), caps the readings kept one by one at
	// that many (at least minRaw) and the blocks at as many as would
	// fold them (at least minBlocks), whatever the budget.
	keep int
}

// add files one reading's values, vals by series id, with series ids in
// all so far.
func (h *history) add(at time.Time, vals []float64, series int) {
	raw := h.rows[h.blocks:]
	i := sort.Search(len(raw), func(i int) bool { return raw[i].from.After(at) })
	h.rows = slices.Insert(h.rows, h.blocks+i, row{from: at, to: at, vals: vals})
	h.compact(series)
}

// compact folds the oldest readings into a block when too many are kept
// one by one, and merges neighbouring blocks when there are too many.
func (h *history) compact(series int) {
	budget := h.budget
	if budget == 0 {
		budget = historyBudget
	}
	n := max(series, 1)
	rawCap, blockCap := max(minRaw, budget/(8*n)), max(minBlocks, budget/(64*n))
	if h.keep > 0 {
		rawCap, blockCap = min(rawCap, max(minRaw, h.keep)), min(blockCap, max(minBlocks, h.keep/blockReadings))
	}
	if len(h.rows)-h.blocks > rawCap {
		b := row{from: h.rows[h.blocks].from, to: h.rows[h.blocks+blockReadings-1].to, accs: make([]acc, series)}
		for i := range blockReadings {
			h.rows[h.blocks+i].foldInto(b.accs)
		}
		h.rows[h.blocks] = b
		h.rows = slices.Delete(h.rows, h.blocks+1, h.blocks+blockReadings)
		h.blocks++
	}
	if h.blocks > blockCap {
		k := 0
		for i := 0; i < h.blocks; i += 2 {
			b := h.rows[i]
			if i+1 < h.blocks {
				next := h.rows[i+1]
				merged := make([]acc, max(len(b.accs), len(next.accs)))
				copy(merged, b.accs)
				next.foldInto(merged)
				b = row{from: b.from, to: next.to, accs: merged}
			}
			h.rows[k] = b
			k++
		}
		h.rows = slices.Delete(h.rows, k, h.blocks)
		h.blocks = k
	}
}

// summarise merges the figures of the readings in [from, to] into into,
// which has one summary per series id. A block counts when its middle is
// in the window: a window that starts or ends inside a block is off by at
// most that block's readings at that edge.
func (h *history) summarise(from, to time.Time, into []acc) {
	for i := range h.rows[:h.blocks] {
		b := &h.rows[i]
		mid := b.from.Add(b.to.Sub(b.from) / 2)
		if !mid.Before(from) && !mid.After(to) {
			b.foldInto(into)
		}
	}
	raw := h.rows[h.blocks:]
	lo := sort.Search(len(raw), func(i int) bool { return !raw[i].from.Before(from) })
	hi := sort.Search(len(raw), func(i int) bool { return raw[i].from.After(to) })
	for i := lo; i < hi; i++ {
		raw[i].foldInto(into)
	}
}

// at returns the values of the reading taken at t, or nil when there is
// none or it has been folded into a block.
func (h *history) at(t time.Time) []float64 {
	raw := h.rows[h.blocks:]
	i := sort.Search(len(raw), func(i int) bool { return !raw[i].from.Before(t) })
	if i < len(raw) && raw[i].from.Equal(t) {
		return raw[i].vals
	}
	return nil
}
