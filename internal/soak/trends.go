package soak

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
	"github.com/ceiling-dev/ceiling/internal/trend"
)

// The figures a soak fits, by their names in result.json (Trend.Figure).
const (
	figThroughput  = "throughput"
	figErrors      = "error_rate"
	figP50         = "p50_ms"
	figP99         = "p99_ms"
	figCPU         = "target.cpu_pct"
	figRSS         = "target.rss_mb"
	figCgroup      = "target.cgroup_mb"
	figFDs         = "target.fds"
	figThreads     = "target.threads"
	figMetric      = "target.metric:"
	figCeilingRSS  = "ceiling.rss_mb"
	figCeilingAnon = "ceiling.anon_mb"
	figCeilingHeap = "ceiling.heap_mb"
)

// Figure names for the limits that package run knows: the target's
// memory (MiB: its RSS, against a limit the plan gives), its cgroup's
// working set (against the cgroup's limit) and its open descriptors.
const (
	MemoryFigure = figRSS
	CgroupFigure = figCgroup
	FDsFigure    = figFDs
)

// MinWindows is the fewest windows a figure's line is fitted through:
// with fewer, its slope's interval cannot be bounded, and its verdict is
// UNKNOWN.
const MinWindows = 5

// Materiality is the least a DRIFTING figure's line moves over the soak,
// as a share of its median: a slope that the interval proves but that
// moves a figure by less than this and less than its own scatter is
// STABLE.
const Materiality = 0.02

// analyse fits every figure the windows measured, in the order a report
// shows them: the load's, the target's, its metrics, ceiling's own.
func (r *Recorder) analyse() {
	r.trends = r.trends[:0]
	restarts := r.episodes.starts[results.EpisodeRestart]
	settled := OwnSettling * max(r.cfg.Window, time.Second).Seconds()
	groups := []struct {
		cols []column
		from float64 // the windows ending by it are not fitted
	}{{r.table.load, 0}, {r.table.metrics, 0}, {r.table.own, settled}}
	for _, g := range groups {
		for i := range g.cols {
			if t, ok := fitFigure(&g.cols[i], &r.table, restarts, g.from, r.limits, r.held, r.cfg.Horizon.Seconds()); ok {
				r.trends = append(r.trends, t)
			}
		}
	}
}

// OwnSettling is how many windows (of the length asked for) ceiling's
// own memory takes to settle: its result takes its full shape at the
// fifth window, when every figure's line is first fitted (MinWindows),
// and its encoders and buffers grow with it the first time; ceiling's
// own figures are fitted from the reading after it. Measured in a
// 30-minute soak of the demo target in 1-minute windows: its live heap
// grew 0.12 MB over the first eight windows and 0.01 MB over the 22
// after, its private memory 0.7 MB over the first four and then
// wandered ±0.4 MB about a flat line (+0.85 MB/h, +0.22 to +1.86, fitted
// from the first window; +0.25 MB/h, −0.92 to +1.25, from the sixth).
const OwnSettling = MinWindows

// fitFigure fits one figure through the windows that measured it,
// segmented by the target's restarts (a restart is an episode, not a
// trend: the window that holds one and the next, the new process's
// start-up, are left out, and the line has an intercept for each
// stretch between restarts), judges it and projects it to its limit.
// held is the end of the last window, horizon the soak's. A target that
// restarts in more than a quarter of the windows is fitted whole: its
// restarts are then its life. Windows that end by from (seconds from the
// start: ceiling's own settling) count as measured and are not fitted.
func fitFigure(c *column, tab *table, restarts []float64, from float64, limits []results.Limit, held, horizon float64) (results.Trend, bool) {
	var xs, ys []float64
	var seg []int
	measured, n := 0, len(tab.start)
	for i, v := range c.v {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		measured++
		before := countBefore(restarts, tab.start[i])
		if len(restarts) < n/4 && tab.restartedIn(restarts, i) {
			continue // a restart, or the start-up after one: not the target's trend
		}
		if tab.end[i] <= from {
			continue
		}
		x := (tab.start[i] + tab.end[i]) / 2
		if c.atEnd {
			x = tab.end[i]
		}
		xs, ys, seg = append(xs, x), append(ys, v), append(seg, before)
	}
	if measured == 0 {
		return results.Trend{}, false // not measured: absent, not zero
	}
	f := c.figure
	t := results.Trend{Figure: f.id, Name: f.name, Unit: f.unit, Windows: len(xs)}
	if len(ys) > 0 {
		t.Median = median(slices.Clone(ys))
	}
	if len(xs) < MinWindows {
		t.Verdict, t.Why = results.Unknown, fmt.Sprintf("%d windows measured it: too few for a line (%d needed)", len(xs), MinWindows)
		return t, true
	}
	fit := trend.Segments(xs, ys, seg)
	first := firstIntercept(xs, ys, seg, fit.Slope)
	t.Start, t.End = first+fit.Slope*xs[0], fit.At(xs[len(xs)-1])
	t.SlopePerH, t.R2, t.Sigma, t.Rho = fit.Slope*3600, fit.R2, fit.Sigma, fit.Rho
	if fit.Bounded() {
		lo, hi := fit.Low*3600, fit.High*3600
		t.LowPerH, t.HighPerH = &lo, &hi
	}
	t.Verdict = verdict(fit, xs, t.Median)
	t.Why = why(t)
	if t.Verdict == results.Drifting {
		t.Projection = project(fit, limitOf(limits, f.id), xs[len(xs)-1], held, horizon)
	}
	return t, true
}

