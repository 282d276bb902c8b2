package monitor

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Figures summarise a Watcher's readings over a time window, typically one
// load step. MB figures are in units of 2^20 bytes.
type Figures struct {
	// Samples counts the readings in the window; 0 means nothing was
	// measured and every other figure is zero.
	Samples int
	// SourceSamples counts the readings in the window where the process or
	// the cgroup was read. Zero means that CPUPct, RSSMB, RSSMaxMB, Threads
	// and FDs were not measured (only an endpoint was scraped, or every
	// read failed): they are zero for want of a reading, not measured zeros.
	SourceSamples int
	// Errors counts the readings in the window where the source or the
	// scraper failed.
	Errors int
	// Scrapes counts the scrapes of the metrics endpoint in the window;
	// ScrapeErrors those that failed (refused, a bad status, no complete
	// answer within the timeout, a body over MaxScrapeBytes, not the text
	// format). A failed scrape adds nothing to Metrics.
	Scrapes, ScrapeErrors int
	// ScrapeError is the error of the last failed scrape in the window;
	// empty when none failed.
	ScrapeError string
	// CPUPct is the CPU used over the window in percent of one core (two
	// busy cores give 200): the CPU time between the first and the last
	// readings in the window over the wall time between them. Zero with
	// fewer than two readings.
	CPUPct float64
	// RSSMB is the resident memory at the last reading; RSSMaxMB the most
	// seen in the window.
	RSSMB, RSSMaxMB float64
	// Threads and FDs are counts at the last reading (0 when unknown).
	Threads, FDs int
	// Exited is true when the process had exited (or the cgroup had gone)
	// by the last reading in or before the window.
	Exited bool
	// Restarts are the times of the readings in the window that saw the
	// tree's main process gone and the root alive (Sample.Restarts): the
	// target restarted between that reading and the one before. Nil when
	// it did not.
	Restarts []time.Time
	// Metrics summarise the scraped series, by name{labels}: at most
	// MaxSeriesPerMetric of each selected metric.
	Metrics map[string]Stat
	// Warnings say in sentences what the figures lack: series left out
	// past MaxSeriesPerMetric, failed scrapes, scrapes skipped because the
	// endpoint was slow to scrape, an endpoint that served none of the
	// selected metrics. One sentence per circumstance; nil when there is
	// nothing to say.
	Warnings []string
}

// Stat summarises one scraped series over a window.
type Stat struct {
	// Last, Max and Mean are of the values scraped in the window.
	Last, Max, Mean float64
	// Rate is a counter's increase per second between its first and last
	// values in the window; a drop is taken as a reset (the counter
	// restarted from zero). Zero for gauges.
	Rate float64
	// Counter is true for counters: read Rate, not Last.
	Counter bool
}

// SeriesPoint is one reading, for plots.
type SeriesPoint struct {
	// At is when the reading was taken.
	At time.Time
	// CPUPct is the CPU used since the previous reading, in percent of one
	// core; 0 for the first reading.
	CPUPct float64
	// RSSMB is the resident memory at this reading (2^20 bytes).
	RSSMB float64
	// Measured says the reading holds the process's or cgroup's CPU and
	// memory; false for one of the metrics endpoint alone, whose CPUPct
	// and RSSMB are not figures but zeros.
	Measured bool
	// Metrics are the scraped series' values at this reading; nil for a
	// reading old enough to have been folded into a summary (see Watcher).
	Metrics map[string]float64
}

// Window summarises the readings taken in [from, to].
func (w *Watcher) Window(from, to time.Time) Figures {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, lo := w.between(from, to)
	if len(rs) == 0 {
		return Figures{}
	}
	var f Figures
	var first, last *reading
	var all tally
	sel := len(w.metrics)
	for i := range rs {
		r := &rs[i]
		c := r.tally(sel)
		all.add(c, sel)
		if c.scrapeErrs > 0 {
			f.ScrapeError = r.scrapeErr
		}
		if !r.hasSrc {
			continue
		}
		if first == nil {
			first = r
		}
		last = r
	}
	f.Samples, f.SourceSamples, f.Errors = all.readings, all.sources, all.errors
	f.Scrapes, f.ScrapeErrors = all.scrapes, all.scrapeErrs
	f.RSSMaxMB = float64(all.rssMax) / mib
	found := scrapeFinds{skipped: all.skipped, slowest: all.slowest, ok: all.scrapeOK, nothing: all.scrapeNothing, most: all.most}
	if last != nil {
		f.CPUPct = cpuPct(*first, *last)
		f.RSSMB = float64(last.sample.RSSBytes) / mib
		f.Threads, f.FDs = last.sample.Threads, last.sample.FDs
	}
	f.Restarts = w.restarts(lo, len(rs))
	// Dead stays dead: the last source reading up to the window's end tells.
	for i := lo + len(rs) - 1; i >= 0; i-- {
		if w.readings[i].hasSrc {
			f.Exited = !w.readings[i].sample.Alive
			break
		}
	}
	f.Metrics = w.summarise(from, to)
	f.Warnings = w.warnings(&f, &found)
	return f
}

