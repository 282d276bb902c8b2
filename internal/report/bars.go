package report

import (
	"fmt"
	"math"
	"strings"
)

// Bar chart geometry, in SVG units: one row per bar, the labels in a
// column on the left, the values right of each bar's end.
const (
	barRowH, barH          = 24, 16
	barPadTop, barPadBelow = 8, 42 // below the rows: the ticks' labels, then the unit
	barLabelMax            = 40    // runes of a label drawn; longer ones end in "…"
	barTickLabelsRow       = 16
)

// Bar colours: the palette's first, and green for the marked bar.
var (
	barColor    = palette[0]
	markedColor = palette[2]
)

// missing is the text drawn in place of a bar without a value.
const missing = "—"

// Bars draws one horizontal bar per label as inline SVG, by hand: the
// value axis starts at zero and ends at a round value, marked with round
// ticks, so a bar's length is proportional to its value. Labels are drawn
// left of their bar and each bar's value, formatted by format, right of
// its end. A NaN or infinite value (a shape that did not start) draws no
// bar, only its label and "—"; a negative value draws as zero.
// The bar at index marked (-1: none) is drawn in its own colour and its
// value is followed by "best". title names the chart for screen readers
// (aria-label) and unit is the value axis' title. Every text is escaped.
// Bars returns "" when there is no label.
//
// Each bar is a <g class="bar"> (class "bar best" when marked, "bar
// missing" without a value) holding its tooltip, its label, its <rect>
// (none when missing) and its value, so that a test or a style sheet can
// find it.
func Bars(title, unit string, labels []string, values []float64, marked int, format func(float64) string) string {
	if len(labels) == 0 {
		return ""
	}
	value := func(i int) (float64, bool) {
		if i >= len(values) || math.IsNaN(values[i]) || math.IsInf(values[i], 0) {
			return 0, false
		}
		return max(values[i], 0), true
	}
	// The value axis: zero to the round value at or above the largest.
	top, finite := 0.0, false
	for i := range labels {
		if v, ok := value(i); ok {
			top, finite = max(top, v), true
		}
	}
	var ticks []float64
	if finite {
		ticks = niceTicks(0, top, 5)
		top = ticks[len(ticks)-1]
	}
	if top <= 0 {
		top = 1 // all zero: bars of no length
	}
	names := make([]string, len(labels))
	texts := make([]string, len(labels))
	labelW, textW := 0, 0
	for i, l := range labels {
		names[i] = clip(l, barLabelMax)
		texts[i] = missing
		if v, ok := value(i); ok {
			texts[i] = format(v)
		}
		if i == marked {
			texts[i] += " · best"
		}
		labelW = max(labelW, len([]rune(names[i])))
		textW = max(textW, len([]rune(texts[i])))
	}
	x0 := 14 + float64(labelW)*charW
	x1 := max(plotW-12-float64(textW)*charW, x0+200) // room for the values right of the longest bar
	px := func(v float64) float64 { return x0 + (x1-x0)*v/top }
	height := barPadTop + barRowH*len(labels) + barPadBelow
	bottom := barPadTop + barRowH*len(labels)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" font-family="system-ui,sans-serif" font-size="11">`+"\n",
		plotW, height, plotW, height, esc(title))
	// The grid and the ticks' labels, under the bars.
	pos := make([]float64, len(ticks))
	tickTexts := make([]string, len(ticks))
	for i, v := range ticks {
		pos[i], tickTexts[i] = px(v), format(v)
	}
	rows := placeLabels(pos, tickTexts, 1)
	for i := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>`, pos[i], barPadTop, pos[i], bottom+4)
		if rows[i] >= 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`, pos[i], bottom+barTickLabelsRow, esc(tickTexts[i]))
		}
		b.WriteString("\n")
	}
	for i := range labels {
		y := barPadTop + barRowH*i + (barRowH-barH)/2 // the bar's top
		mid := float64(y) + barH/2 + 4                // the text's baseline
		class, fill, weight := "bar", barColor, ""
		if i == marked {
			class, fill, weight = "bar best", markedColor, ` font-weight="600"`
		}
		v, ok := value(i)
		if !ok {
			class = "bar missing"
		}
		fmt.Fprintf(&b, `<g class="%s"><title>%s: %s</title><text x="%.1f" y="%.1f" text-anchor="end" fill="#333">%s</text>`,
			class, esc(labels[i]), esc(texts[i]), x0-8, mid, esc(names[i]))
		end := x0
		if ok {
			end = px(v)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`, x0, y, end-x0, barH, fill)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#333"%s>%s</text></g>`+"\n", end+5, mid, weight, esc(texts[i]))
	}
	// The zero line and the unit.
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>`+"\n", x0, barPadTop, x0, bottom+4)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>`+"\n", (x0+x1)/2, height-6, esc(unit))
	b.WriteString("</svg>")
	return b.String()
}

// clip shortens s to n runes, the last one "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
