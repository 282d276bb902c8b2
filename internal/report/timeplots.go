package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// span is where a step sits in time, in seconds from the run's start: its
// series' extent (warm-up seconds that finished something, the drain) and
// its counted window, which ends with the last second that had a rate
// (finished responses inside the window) and lasts the step's duration.
type span struct {
	step             results.Step
	first, last      float64
	winStart, winEnd float64
	// windowed is true when the series says which seconds have a rate
	// (window_s), as results written since it exists do.
	windowed bool
}

// spansOf returns the steps that have a series, in the order they ran.
func spansOf(r *results.Result) []span {
	var out []span
	for _, s := range r.Steps {
		if len(s.Series) == 0 {
			continue
		}
		sp := span{step: s, first: s.Series[0].T - 1, last: s.Series[len(s.Series)-1].T}
		sp.winStart, sp.winEnd = sp.first, sp.last
		for _, p := range s.Series {
			if p.Rate > 0 {
				sp.winEnd = p.T
			}
			sp.windowed = sp.windowed || p.WindowS > 0
		}
		if sp.winEnd != sp.last || s.DurationS > 0 {
			sp.winStart = max(sp.first, sp.winEnd-math.Max(s.DurationS, 1))
		}
		out = append(out, sp)
	}
	return out
}

// timeChart returns a chart over time with each step's start marked with
// its level (the edge's mark is strong), and each event's start with its
// name, its span shaded until its end.
func timeChart(r *results.Result, spans []span, yTitle string, yText func(float64) string) *chart {
	c := &chart{xTitle: "time since the run's start (m:ss); each step's counted window starts at its mark", xTime: true, xText: clock,
		yTitle: yTitle, yText: yText}
	for _, sp := range spans {
		m := mark{x: sp.winStart, label: levelOf(sp.step)}
		if r.Edge != nil && sp.step.Index == r.Edge.Step {
			m.label, m.strong = m.label+" (edge)", true
		}
		c.marks = append(c.marks, m)
	}
	c.marks = append(c.marks, eventMarks(r)...)
	slices.SortStableFunc(c.marks, func(a, b mark) int { return cmp.Compare(a.x, b.x) })
	return c
}

// perSecond returns the series of one figure of every step's seconds in
// order, broken (a NaN) between steps and where a second is missing;
// value's false also breaks it.
func perSecond(spans []span, value func(span, results.Point) (float64, bool)) []xy {
	var out []xy
	gap := func() {
		if len(out) > 0 && !math.IsNaN(out[len(out)-1].y) {
			out = append(out, xy{out[len(out)-1].x, math.NaN()})
		}
	}
	for _, sp := range spans {
		gap()
		prev := math.Inf(-1)
		for _, p := range sp.step.Series {
			if p.T-prev > 1.5 {
				gap()
			}
			prev = p.T
			v, ok := value(sp, p)
			if !ok {
				gap()
				continue
			}
			out = append(out, xy{p.T, v})
		}
	}
	return out
}

// perStep holds one value over each step's counted window (a staircase
// broken between steps); skip leaves a step out.
func perStep(spans []span, value func(results.Step) (float64, bool)) []xy {
	var out []xy
	for _, sp := range spans {
		v, ok := value(sp.step)
		if !ok {
			continue
		}
		out = append(out, xy{sp.winStart, v}, xy{sp.winEnd, v}, xy{sp.winEnd, math.NaN()})
	}
	return out
}

func drawn(points []xy, nonZero bool) bool {
	for _, p := range points {
		if !math.IsNaN(p.y) && (!nonZero || p.y != 0) {
			return true
		}
	}
	return false
}

func perSecondText(v float64) string { return fmt.Sprintf("%g/s", v) }

