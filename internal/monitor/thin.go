package monitor

import (
	"slices"
	"time"
)

// How a Watcher bounds its readings. It keeps the readings of the last
// DefaultKeep intervals one by one (four hours at 1 Hz, about 600 KB);
// past twice that, the older half is thinned: each two neighbouring
// readings become one, which holds the later one's sample (CPU is
// cumulative, so a window's CPU from first to last is still exact at the
// readings kept) and counts what both stood for: readings, failures,
// scrapes, the most memory seen. So the oldest readings grow coarser as a
// run grows, and a window that starts or ends among thinned readings is
// off by at most those readings at that edge. Keep sets a smaller bound
// for a run that only ever asks about its recent past (a soak, whose
// windows are summarised as they end).
const DefaultKeep = 4 * 3600

// minKeep is the fewest readings Keep keeps one by one.
const minKeep = 64

// tally is what one reading stands for: itself, or the readings thinned
// into it (reading.sum).
type tally struct {
	readings, sources, errors, skipped int
	scrapes, scrapeErrs                int
	scrapeOK, scrapeNothing            int
	rssMax                             int64
	slowest                            time.Duration
	// most is, per selector, the most series seen and dropped in one
	// scrape; nil when every scrape matched every selector and dropped
	// none.
	most []selCount
}

// tally returns what r stands for, with selectors selectors.
func (r *reading) tally(selectors int) tally {
	if r.sum != nil {
		return *r.sum
	}
	t := tally{readings: 1}
	if r.failed() {
		t.errors = 1
	}
	if r.skipped {
		t.skipped = 1
	}
	if r.hasSrc {
		t.sources, t.rssMax = 1, r.sample.RSSBytes
	}
	if r.scraped {
		t.scrapes, t.slowest = 1, r.took
		if r.scrapeErr != "" {
			t.scrapeErrs = 1
		} else {
			t.scrapeOK = 1
			t.noteCounts(r.counts, selectors)
		}
	}
	return t
}

// noteCounts adds one successful scrape's counts (nil: every selector
// matched and none dropped).
func (t *tally) noteCounts(counts []selCount, selectors int) {
	if counts == nil {
		return
	}
	if t.most == nil {
		t.most = make([]selCount, selectors)
	}
	none := true
	for i, c := range counts {
		none = none && c.seen == 0
		t.most[i].seen = max(t.most[i].seen, c.seen)
		t.most[i].dropped = max(t.most[i].dropped, c.dropped)
	}
	if none {
		t.scrapeNothing++
	}
}

// add merges b into t.
func (t *tally) add(b tally, selectors int) {
	t.readings += b.readings
	t.sources += b.sources
	t.errors += b.errors
	t.skipped += b.skipped
	t.scrapes += b.scrapes
	t.scrapeErrs += b.scrapeErrs
	t.scrapeOK += b.scrapeOK
	t.scrapeNothing += b.scrapeNothing
	t.rssMax = max(t.rssMax, b.rssMax)
	t.slowest = max(t.slowest, b.slowest)
	if b.most != nil {
		if t.most == nil {
			t.most = make([]selCount, selectors)
		}
		for i, c := range b.most {
			t.most[i].seen = max(t.most[i].seen, c.seen)
			t.most[i].dropped = max(t.most[i].dropped, c.dropped)
		}
	}
}

// Keep bounds the readings kept one by one to about the last n (at
// least 64; zero: DefaultKeep), and the scraped values kept one by one to
// as many (older ones are folded into blocks, history.go). The readings'
// room is made at once, so that the Watcher's memory does not grow as it
// fills: a run that asks only about its recent past (a soak) holds a
// fixed memory from its first minutes. Call it before Start.
func (w *Watcher) Keep(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n > 0 {
		n = max(n, minKeep)
		w.readings = slices.Grow(w.readings, 2*n+2-len(w.readings))
	}
	w.keep, w.hist.keep = n, n
}

// thin halves the older half of the readings when there are more than
// twice the bound: each two neighbours become one (see DefaultKeep). The
// caller holds w.mu.
func (w *Watcher) thin() {
	keep := w.keep
	if keep == 0 {
		keep = DefaultKeep
	}
	if len(w.readings) <= 2*keep {
		return
	}
	half := len(w.readings) / 2
	sel := len(w.metrics)
	k := 0
	for i := 0; i+1 < half; i += 2 {
		w.readings[k] = merged(&w.readings[i], &w.readings[i+1], sel)
		k++
	}
	if half%2 == 1 {
		w.readings[k] = w.readings[half-1]
		k++
	}
	n := copy(w.readings[k:], w.readings[half:])
	clear(w.readings[k+n:]) // drop the references the tail held
	w.readings = w.readings[:k+n]
}

// merged is the reading that stands for a and b, b the later: b's sample
// when it has one (else a's), filed at that sample's time, the latest
// scrape error's text, and the counts of both.
func merged(a, b *reading, selectors int) reading {
	t := a.tally(selectors)
	t.add(b.tally(selectors), selectors)
	out := *b
	if !b.hasSrc && a.hasSrc {
		out.sample, out.hasSrc, out.at = a.sample, true, a.at
	}
	if out.scrapeErr == "" {
		out.scrapeErr = a.scrapeErr
	}
	out.counts, out.sum = nil, &t
	return out
}
