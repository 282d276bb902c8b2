package monitor

import (
	"context"
	"sort"
	"sync"
	"time"
)

// DefaultInterval is the Watcher's sampling interval when given zero.
const DefaultInterval = time.Second

// reading is one tick of a Watcher: a Sample if the source was read, the
// scraped series if the scraper answered.
type reading struct {
	at      time.Time
	sample  Sample
	hasSrc  bool             // sample is valid
	metrics map[string]Point // nil when not scraped or the scrape failed
	failed  bool             // the source or the scraper returned an error
}

// Watcher samples a Source and a Scraper, each optional, every interval on
// its own goroutine and keeps every reading in memory. Start and Stop are
// for its owner; Window, Series and Err are safe from any goroutine.
type Watcher struct {
	src      Source
	scr      *Scraper
	interval time.Duration

	mu       sync.Mutex
	readings []reading // in time order
	lastErr  error

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
	return &Watcher{src: src, scr: scr, interval: interval, done: make(chan struct{})}
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

// sample takes one reading and files it at the time the source reports
// (or at, without a source). Tests call it directly with made-up times.
func (w *Watcher) sample(ctx context.Context, at time.Time) {
	r := reading{at: at}
	var err error
	if w.src != nil {
		var s Sample
		if s, err = w.src.Read(); err == nil {
			r.sample, r.hasSrc = s, true
			if !s.At.IsZero() {
				r.at = s.At
			}
		}
	}
	if w.scr != nil {
		m, serr := w.scr.scrape(ctx)
		if ctx.Err() != nil {
			return // stopped mid-scrape: not a reading
		}
		if serr == nil {
			r.metrics = m
		} else {
			err = serr
		}
	}
	r.failed = err != nil
	w.add(r, err)
}

// add files a reading, keeping readings in time order.
func (w *Watcher) add(r reading, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.lastErr = err
	}
	i := sort.Search(len(w.readings), func(i int) bool { return w.readings[i].at.After(r.at) })
	w.readings = append(w.readings, reading{})
	copy(w.readings[i+1:], w.readings[i:])
	w.readings[i] = r
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
