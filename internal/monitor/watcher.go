package monitor

import (
	"context"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// DefaultInterval is the Watcher's sampling interval when given zero.
const DefaultInterval = time.Second

// reading is one tick of a Watcher: a Sample if the source was read, and
// how the scrape went if there is a scraper. The scraped values themselves
// are in the Watcher's history.
type reading struct {
	at        time.Time
	sample    Sample
	hasSrc    bool // sample is valid
	srcFailed bool // the source returned an error
	scraped   bool // the scraper was asked
	skipped   bool // the scraper was not asked: the last scrape was slow
	took      time.Duration
	// scrapeErr is the scrape's error, "" when it succeeded. Consecutive
	// failures with the same message share one string.
	scrapeErr string
	// counts says what each selector matched, when the scrape succeeded
	// and some selector matched nothing or dropped series; nil otherwise.
	counts []selCount
	// sum, when set, is what the reading stands for: it was thinned from
	// several (thin.go), whose flags above it no longer speaks for.
	sum *tally
}

// failed reports whether the source or the scraper failed.
func (r *reading) failed() bool { return r.srcFailed || r.scrapeErr != "" }

// Watcher samples a Source and a Scraper, each optional, every interval on
// its own goroutine. It keeps the readings of the source, the older ones
// thinned (thin.go), and the scraped values in a history of bounded size. Start and Stop are for its owner;
// Window, Series and Err are safe from any goroutine.
type Watcher struct {
	src      Source
	scr      *Scraper
	interval time.Duration
	// metrics are the scraper's selectors in their canonical form, and
	// maxSeries the most series it keeps of each, for messages.
	metrics   []string
	maxSeries int
	// spacing is scrapeSpacing; tests that need every scrape set it to 0.
	// It and nextScrape belong to the sampling goroutine.
	spacing    float64
	nextScrape time.Time

	mu       sync.Mutex
	readings []reading // in time order
	keep     int       // the readings kept one by one (Keep); 0: DefaultKeep
	lastErr  error
	// lastScrapeErr is the text of the last scrape error.
	lastScrapeErr string
	series        []seriesInfo // the kept series, by id
	hist          history

	startOnce, stopOnce sync.Once
	cancel              context.CancelFunc
	done                chan struct{}
}

// NewWatcher returns a Watcher of src and scr, either of which may be nil,
// sampling every interval (zero means DefaultInterval). It does nothing
// until Start.
func NewWatcher(src Source, scr *Scraper, interval time.Duration) *Watcher {
	if interval <= 0 {
		interval = DefaultInterval
	}
	w := &Watcher{src: src, scr: scr, interval: interval, spacing: scrapeSpacing, done: make(chan struct{})}
	if scr != nil {
		w.maxSeries = scr.table.max
		for _, s := range scr.sels {
			w.metrics = append(w.metrics, s.String())
		}
	}
	return w
}

// Start takes a first reading at once and then one every interval, until
// Stop. Calling it again does nothing.
func (w *Watcher) Start() {
	w.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		go w.loop(ctx)
	})
}

// Stop ends the sampling and waits for the sampling goroutine, which ends
// promptly even in the middle of a scrape. Readings stay available. Stop
// before Start, or twice, is harmless.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() {
		w.startOnce.Do(func() { close(w.done) }) // never started: nothing to wait for
		if w.cancel != nil {
			w.cancel()
		}
		<-w.done
	})
}

func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	w.sample(ctx, time.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			w.sample(ctx, now)
		}
	}
}

// scrapeShare is the part of the interval a scrape may take, at most: a
// slow or endless answer never delays the next reading.
const scrapeShare = 0.75

// scrapeSpacing keeps the scraping to a tenth of the Watcher's time: after
// a scrape that took d, the next waits d × scrapeSpacing. An endpoint that
// parses in 200 ms (100,000 series) is scraped every two seconds, one that
// times out every eight, and the generator keeps its CPU for the load.
const scrapeSpacing = 10

// sample takes one reading and files it at the time the source reports
// (or at, without a source). Tests call it directly with made-up times.
func (w *Watcher) sample(ctx context.Context, at time.Time) {
	r := reading{at: at}
	var srcErr, scrErr error
	if w.src != nil {
		var s Sample
		if s, srcErr = w.src.Read(); srcErr == nil {
			r.sample, r.hasSrc = s, true
			if !s.At.IsZero() {
				r.at = s.At
			}
		}
		r.srcFailed = srcErr != nil
	}
	var res scraped
	switch {
	case w.scr == nil:
	case at.Before(w.nextScrape):
		r.skipped = true
	default:
		start := time.Now()
		sctx, cancel := context.WithTimeout(ctx, time.Duration(scrapeShare*float64(w.interval)))
		res, scrErr = w.scr.scrape(sctx)
		cancel()
		if ctx.Err() != nil {
			return // stopped mid-scrape: not a reading
		}
		r.scraped, r.took = true, time.Since(start)
		w.nextScrape = at.Add(time.Duration(w.spacing * float64(r.took)))
		if scrErr == nil {
			r.counts = notable(res.counts)
		}
	}
	w.add(r, res, srcErr, scrErr)
}

// notable returns counts if some selector dropped series or none matched
// anything, else nil: the usual reading costs nothing more.
func notable(counts []selCount) []selCount {
	none := true
	for _, c := range counts {
		if c.dropped > 0 {
			return counts
		}
		none = none && c.seen == 0
	}
	if none {
		return counts
	}
	return nil
}

// add files a reading, the source's and the scraper's errors and the
// scraped values, keeping readings in time order.
func (w *Watcher) add(r reading, res scraped, srcErr, scrErr error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if srcErr != nil {
		w.lastErr = srcErr
	}
	if scrErr != nil {
		w.lastErr = scrErr
		if msg := scrErr.Error(); msg != w.lastScrapeErr {
			w.lastScrapeErr = msg
		}
		r.scrapeErr = w.lastScrapeErr // the same text as before: no new string kept
	}
	i := sort.Search(len(w.readings), func(i int) bool { return w.readings[i].at.After(r.at) })
	w.readings = slices.Insert(w.readings, i, r)
	w.thin()
	w.series = append(w.series, res.added...)
	if slices.ContainsFunc(res.values, func(v float64) bool { return !math.IsNaN(v) }) {
		w.hist.add(r.at, res.values, len(w.series))
	}
}

// Err returns the most recent error from the source or the scraper, or nil
// if none has failed yet. Failures do not stop the sampling.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

// between returns the readings in [from, to] and the index of the first
// one in w.readings. The caller holds w.mu.
func (w *Watcher) between(from, to time.Time) ([]reading, int) {
	lo := sort.Search(len(w.readings), func(i int) bool { return !w.readings[i].at.Before(from) })
	hi := sort.Search(len(w.readings), func(i int) bool { return w.readings[i].at.After(to) })
	if hi < lo {
		hi = lo
	}
	return w.readings[lo:hi], lo
}
