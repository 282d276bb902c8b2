package report

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/compare"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// CompareFormats are the renderers of a comparison, by --format name:
// compare's own (text, Markdown, JSON) and its HTML page, drawn here with
// the run report's plots.
var CompareFormats = map[string]func(io.Writer, *compare.Report) error{
	"text": compare.Text, "md": compare.Markdown, "markdown": compare.Markdown, "json": compare.JSON, "html": CompareHTML,
}

// CompareHTML writes a comparison as one self-contained page (no script,
// no network at view time): the verdict on top, what was compared and the
// test used with the number of comparisons, thresholds crossed and notes,
// one plot of both runs' p50 and p99 against the load, and the table of
// every change, the significant ones coloured (worse red, better green).
func CompareHTML(w io.Writer, r *compare.Report) error {
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ceiling compare: %s → %s</title>\n<style>%s%s</style></head><body>\n",
		e(r.A), e(r.B), css, compareCSS)
	b.WriteString("<h1>ceiling compare</h1>\n")
	fmt.Fprintf(&b, "<p class=\"answer %s\">verdict: %s</p>\n", e(r.Verdict), e(r.Headline()))
	fmt.Fprintf(&b, "<p>%s</p>\n<p><b>Test:</b> %s. %s.</p>\n", e(r.Sides()), e(r.Test), e(r.Tally()))
	list := func(class, prefix string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "<ul class=\"%s\">\n", class)
		for _, s := range items {
			fmt.Fprintf(&b, "<li>%s%s</li>\n", prefix, e(s))
		}
		b.WriteString("</ul>\n")
	}
	list("crossed", "threshold crossed: ", r.Crossed)
	list("notes", "", r.Notes)
	for _, f := range compareFigures {
		if svg := compareChartOf(r, f).svg(); svg != "" {
			fmt.Fprintf(&b, "<figure><figcaption>%s</figcaption>%s</figure>\n", e(compareCaption(r, f)), svg)
		}
	}
	b.WriteString("<h2>Every comparison</h2>\n<div class=\"wide\"><table><thead><tr>")
	for _, h := range compare.Columns {
		fmt.Fprintf(&b, "<th>%s</th>", e(h))
	}
	b.WriteString("</tr></thead><tbody>\n")
	for i := range r.Changes {
		c := &r.Changes[i]
		fmt.Fprintf(&b, "<tr class=\"%s\">", rowClass(c))
		for _, cell := range c.Cells() {
			fmt.Fprintf(&b, "<td>%s</td>", e(cell))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// compareCSS colours the verdict and the table's rows: a significant
// change worse (or a threshold crossed, a control that moved) in red,
// better in green, one that would have been significant but for the
// control moving in amber; the control's rows, never judged, in grey.
const compareCSS = `
.worse{color:#a4161a}.better{color:#1b7a2b}.unknown{color:#555}
tr.worse td{background:#fde4e4}tr.better td{background:#e2f4e5}tr.suppressed td{background:#fdf1d6}tr.control td{color:#777;font-style:italic}
th:nth-child(3),td:nth-child(3){text-align:left}.crossed li{color:#a4161a;font-weight:600}`

// rowClass names a change's row for compareCSS.
func rowClass(c *compare.Change) string {
	var out []string
	switch {
	case c.Moved || c.Threshold != "":
		out = append(out, compare.Worse)
	case c.Significant:
		out = append(out, c.Direction) // worse or better: a significant change is never "same"
	case c.Suppressed:
		out = append(out, "suppressed")
	}
	if c.Control {
		out = append(out, "control")
	}
	return strings.Join(out, " ")
}

// compareFigure is a plot of the compare page: the whole-step figures it
// draws against the load, its y axis, and what a figure is multiplied by
// to be read on it (a share's fraction, in percent).
type compareFigure struct {
	what    string
	metrics []string
	yTitle  string
	yText   func(float64) string
	scale   float64
}

// compareFigures are the compare page's plots, each drawn when the
// comparison has its figures: latency always, the target's CPU when both
// runs watched it, the share delivered when both had sinks.
var compareFigures = []compareFigure{
	{"latency", []string{results.MetricP50, results.MetricP99}, "response time (ms)", Millis, 1},
	{"the target's CPU", []string{compare.MetricTargetCPU}, "target CPU (% of one core)", func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, 1},
	{"the share delivered by each step's end", []string{compare.MetricDelivered}, "delivered (% of accepted)", func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, 100},
}

func compareCaption(r *compare.Report, f compareFigure) string {
	s := fmt.Sprintf("Load against %s: A (%s, the baseline) dashed, B (%s) solid", f.what, r.A, r.B)
	if r.RepeatsA > 1 || r.RepeatsB > 1 {
		s += "; each point the median of the repeats, its whisker their range"
	}
	return s
}

// comparePoint is one step's figure of one side, for compareChart.
type comparePoint struct {
	level, y float64
	lo, hi   float64
	tip      string
}

// compareChart plots both runs' p50 and p99 against the load
// (compareChartOf the latency).
func compareChart(r *compare.Report) *chart { return compareChartOf(r, compareFigures[0]) }

// compareChartOf plots both runs' figures of f (the medians over repeats)
// against the load, from the whole-step changes: A dashed, B solid, a
// figure in one colour, every level ticked; with repeats, each point has
// a whisker from the least to the greatest repeat, A's to the left, B's
// to the right. It has no series when no change is of f's figures.
func compareChartOf(r *compare.Report, f compareFigure) *chart {
	c := &chart{xTitle: "target rate (requests/s)", xText: Rate, yTitle: f.yTitle, yText: f.yText}
	users := slices.ContainsFunc(r.Changes, func(ch compare.Change) bool { return ch.VUs > 0 })
	if users {
		c.xTitle, c.xText = "virtual users", func(v float64) string { return fmt.Sprintf("%.0f", v) }
	}
	figures := f.metrics
	// One line per side, figure and scenario run alone (load.each; "" for
	// the mix): A's lines first, then B's, each figure in one colour.
	type line struct {
		side     string
		m        int
		scenario string
	}
	var order []line
	points := map[line][]comparePoint{}
	add := func(l line, p comparePoint) {
		if _, ok := points[l]; !ok {
			order = append(order, l)
		}
		points[l] = append(points[l], p)
	}
	for _, ch := range r.Changes {
		m := slices.Index(figures, ch.Metric)
		if ch.Scenario != "" || m < 0 {
			continue
		}
		la, lb := ch.TargetRate, ch.TargetRateB
		if users {
			la, lb = float64(ch.VUs), float64(ch.VUsB)
		}
		pa := sidePoint("A", ch.Metric, ch.Step, la, f.scale*ch.A, scaled(f.scale, ch.ValuesA), c.xText, f.yText)
		pb := sidePoint("B", ch.Metric, ch.StepB, lb, f.scale*ch.B, scaled(f.scale, ch.ValuesB), c.xText, f.yText)
		if sc := ch.StepScenario; sc != "" {
			pa.tip, pb.tip = sc+" · "+pa.tip, sc+" · "+pb.tip
		}
		add(line{"A", m, ch.StepScenario}, pa)
		add(line{"B", m, ch.StepScenario}, pb)
	}
	slices.SortStableFunc(order, func(x, y line) int { return cmp.Compare(x.side, y.side) })
	scenarios := []string{}
	for _, l := range order {
		if !slices.Contains(scenarios, l.scenario) {
			scenarios = append(scenarios, l.scenario)
		}
	}
	for _, l := range order {
		ps := points[l]
		slices.SortStableFunc(ps, func(x, y comparePoint) int { return cmp.Compare(x.level, y.level) })
		name := l.side + " " + figures[l.m]
		if l.scenario != "" {
			name += " " + l.scenario
		}
		colour := palette[(l.m+len(figures)*slices.Index(scenarios, l.scenario))%len(palette)]
		s := series{name: name, dots: true, dashed: l.side == "A", color: colour, nudge: 4}
		if l.side == "A" {
			s.nudge = -4
		}
		for _, p := range ps {
			s.points = append(s.points, xy{p.level, p.y})
			s.tips = append(s.tips, p.tip)
			s.lows, s.highs = append(s.lows, p.lo), append(s.highs, p.hi)
			if !slices.Contains(c.xTicks, p.level) {
				c.xTicks = append(c.xTicks, p.level)
			}
		}
		c.series = append(c.series, s)
	}
	slices.Sort(c.xTicks)
	return c
}

// sidePoint is one side's figure of a step: its median y, its repeats'
// range, and a tooltip that says them in yText ("step 2, 200/s: B p99
// 26.1 ms, 5 repeats from 25.9 ms to 26.8 ms").
func sidePoint(side, metric string, step int, level, y float64, values []float64, xText, yText func(float64) string) comparePoint {
	p := comparePoint{level: level, y: y, lo: y, hi: y}
	for _, v := range values {
		p.lo, p.hi = min(p.lo, v), max(p.hi, v)
	}
	p.tip = fmt.Sprintf("step %d, %s: %s %s %s", step+1, xText(level), side, metric, yText(y))
	if len(values) > 1 {
		p.tip += fmt.Sprintf(", %d repeats from %s to %s", len(values), yText(p.lo), yText(p.hi))
	}
	return p
}

// scaled returns v, each value multiplied by k.
func scaled(k float64, v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = k * x
	}
	return out
}
