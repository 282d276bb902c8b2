package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"strings"
)

// chart is one plot drawn as inline SVG, by hand: both axes are numeric
// (a rate, seconds, a percentile), so a point's position is proportional
// to its value, and the y axis starts at zero. No script, no font file:
// the page's own font draws the text.
type chart struct {
	// xTitle and yTitle name the axes with their units.
	xTitle, yTitle string
	// xTicks, when set, are the x values to mark and label (every level of
	// a stairs run); otherwise round values are chosen.
	xTicks []float64
	// xMin, when set, starts the x axis; otherwise it starts at zero (a
	// rate, a percentile) or at the first value (time: xFromData).
	xMin *float64
	// xTime makes the x axis seconds from the run's start, starting at the
	// first point, labelled m:ss every round number of seconds.
	xTime bool
	// xText and yText format the axes' labels.
	xText, yText func(float64) string
	// yMax, when above the data, is the top of the y axis (100 for a share).
	yMax   float64
	series []series
	// marks are vertical lines with a label at the top: step boundaries,
	// the edge, events; in order of x, so that their labels are placed
	// in rows without overlapping.
	marks []mark
}

// series is one line of a chart. A NaN y breaks the line (a gap).
type series struct {
	name   string
	points []xy
	// dots draws each point as a circle with a tooltip (a title) that says
	// its values; steps draws the line as a staircase (a value held until
	// the next point).
	dots, steps, dashed bool
	// tips are the points' tooltips, when dots is set.
	tips []string
	// color, when set, is the line's colour instead of the palette's
	// (two series of one figure, dashed and solid, share a colour).
	color string
	// lows and highs, when set, are each point's range (the repeats'
	// least and greatest value), drawn as a whisker nudge units to the
	// side of the point, so that two series at one x keep theirs apart.
	lows, highs []float64
	nudge       float64
}

type xy struct{ x, y float64 }

// mark is a vertical line at x with a label at the top (and label as
// its tooltip, unless title says more). An event's mark is drawn in its
// own colour, its span shaded from x to until.
type mark struct {
	x      float64
	label  string
	strong bool
	event  bool
	until  float64
	title  string
}

// eventColor draws the events' marks and spans.
const eventColor = "#c98a00" // amber: in no series' palette

