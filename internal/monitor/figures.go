package monitor

import "time"

// Figures summarise a Watcher's readings over a time window, typically one
// load step. MB figures are in units of 2^20 bytes.
type Figures struct {
	// Samples counts the readings in the window; 0 means nothing was
	// measured and every other figure is zero.
	Samples int
	// Errors counts the readings in the window where the source or the
	// scraper failed.
	Errors int
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
	// Metrics summarise the scraped series, by name{labels}.
	Metrics map[string]Stat
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
	// Metrics are the scraped series' values at this reading.
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
	f := Figures{Samples: len(rs)}
	var first, last *reading
	for i := range rs {
		r := &rs[i]
		if r.failed {
			f.Errors++
		}
		if !r.hasSrc {
			continue
		}
		if first == nil {
			first = r
		}
		last = r
		f.RSSMaxMB = max(f.RSSMaxMB, float64(r.sample.RSSBytes)/mib)
	}
	if last != nil {
		f.CPUPct = cpuPct(*first, *last)
		f.RSSMB = float64(last.sample.RSSBytes) / mib
		f.Threads, f.FDs = last.sample.Threads, last.sample.FDs
	}
	// Dead stays dead: the last source reading up to the window's end tells.
	for i := lo + len(rs) - 1; i >= 0; i-- {
		if w.readings[i].hasSrc {
			f.Exited = !w.readings[i].sample.Alive
			break
		}
	}
	f.Metrics = summarise(rs)
	return f
}

// cpuPct is the CPU used between two readings in percent of one core.
func cpuPct(a, b reading) float64 {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return 0
	}
	return float64(b.sample.CPU-a.sample.CPU) / float64(wall) * 100
}

// summarise computes the Stat of every series scraped in rs.
func summarise(rs []reading) map[string]Stat {
	type acc struct {
		st              Stat
		n               int
		sum, increase   float64
		firstAt, lastAt time.Time
	}
	accs := map[string]*acc{}
	for _, r := range rs {
		for k, p := range r.metrics {
			a := accs[k]
			if a == nil {
				a = &acc{st: Stat{Max: p.Value, Counter: p.Counter}, firstAt: r.at}
				accs[k] = a
			} else if p.Value >= a.st.Last {
				a.increase += p.Value - a.st.Last
			} else {
				a.increase += p.Value // a reset: the counter restarted from zero
			}
			a.st.Last = p.Value
			a.st.Max = max(a.st.Max, p.Value)
			a.st.Counter = a.st.Counter || p.Counter
			a.sum += p.Value
			a.n++
			a.lastAt = r.at
		}
	}
	if len(accs) == 0 {
		return nil
	}
	out := make(map[string]Stat, len(accs))
	for k, a := range accs {
		a.st.Mean = a.sum / float64(a.n)
		if secs := a.lastAt.Sub(a.firstAt).Seconds(); a.st.Counter && secs > 0 {
			a.st.Rate = a.increase / secs
		}
		out[k] = a.st
	}
	return out
}

// Series returns one point per reading taken in [from, to], in time order.
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
			p.RSSMB = float64(r.sample.RSSBytes) / mib
			prev = r
		}
		if len(r.metrics) > 0 {
			p.Metrics = make(map[string]float64, len(r.metrics))
			for k, m := range r.metrics {
				p.Metrics[k] = m.Value
			}
		}
		out = append(out, p)
	}
	return out
}