// timeCharts draws the plots over time, one point a second.
func timeCharts(r *results.Result, spans []span) []captioned {
	if len(spans) == 0 {
		return nil
	}
	var out []captioned
	add := func(caption string, c *chart) {
		for _, s := range c.series {
			if drawn(s.points, false) {
				out = append(out, captioned{caption, c})
				return
			}
		}
	}
	inWindow := func(sp span, p results.Point) bool { return p.T > sp.winStart+1e-9 && p.T-1 < sp.winEnd-1e-9 }
	hasRate := func(sp span, p results.Point) bool {
		if sp.windowed {
			return p.WindowS > 0 // a sliver of the window has no rate: not a dip nor a spike
		}
		return inWindow(sp, p) // a result written before window_s
	}

	rate := timeChart(r, spans, "requests per second", perSecondText)
	target := perStep(spans, func(s results.Step) (float64, bool) { return s.TargetRate, s.Model != "closed" && s.TargetRate > 0 })
	if len(target) > 0 {
		rate.series = append(rate.series, series{name: "target", points: target, dashed: true})
	}
	rate.series = append(rate.series, series{name: "achieved (responses finished)", points: perSecond(spans, func(sp span, p results.Point) (float64, bool) {
		return p.Rate, hasRate(sp, p)
	})})
	add("Requests per second over time: target and achieved", rate)

	lat := timeChart(r, spans, "response time (ms)", Millis)
	for _, q := range []struct {
		name string
		v    func(results.Point) float64
	}{{"p50", func(p results.Point) float64 { return p.P50 }}, {"p99", func(p results.Point) float64 { return p.P99 }}} {
		lat.series = append(lat.series, series{name: q.name, points: perSecond(spans, func(_ span, p results.Point) (float64, bool) {
			return q.v(p), p.Completed > 0 // a second with no response has no latency
		})})
	}
	add("Response time over time (per second)", lat)

	failed := perSecond(spans, func(_ span, p results.Point) (float64, bool) { return float64(p.Failed), true })
	limited := perSecond(spans, func(_ span, p results.Point) (float64, bool) { return float64(p.Limited), true })
	if drawn(failed, true) || drawn(limited, true) {
		errs := timeChart(r, spans, "requests per second", perSecondText)
		errs.series = []series{{name: "failed", points: failed}, {name: "limited (429 and the plan's statuses)", points: limited}}
		add("Failed and limited requests over time (per second; by class against load above, and in the step table)", errs)
	}

	users := timeChart(r, spans, "count", func(v float64) string { return fmt.Sprintf("%g", v) })
	closed := len(spans) > 0 && spans[0].step.Model == "closed"
	name := "workers in use"
	if closed {
		name = "virtual users"
	}
	if w := perStep(spans, func(s results.Step) (float64, bool) {
		return float64(max(s.Workers, s.VUs)), s.Workers > 0 || s.VUs > 0
	}); drawn(w, true) {
		users.series = append(users.series, series{name: name, points: w})
	}
	if ws := perStep(spans, func(s results.Step) (float64, bool) {
		if s.WebSocket == nil {
			return 0, false
		}
		return float64(s.WebSocket.Open), true
	}); drawn(ws, true) {
		users.series = append(users.series, series{name: "open sockets at the step's end", points: ws})
	}
	add("Users, workers and open sockets per step (result.json holds one value per step, not per second)", users)

	cpu := timeChart(r, spans, "CPU (% of one core)", func(v float64) string { return fmt.Sprintf("%g%%", v) })
	cpu.series = []series{{name: "target CPU", points: perSecond(spans, func(_ span, p results.Point) (float64, bool) {
		if p.TargetCPU == nil {
			return 0, false
		}
		return *p.TargetCPU, true
	})}}
	add("Target CPU over time", cpu)

	rss := timeChart(r, spans, "memory (MB)", func(v float64) string { return fmt.Sprintf("%g MB", v) })
	rss.series = []series{{name: "target RSS", points: perSecond(spans, func(_ span, p results.Point) (float64, bool) {
		if p.TargetRSS == nil {
			return 0, false
		}
		return *p.TargetRSS, true
	})}}
	add("Target memory (RSS) over time", rss)

	if len(r.DeliverySeries) > 1 {
		del := timeChart(r, spans, "messages", func(v float64) string { return fmt.Sprintf("%g", v) })
		var arrived, backlog []xy
		for _, p := range r.DeliverySeries {
			arrived, backlog = append(arrived, xy{p.T, float64(p.Arrived)}), append(backlog, xy{p.T, float64(p.Backlog)})
		}
		del.series = []series{{name: "arrived per second", points: arrived}, {name: "backlog (accepted, not yet delivered)", points: backlog}}
		add("Deliveries per second and backlog", del)
	}
	return out
}