// Plot geometry, in SVG units (the page scales the figure to its width).
const (
	plotW, plotH              = 900, 300
	padLeft, padRight         = 64, 24
	padTop, padBottom         = 44, 58
	charW                     = 6.2 // average width of a character of the 11px label font
	labelRows, markLabelRows  = 3, 2
	areaW, areaH              = plotW - padLeft - padRight, plotH - padTop - padBottom
	xLabelRow, markLabelRow   = 13, 11
	legendY, legendSwatchSize = 14, 10
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// svg draws the chart; empty when it has no point to draw.
func (c *chart) svg() string {
	x0, x1, y1, ok := c.bounds()
	if !ok {
		return ""
	}
	px := func(x float64) float64 { return padLeft + areaW*(x-x0)/(x1-x0) }
	py := func(y float64) float64 { return padTop + areaH*(1-y/y1) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" font-family="system-ui,sans-serif" font-size="11">`, plotW, plotH, plotW, plotH)
	b.WriteString("\n")
	// y grid and labels: round values from zero.
	for _, v := range niceTicks(0, y1, 5) {
		y := py(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n",
			padLeft, y, plotW-padRight, y, padLeft-6, y+4, esc(c.yText(v)))
	}
	// x ticks: the given values (each level), or round ones.
	ticks := c.xTicks
	switch {
	case ticks != nil:
	case c.xTime:
		ticks = timeTicks(x0, x1, 10)
	default:
		ticks = niceTicks(x0, x1, 8)
	}
	texts := make([]string, len(ticks))
	pos := make([]float64, len(ticks))
	for i, v := range ticks {
		texts[i], pos[i] = c.xText(v), px(v)
	}
	rows := placeLabels(pos, texts, labelRows)
	for i := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>`, pos[i], padTop+areaH, pos[i], padTop+areaH+5)
		if rows[i] >= 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>`, pos[i], padTop+areaH+17+xLabelRow*rows[i], esc(texts[i]))
		}
		b.WriteString("\n")
	}
	// axes and their titles
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n",
		padLeft, padTop, padLeft, padTop+areaH, padLeft, padTop+areaH, plotW-padRight, padTop+areaH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#333">%s</text>`+"\n", padLeft+areaW/2, plotH-4, esc(c.xTitle))
	fmt.Fprintf(&b, `<text x="4" y="%d" fill="#333">%s</text>`+"\n", padTop-8, esc(c.yTitle))
	// marks: vertical lines, labels at the top in rows
	mpos := make([]float64, len(c.marks))
	mtexts := make([]string, len(c.marks))
	for i, m := range c.marks {
		mpos[i], mtexts[i] = px(m.x), m.label
	}
	mrows := placeLabelsLeft(mpos, mtexts, markLabelRows)
	for i, m := range c.marks {
		stroke, width, dash := "#bbb", 1.0, ` stroke-dasharray="4 3"`
		switch {
		case m.event:
			stroke, width, dash = eventColor, 1.5, ""
		case m.strong:
			stroke, width = "#333", 1.5
		}
		title := cmp.Or(m.title, m.label)
		if end := min(px(m.until), padLeft+areaW); m.event && end > mpos[i] {
			fmt.Fprintf(&b, `<rect class="event" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.15"><title>%s</title></rect>`,
				mpos[i], padTop, end-mpos[i], areaH, eventColor, esc(title))
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%.1f"%s><title>%s</title></line>`,
			mpos[i], padTop, mpos[i], padTop+areaH, stroke, width, dash, esc(title))
		if mrows[i] >= 0 {
			fill := "#444"
			if m.event {
				fill = eventColor
			}
			x, anchor := mpos[i]+3, ""
			if x+float64(len([]rune(m.label)))*charW > plotW { // at the right edge: the label ends at its line
				x, anchor = mpos[i]-3, ` text-anchor="end"`
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d"%s fill="%s">%s</text>`, x, padTop+10+markLabelRow*mrows[i], anchor, fill, esc(m.label))
		}
		b.WriteString("\n")
	}
	// the series
	for i, s := range c.series {
		c.line(&b, s, s.stroke(i), px, py)
	}
	c.legend(&b)
	b.WriteString("</svg>")
	return b.String()
}

