package soak

import (
	"math"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// table is what the trends read of the windows kept: each window's
// bounds and each figure's value in it (NaN where the window did not
// measure it), a column a figure. The windows themselves are on disk
// (results.WindowFile); the table's columns are made once, with room for
// every window the soak keeps, so that ceiling's memory does not grow
// with the windows.
type table struct {
	start, end []float64
	// load are the load's and the target's figures, metrics the target's
	// metric series (sorted by name), own ceiling's: in the order a
	// report shows them.
	load, metrics, own []column
	room               int // each column's capacity: the windows kept
}

// column is one figure's value in each window.
type column struct {
	figure
	v []float64
}

// newTable makes a table with room for n windows.
func newTable(n int) table {
	t := table{start: make([]float64, 0, n), end: make([]float64, 0, n), room: n}
	for _, f := range loadFigures {
		t.load = append(t.load, column{figure: f, v: make([]float64, 0, n)})
	}
	for _, f := range ownFigures {
		t.own = append(t.own, column{figure: f, v: make([]float64, 0, n)})
	}
	return t
}

// add appends window w's figures.
func (t *table) add(w *results.SoakWindow) {
	t.start, t.end = append(t.start, w.StartS), append(t.end, w.EndS)
	for _, cols := range [][]column{t.load, t.own} {
		for i := range cols {
			cols[i].v = append(cols[i].v, valueOf(cols[i].figure, w))
		}
	}
	if w.Target != nil {
		for k := range w.Target.Metrics {
			t.metric(k)
		}
	}
	for i := range t.metrics {
		t.metrics[i].v = append(t.metrics[i].v, valueOf(t.metrics[i].figure, w))
	}
}

// metric makes the column of the metric series named k when there is
// none, not measured in the windows before.
func (t *table) metric(k string) {
	i, found := slices.BinarySearchFunc(t.metrics, k, func(c column, k string) int { return strings.Compare(c.name, k) })
	if found {
		return
	}
	before := len(t.start) - 1 // the windows before the one added
	c := column{figure: metricFigure(k), v: make([]float64, before, t.room)}
	for j := range c.v {
		c.v[j] = math.NaN()
	}
	t.metrics = slices.Insert(t.metrics, i, c)
}

// reset empties the table, its columns kept, to add the windows again
// (merged two by two).
func (t *table) reset() {
	t.start, t.end = t.start[:0], t.end[:0]
	for _, cols := range [][]column{t.load, t.metrics, t.own} {
		for i := range cols {
			cols[i].v = cols[i].v[:0]
		}
	}
}

// figure is one figure of a window that a soak fits.
type figure struct {
	id, name, unit string
	// atEnd says the figure is read at the window's end (a gauge's last
	// reading: memory, descriptors), not over the window (a rate).
	atEnd bool
	value func(w *results.SoakWindow) (float64, bool)
}

// valueOf is f's value in w; NaN when w did not measure it.
func valueOf(f figure, w *results.SoakWindow) float64 {
	v, ok := f.value(w)
	if !ok {
		return math.NaN()
	}
	return v
}

// target reads a figure of the watched target's.
func target(get func(t *results.WindowTarget) *float64) func(w *results.SoakWindow) (float64, bool) {
	return func(w *results.SoakWindow) (float64, bool) {
		if w.Target == nil || get(w.Target) == nil {
			return 0, false
		}
		return *get(w.Target), true
	}
}

// answered reports whether any exchange ended in w.
func answered(w *results.SoakWindow) bool { return w.Completed > 0 }

// loadFigures are the load's figures and the target's, in a report's
// order.
var loadFigures = []figure{
	{figThroughput, "throughput", "/s", false, func(w *results.SoakWindow) (float64, bool) { return w.Throughput, w.Seconds > 0 }},
	{figErrors, "error rate", "%", false, func(w *results.SoakWindow) (float64, bool) { return 100 * w.ErrorRate, answered(w) }},
	{figP50, "p50", "ms", false, func(w *results.SoakWindow) (float64, bool) { return w.LatencyMS.P50, answered(w) }},
	{figP99, "p99", "ms", false, func(w *results.SoakWindow) (float64, bool) { return w.LatencyMS.P99, answered(w) }},
	{figCPU, "target CPU", "%", false, target(func(t *results.WindowTarget) *float64 { return t.CPUPct })},
	{figRSS, "target RSS", "MB", true, target(func(t *results.WindowTarget) *float64 { return t.RSSMB })},
	{figCgroup, "target's cgroup memory", "MB", true, target(func(t *results.WindowTarget) *float64 { return t.CgroupMB })},
	{figFDs, "target descriptors", "", true, target(func(t *results.WindowTarget) *float64 { return t.FDs })},
	{figThreads, "target threads", "", true, target(func(t *results.WindowTarget) *float64 { return t.Threads })},
}

// metricFigure is the figure of the target's metric series named k.
func metricFigure(k string) figure {
	return figure{figMetric + k, k, "", false, func(w *results.SoakWindow) (float64, bool) {
		if w.Target == nil {
			return 0, false
		}
		v, ok := w.Target.Metrics[k]
		return v, ok
	}}
}

// ownFigures are ceiling's own.
var ownFigures = []figure{
	{figCeilingRSS, "ceiling's RSS", "MB", true, func(w *results.SoakWindow) (float64, bool) {
		if w.Ceiling == nil || w.Ceiling.RSSMB == nil {
			return 0, false
		}
		return *w.Ceiling.RSSMB, true
	}},
	{figCeilingAnon, "ceiling's private memory", "MB", true, func(w *results.SoakWindow) (float64, bool) {
		if w.Ceiling == nil || w.Ceiling.AnonMB == nil {
			return 0, false
		}
		return *w.Ceiling.AnonMB, true
	}},
	{figCeilingHeap, "ceiling's Go heap", "MB", true, func(w *results.SoakWindow) (float64, bool) {
		if w.Ceiling == nil {
			return 0, false
		}
		return w.Ceiling.HeapMB, true
	}},
}
