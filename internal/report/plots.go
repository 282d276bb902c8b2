package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

type plot struct {
	caption string
	svg     string
}

// plotsOf draws the run's plots, each only when result.json holds its
// data: against the load (a numeric axis, every level marked) the
// latency, the delivery, errors by class and each scenario's figures; the
// latency distribution of each step; and over time (one point a second,
// each step's start marked with its level) requests per second, latency,
// errors, users and sockets, the target's CPU and memory, and deliveries;
// and a soak's figures over its windows (soakCharts).
func plotsOf(r *results.Result) []plot {
	var out []plot
	add := func(caption string, c *chart) {
		if svg := c.svg(); svg != "" {
			out = append(out, plot{caption: caption, svg: svg})
		}
	}
	steps := byLevel(r)
	if len(steps) >= 2 {
		add(stickCaption(r), loadChart(r, steps, "response time (ms)", Millis, []string{"p50", "p95", "p99"},
			func(s results.Step) []float64 { return []float64{s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99} }))
		if c := deliveryChart(r, steps); c != nil {
			caption := "Load against delivery: % of each step's messages delivered"
			if steps[0].Delivery.AtStepEnd != nil {
				caption += " by its end"
			}
			add(caption, c)
		}
		if c := errorClassChart(r, steps); c != nil {
			add("Errors by class against load (% of each step's completed requests)", c)
		}
		for _, c := range scenarioCharts(r, steps) {
			add(c.caption, c.chart)
		}
	}
	if c := distributionChart(r, steps); c != nil {
		add("Latency distribution of each step (response time at each percentile)", c)
	}
	spans := spansOf(r)
	for _, t := range timeCharts(r, spans) {
		add(t.caption, t.chart)
	}
	for _, t := range soakCharts(r) {
		add(t.caption, t.chart)
	}
	return out
}

// byLevel returns the finished steps sorted by level (a find tries them out
// of order).
func byLevel(r *results.Result) []results.Step {
	steps := slices.DeleteFunc(slices.Clone(r.Steps), func(s results.Step) bool { return s.Interrupted })
	slices.SortStableFunc(steps, func(a, b results.Step) int { return cmp.Compare(level(a), level(b)) })
	return steps
}

func stickCaption(r *results.Result) string {
	if r.Edge != nil {
		return "Load against latency: the edge is marked"
	}
	return "Load against latency"
}

// levelAxis returns the load axis of a chart: its title, every level as a
// tick, and how a level is written.
func levelAxis(c *chart, steps []results.Step) {
	users := len(steps) > 0 && steps[0].Model == "closed"
	c.xTitle, c.xText = "target rate (requests/s)", Rate
	if users {
		c.xTitle, c.xText = "virtual users", func(v float64) string { return fmt.Sprintf("%.0f", v) }
	}
	for _, s := range steps {
		if l := level(s); !slices.Contains(c.xTicks, l) {
			c.xTicks = append(c.xTicks, l)
		}
	}
}

// edgeMark marks the edge on a load axis.
func edgeMark(r *results.Result, steps []results.Step) []mark {
	if r.Edge == nil {
		return nil
	}
	for _, s := range steps {
		if s.Index == r.Edge.Step {
			return []mark{{x: level(s), label: "edge " + levelOf(s), strong: true}}
		}
	}
	return nil
}

// loadChart plots figures of each step against its level, one line per
// name, a dot per step (a level tried twice has two dots).
func loadChart(r *results.Result, steps []results.Step, yTitle string, yText func(float64) string, names []string, figures func(results.Step) []float64) *chart {
	c := &chart{yTitle: yTitle, yText: yText, marks: edgeMark(r, steps)}
	levelAxis(c, steps)
	c.series = make([]series, len(names))
	for i, n := range names {
		c.series[i] = series{name: n, dots: true}
	}
	for _, s := range steps {
		for i, v := range figures(s) {
			c.series[i].points = append(c.series[i].points, xy{level(s), v})
			c.series[i].tips = append(c.series[i].tips, fmt.Sprintf("step %d, %s: %s %s", s.Index+1, levelOf(s), names[i], yText(v)))
		}
	}
	return c
}

// deliveryChart plots the share of each step's messages delivered (by its
// end, when find judged it so); nil when a step has no deliveries.
func deliveryChart(r *results.Result, steps []results.Step) *chart {
	for _, s := range steps {
		if s.Delivery == nil || s.Delivery.Expected == 0 {
			return nil
		}
	}
	c := loadChart(r, steps, "delivered (%)", percentText, []string{"delivered %"}, func(s results.Step) []float64 {
		n := s.Delivery.Delivered
		if s.Delivery.AtStepEnd != nil {
			n = *s.Delivery.AtStepEnd
		}
		return []float64{100 * float64(n) / float64(s.Delivery.Expected)}
	})
	c.yMax = 100
	return c
}

func percentText(v float64) string { return fmt.Sprintf("%g%%", v) }

// errorClassChart plots each failure class's share of each step's
// completed requests; nil when no step failed a request.
func errorClassChart(r *results.Result, steps []results.Step) *chart {
	classes := map[string]bool{}
	for _, s := range steps {
		for k, n := range s.Errors {
			classes[k] = classes[k] || n > 0
		}
	}
	names := slices.Sorted(maps.Keys(classes))
	names = slices.DeleteFunc(names, func(k string) bool { return !classes[k] })
	if len(names) == 0 {
		return nil
	}
	return loadChart(r, steps, "failed (% of completed)", percentText, names, func(s results.Step) []float64 {
		out := make([]float64, len(names))
		for i, k := range names {
			if s.Completed > 0 {
				out[i] = 100 * float64(s.Errors[k]) / float64(s.Completed)
			}
		}
		return out
	})
}