// restarts returns the times of the source readings among the n from
// index lo whose restart count rose since the source reading before. The
// caller holds w.mu.
func (w *Watcher) restarts(lo, n int) []time.Time {
	var out []time.Time
	prev := -1
	for i := lo - 1; i >= 0; i-- {
		if w.readings[i].hasSrc {
			prev = w.readings[i].sample.Restarts
			break
		}
	}
	for i := lo; i < lo+n; i++ {
		r := &w.readings[i]
		if !r.hasSrc {
			continue
		}
		if prev >= 0 && r.sample.Restarts > prev {
			out = append(out, r.at)
		}
		prev = r.sample.Restarts
	}
	return out
}

// scrapeFinds gathers what the successful scrapes of a window found.
type scrapeFinds struct {
	skipped int           // readings that did not scrape: the last scrape was slow
	slowest time.Duration // the longest scrape
	ok      int           // successful scrapes
	nothing int           // of which, those where no selector matched anything
	most    []selCount    // per selector, the most seen and dropped in one scrape
}

// warnings says what the figures lack. The caller holds w.mu.
func (w *Watcher) warnings(f *Figures, found *scrapeFinds) []string {
	var out []string
	for i, c := range found.most {
		if c.dropped > 0 {
			out = append(out, fmt.Sprintf("%s: the endpoint serves %d series of it; ceiling keeps the first %d of a metric, "+
				"so %d are not in these figures (narrow the selection with labels)",
				w.metrics[i], c.seen, w.maxSeries, c.dropped))
		}
	}
	if found.skipped > 0 {
		out = append(out, fmt.Sprintf("a scrape of the metrics endpoint took up to %v, so %d of %d readings skipped it: "+
			"ceiling spends at most a tenth of its time scraping, to keep its CPU for the load",
			found.slowest.Round(time.Millisecond), found.skipped, f.Samples))
	}
	switch {
	case f.ScrapeErrors == 0:
	case f.ScrapeErrors == f.Scrapes:
		out = append(out, fmt.Sprintf("every scrape of the metrics endpoint failed (%d), so its metrics were not measured; the last error: %s",
			f.ScrapeErrors, f.ScrapeError))
	default:
		out = append(out, fmt.Sprintf("%d of %d scrapes of the metrics endpoint failed; its metrics are from the other %d; the last error: %s",
			f.ScrapeErrors, f.Scrapes, f.Scrapes-f.ScrapeErrors, f.ScrapeError))
	}
	if found.ok > 0 && found.nothing == found.ok {
		out = append(out, fmt.Sprintf("the metrics endpoint answered %d times without any of %s: is it the right endpoint?",
			found.ok, strings.Join(w.metrics, ", ")))
	}
	return out
}

// summarise computes the Stat of every series scraped in [from, to]. The
// caller holds w.mu.
func (w *Watcher) summarise(from, to time.Time) map[string]Stat {
	accs := make([]acc, len(w.series))
	w.hist.summarise(from, to, accs)
	var out map[string]Stat
	for id, a := range accs {
		if a.n == 0 {
			continue
		}
		if out == nil {
			out = map[string]Stat{}
		}
		out[w.series[id].key] = a.stat(w.series[id].counter)
	}
	return out
}

// cpuPct is the CPU used between two readings in percent of one core.
func cpuPct(a, b reading) float64 {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return 0
	}
	return float64(b.sample.CPU-a.sample.CPU) / float64(wall) * 100
}

// Series returns one point per reading taken in [from, to], in time order.
// Old readings' scraped values are summarised rather than kept (see
// Watcher), so their points have no Metrics.
func (w *Watcher) Series(from, to time.Time) []SeriesPoint {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, lo := w.between(from, to)
	if len(rs) == 0 {
		return nil
	}
	// The previous source reading, possibly before the window.
	var prev *reading
	for i := lo - 1; i >= 0; i-- {
		if w.readings[i].hasSrc {
			prev = &w.readings[i]
			break
		}
	}
	out := make([]SeriesPoint, 0, len(rs))
	for i := range rs {
		r := &rs[i]
		p := SeriesPoint{At: r.at}
		if r.hasSrc {
			if prev != nil {
				p.CPUPct = cpuPct(*prev, *r)
			}
			p.RSSMB, p.Measured = float64(r.sample.RSSBytes)/mib, true
			prev = r
		}
		for id, v := range w.hist.at(r.at) {
			if math.IsNaN(v) {
				continue
			}
			if p.Metrics == nil {
				p.Metrics = map[string]float64{}
			}
			p.Metrics[w.series[id].key] = v
		}
		out = append(out, p)
	}
	return out
}