// verdict is DRIFTING when the slope's interval leaves out zero and the
// line moves over the soak by more than its scatter and than Materiality
// of its median; else STABLE; UNKNOWN when the interval is unbounded.
func verdict(f trend.Fit, xs []float64, level float64) string {
	if !f.Bounded() {
		return results.Unknown
	}
	moved := math.Abs(f.Slope) * (xs[len(xs)-1] - xs[0])
	if (f.Low > 0 || f.High < 0) && moved > f.Sigma && moved > Materiality*math.Abs(level) {
		return results.Drifting
	}
	return results.Stable
}

// why says a trend with its rate and its interval: "+14.2 MB/h ± 1.1,
// R² 0.98", or "+174 MB/h (+12 to +438), R² 0.89" when the interval is
// lopsided.
func why(t results.Trend) string {
	rate := signed(t.SlopePerH) + perHour(t.Unit)
	if t.LowPerH != nil {
		lo, hi := t.SlopePerH-*t.LowPerH, *t.HighPerH-t.SlopePerH
		if math.Abs(lo-hi) <= 0.2*max(lo, hi) {
			rate += " ± " + number((lo+hi)/2) // about symmetric
		} else {
			rate += fmt.Sprintf(" (%s to %s)", signed(*t.LowPerH), signed(*t.HighPerH))
		}
	}
	return fmt.Sprintf("%s, R² %.2f", rate, t.R2)
}

// signed writes v with its sign and three significant digits.
func signed(v float64) string {
	s := number(v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

// number writes v with three significant digits, whole numbers whole.
func number(v float64) string {
	if a := math.Abs(v); a >= 1000 || a == math.Trunc(a) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// perHour writes a rate's unit after its number: " MB/h", "%/h", "/s
// per h" (a throughput's change), "/h" for a count.
func perHour(unit string) string {
	switch unit {
	case "", "%":
		return unit + "/h"
	case "/s":
		return "/s per h"
	}
	return " " + unit + "/h"
}

// limitOf is the tightest limit known for a figure, if any: the lowest
// of those it rises to, or the highest of those it falls to.
func limitOf(limits []results.Limit, fig string) *results.Limit {
	var best *results.Limit
	for i := range limits {
		l := &limits[i]
		if l.Figure != fig {
			continue
		}
		if best == nil || (l.Above && l.Value < best.Value) || (!l.Above && l.Value > best.Value) {
			best = l
		}
	}
	return best
}

// project is when a drifting figure's line reaches its limit, nil when
// it has none or drifts away from it. last is the last window's x, held
// the end of the last window, horizon the soak's.
func project(f trend.Fit, l *results.Limit, last, held, horizon float64) *results.Projection {
	if l == nil || (l.Above && f.Slope <= 0) || (!l.Above && f.Slope >= 0) {
		return nil
	}
	p := &results.Projection{Limit: *l}
	end := f.At(last)
	reached := (l.Above && end >= l.Value) || (!l.Above && end <= l.Value)
	// The line reaches the limit at x = (limit − intercept) / slope.
	at := (l.Value - f.Intercept) / f.Slope
	switch {
	case reached:
		p.Reached, p.AtS, p.InS = true, min(at, held), 0
	default:
		p.AtS, p.InS = at, max(at-held, 0)
		// The slope's interval bounds the time: the steeper end reaches
		// the limit first; a bound on the far side of zero never does.
		steep, shallow := f.High, f.Low
		if !l.Above {
			steep, shallow = f.Low, f.High
		}
		if e := last + (l.Value-end)/steep; steep != 0 && !math.IsInf(e, 0) && e >= last {
			p.EarliestS = &e
		}
		if shallow != 0 && (shallow > 0) == l.Above {
			if lt := last + (l.Value-end)/shallow; !math.IsInf(lt, 0) && lt >= last {
				p.LatestS = &lt
			}
		}
	}
	p.WithinHorizon = p.AtS <= horizon
	return p
}

// sloLimits are the limits the SLO's terms of the whole mix set on the
// figures a soak fits.
func sloLimits(terms []slo.Term) []results.Limit {
	var out []results.Limit
	for _, t := range terms {
		if t.Scenario != "" {
			continue
		}
		above := strings.HasPrefix(t.Op, "<")
		var fig string
		switch t.Metric {
		case "p50":
			fig = figP50
		case "p99":
			fig = figP99
		case "errors":
			fig = figErrors
		case "throughput":
			fig = figThroughput
		default:
			continue
		}
		out = append(out, results.Limit{Figure: fig, Value: t.Value, Above: above, Of: "the SLO " + t.Text})
	}
	return out
}

// restartedIn reports whether a restart happened in window i or the one
// before it.
func (t *table) restartedIn(restarts []float64, i int) bool {
	from := t.start[i]
	if i > 0 {
		from = t.start[i-1]
	}
	return countBefore(restarts, t.end[i]) > countBefore(restarts, from)
}

// countBefore counts the times before t (the restarts sorted).
func countBefore(times []float64, t float64) int {
	n, _ := slices.BinarySearchFunc(times, t, func(a, b float64) int { return cmp.Compare(a, b) })
	return n
}

// firstIntercept is the first segment's intercept for slope: the median
// of y − slope·x over its points.
func firstIntercept(xs, ys []float64, seg []int, slope float64) float64 {
	var v []float64
	for i := range xs {
		if seg[i] != seg[0] {
			break
		}
		v = append(v, ys[i]-slope*xs[i])
	}
	return median(v)
}