// line draws one series: a polyline per unbroken run of points, and its
// dots.
func (c *chart) line(b *strings.Builder, s series, color string, px, py func(float64) float64) {
	dash := ""
	if s.dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	var pts []string
	flush := func() {
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
		}
		pts = pts[:0]
	}
	for i, p := range s.points {
		if math.IsNaN(p.y) {
			flush()
			continue
		}
		if s.steps && len(pts) > 0 && i > 0 {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.x), py(s.points[i-1].y)))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.x), py(p.y)))
	}
	flush()
	s.whiskers(b, color, dash, px, py)
	if !s.dots {
		return
	}
	for i, p := range s.points {
		if math.IsNaN(p.y) {
			continue
		}
		tip := ""
		if i < len(s.tips) {
			tip = s.tips[i]
		}
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`+"\n", px(p.x), py(p.y), color, esc(tip))
	}
}

// whiskers draws each point's range as a vertical line with caps, nudged
// to the side; none where the range is empty.
func (s series) whiskers(b *strings.Builder, color, dash string, px, py func(float64) float64) {
	for i, p := range s.points {
		if i >= len(s.lows) || i >= len(s.highs) || !(s.highs[i] > s.lows[i]) {
			continue
		}
		x, lo, hi := px(p.x)+s.nudge, py(s.lows[i]), py(s.highs[i])
		fmt.Fprintf(b, `<path class="whisker" fill="none" stroke="%s" stroke-width="1.5"%s d="M%.1f,%.1fV%.1fM%.1f,%.1fh6M%.1f,%.1fh6"/>`+"\n",
			color, dash, x, lo, hi, x-3, lo, x-3, hi)
	}
}

// stroke is the colour of the i-th series: its own, or the palette's.
func (s series) stroke(i int) string {
	if s.color != "" {
		return s.color
	}
	return palette[i%len(palette)]
}

// legend names the series at the top right, in order.
func (c *chart) legend(b *strings.Builder) {
	x := float64(plotW - padRight)
	for i := len(c.series) - 1; i >= 0; i-- {
		s := c.series[i]
		x -= float64(len([]rune(s.name)))*charW + legendSwatchSize + 18
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="4 2"`
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="3"%s/><text x="%.1f" y="%d" fill="#333">%s</text>`+"\n",
			x, legendY-4, x+legendSwatchSize+4, legendY-4, s.stroke(i), dash, x+legendSwatchSize+8, legendY, esc(s.name))
	}
}

// bounds returns the x range and the top of the y range (the bottom is
// zero); false when there is no point to draw.
func (c *chart) bounds() (x0, x1, y1 float64, ok bool) {
	x0, x1 = math.Inf(1), math.Inf(-1)
	y1 = c.yMax
	for _, s := range c.series {
		for i, p := range s.points {
			if math.IsNaN(p.y) {
				continue
			}
			ok = true
			x0, x1, y1 = min(x0, p.x), max(x1, p.x), max(y1, p.y)
			if i < len(s.highs) && !math.IsNaN(s.highs[i]) {
				y1 = max(y1, s.highs[i])
			}
		}
	}
	if !ok {
		return 0, 0, 0, false
	}
	for _, t := range c.xTicks {
		x0, x1 = min(x0, t), max(x1, t)
	}
	for _, m := range c.marks {
		x0, x1 = min(x0, m.x), max(x1, m.x)
	}
	switch {
	case c.xMin != nil:
		x0 = *c.xMin
	case !c.xTime:
		x0 = min(x0, 0)
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if !c.xTime {
		x1 += (x1 - x0) * 0.04 // room for the last label
	}
	if y1 <= 0 {
		y1 = 1
	}
	if c.yMax > 0 && y1 <= c.yMax {
		return x0, x1, c.yMax, true // a share: up to 100%, no further
	}
	// headroom above the highest point for the marks' labels, then the
	// next round value
	ticks := niceTicks(0, y1*1.12, 5)
	y1 = ticks[len(ticks)-1]
	return x0, x1, y1, true
}

// niceTicks returns about n round values (1, 2 or 5 times a power of ten
// apart) covering [lo, hi]: the first at or below lo, the last at or above
// hi.
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; ; v += step {
		out = append(out, roundTo(v, step))
		if v >= hi-step*1e-9 {
			break
		}
	}
	return out
}

// timeTicks returns about n ticks within [lo, hi] seconds, a round number
// of seconds or minutes apart (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15,
// 30 min, 1 h).
func timeTicks(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(n)
	step := 3600.0
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800} {
		if s >= raw {
			step = s
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// roundTo removes the float noise of adding step many times.
func roundTo(v, step float64) float64 {
	return math.Round(v/step*1e6) / 1e6 * step
}

// placeLabels gives each label, centred at its position, the first row in
// which it does not overlap the previous label of that row; -1 when no row
// has room (the tick is drawn, its label is not).
func placeLabels(pos []float64, texts []string, rows int) []int {
	return place(pos, texts, rows, 0.5)
}

// placeLabelsLeft is placeLabels for labels that start at their position.
func placeLabelsLeft(pos []float64, texts []string, rows int) []int {
	return place(pos, texts, rows, 0)
}

func place(pos []float64, texts []string, rows int, centre float64) []int {
	end := make([]float64, rows)
	for i := range end {
		end[i] = math.Inf(-1)
	}
	out := make([]int, len(pos))
	for i, p := range pos {
		w := float64(len([]rune(texts[i])))*charW + 6
		start := p - centre*w
		out[i] = -1
		for r := range rows {
			if start >= end[r] {
				out[i], end[r] = r, start+w
				break
			}
		}
	}
	return out
}

func esc(s string) string { return html.EscapeString(s) }

// clock formats seconds from the run's start as m:ss ("1:05"), or h:mm:ss.
func clock(s float64) string {
	n := int(math.Round(s))
	if n >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", n/3600, n/60%60, n%60)
	}
	return fmt.Sprintf("%d:%02d", n/60, n%60)
}