type captioned struct {
	caption string
	chart   *chart
}

// scenarioCharts plots each scenario's p99 and throughput against the
// load; none for a run of one scenario.
func scenarioCharts(r *results.Result, steps []results.Step) []captioned {
	var names []string
	for _, s := range steps {
		for _, b := range s.Scenarios {
			if !slices.Contains(names, b.Name) {
				names = append(names, b.Name)
			}
		}
	}
	if len(names) < 2 {
		return nil
	}
	find := func(s results.Step, name string) (results.Breakdown, bool) {
		for _, b := range s.Scenarios {
			if b.Name == name {
				return b, true
			}
		}
		return results.Breakdown{}, false
	}
	per := func(v func(results.Step, results.Breakdown) float64) func(results.Step) []float64 {
		return func(s results.Step) []float64 {
			out := make([]float64, len(names))
			for i, n := range names {
				out[i] = math.NaN()
				if b, ok := find(s, n); ok && b.Completed > 0 {
					out[i] = v(s, b)
				}
			}
			return out
		}
	}
	p99 := loadChart(r, steps, "p99 (ms)", Millis, names, per(func(_ results.Step, b results.Breakdown) float64 { return b.LatencyMS.P99 }))
	done := loadChart(r, steps, "completed per second", func(v float64) string { return fmt.Sprintf("%g/s", v) }, names,
		per(func(s results.Step, b results.Breakdown) float64 {
			if b.Repeat != nil { // counts are summed over the repeats: take their median rate
				return results.Median(b.Repeat.Values[results.MetricThroughput])
			}
			if s.DurationS <= 0 {
				return math.NaN()
			}
			return float64(b.Completed) / s.DurationS
		}))
	return []captioned{
		{"Per scenario: p99 against load", p99},
		{"Per scenario: completed iterations per second against load", done},
	}
}

// quantiles of the distribution plot, and where each sits on its axis:
// -log10(1-q), so that 90%, 99%, 99.9% are equally apart; the maximum
// half a decade beyond 99.99%.
var quantiles = []float64{0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1}

func quantileX(q float64) float64 {
	if q >= 1 {
		return 4.5
	}
	return -math.Log10(1 - q)
}

// distributionChart plots each step's response time at percentiles from
// 50% to the maximum, read from its encoded histogram (or, for a result
// without one, from the percentiles it recorded). At most 8 steps are
// drawn: the lowest and highest levels, the edge, and steps evenly between.
func distributionChart(r *results.Result, steps []results.Step) *chart {
	if len(steps) == 0 {
		return nil
	}
	pick := steps
	if len(steps) > 8 {
		pick = nil
		for i := range 8 {
			pick = append(pick, steps[i*(len(steps)-1)/7])
		}
		if r.Edge != nil && !slices.ContainsFunc(pick, func(s results.Step) bool { return s.Index == r.Edge.Step }) {
			for _, s := range steps {
				if s.Index == r.Edge.Step {
					pick[len(pick)/2] = s
				}
			}
			slices.SortStableFunc(pick, func(a, b results.Step) int { return cmp.Compare(level(a), level(b)) })
		}
	}
	labels := map[float64]string{}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
		labels[quantileX(q)] = map[bool]string{true: "max", false: fmt.Sprintf("%g%%", 100*q)}[q == 1]
	}
	c := &chart{
		xTitle: "percentile", yTitle: "response time (ms)", yText: Millis,
		xTicks: slices.Sorted(maps.Keys(labels)), xMin: ptr(quantileX(0.5)),
		xText: func(v float64) string { return labels[v] },
	}
	for _, s := range pick {
		sr := series{name: levelOf(s), dots: true}
		for _, p := range distribution(s) {
			sr.points = append(sr.points, xy{quantileX(p.q), p.ms})
			sr.tips = append(sr.tips, fmt.Sprintf("step %d, %s: %s %s", s.Index+1, levelOf(s), qName(p.q), Millis(p.ms)))
		}
		if len(sr.points) > 0 {
			c.series = append(c.series, sr)
		}
	}
	return c
}

// qName names a quantile: "p99.9", or "max" for 1.
func qName(q float64) string {
	if q >= 1 {
		return "max"
	}
	return fmt.Sprintf("p%g", 100*q)
}

type quantilePoint struct{ q, ms float64 }

// distribution reads a step's response times at the plot's quantiles from
// its histogram, or from its recorded percentiles when it has none.
func distribution(s results.Step) []quantilePoint {
	if h, err := metrics.Decode(s.Histogram); err == nil && s.Histogram != "" && h.TotalCount() > 0 {
		out := make([]quantilePoint, 0, len(quantiles))
		for _, q := range quantiles {
			out = append(out, quantilePoint{q, metrics.Quantile(h, q)})
		}
		return out
	}
	l := s.LatencyMS
	if l.Max == 0 && l.P50 == 0 {
		return nil
	}
	return []quantilePoint{{0.5, l.P50}, {0.9, l.P90}, {0.95, l.P95}, {0.99, l.P99}, {0.999, l.P999}, {1, l.Max}}
}

func ptr[T any](v T) *T { return &v }
