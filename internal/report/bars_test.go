package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// bar is one <g class="bar"> of a Bars chart, as drawn.
type bar struct {
	class, tip, body string
	rect             bool
	x, width         float64
	fill             string
}

var (
	barGroup = regexp.MustCompile(`<g class="([^"]*)"><title>([^<]*)</title>(.*?)</g>`)
	barRect  = regexp.MustCompile(`<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)" height="[0-9.]+" fill="(#[0-9a-f]+)"/>`)
)

// parseBars reads a Bars chart's bars in order.
func parseBars(t *testing.T, svg string) []bar {
	t.Helper()
	var out []bar
	for _, m := range barGroup.FindAllStringSubmatch(svg, -1) {
		b := bar{class: m[1], tip: m[2], body: m[3]}
		if r := barRect.FindStringSubmatch(m[3]); r != nil {
			b.rect, b.fill = true, r[3]
			b.x, _ = strconv.ParseFloat(r[1], 64)
			b.width, _ = strconv.ParseFloat(r[2], 64)
		}
		out = append(out, b)
	}
	return out
}

// One bar per label, from one zero line, its length proportional to its
// value on an axis ending at a round value; the marked bar alone in its
// colour and labelled best; a missing value drawn as its label and "—".
func TestBars(t *testing.T) {
	values := []float64{100, 230, math.NaN(), 50, 0}
	svg := Bars("Throughput", "req/s", []string{"a", "b", "c", "d", "e"}, values, 1, Rate)
	bars := parseBars(t, svg)
	if len(bars) != len(values) {
		t.Fatalf("Bars drew %d bars, want %d:\n%s", len(bars), len(values), svg)
	}
	if n := strings.Count(svg, "<rect"); n != 4 {
		t.Errorf("Bars drew %d rects, want 4 (none for the NaN)", n)
	}
	// The axis runs from 0 to 250/s, the round value above 230, ticks
	// every 50/s: a bar's length is its value on that scale.
	tick := func(text string) float64 {
		m := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9]+" text-anchor="middle" fill="#555">` + text + `</text>`).FindStringSubmatch(svg)
		if m == nil {
			t.Fatalf("the value axis lacks the tick %s:\n%s", text, svg)
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		return x
	}
	zero, scale := tick("0/s"), (tick("250/s")-tick("0/s"))/250
	if top := tick("250/s"); top > plotW-padRight {
		t.Errorf("the axis' last tick is at %.1f, past the figure's edge %d", top, plotW-padRight)
	}
	if x := tick("50/s"); math.Abs(x-zero-50*scale) > 0.1 {
		t.Errorf("the 50/s tick is at %.1f, want %.1f", x, zero+50*scale)
	}
	for i, b := range bars {
		if i == 2 {
			continue
		}
		if !b.rect || math.Abs(b.x-zero) > 0.05 {
			t.Errorf("bar %d: rect %v at x=%v, want one from the zero tick at x=%v", i, b.rect, b.x, zero)
		}
		if want := values[i] * scale; math.Abs(b.width-want) > 0.1 {
			t.Errorf("bar %d (%v) is %.1f long, want %.1f (proportional, from zero)", i, values[i], b.width, want)
		}
	}
	for i, b := range bars {
		marked := i == 1
		if (b.class == "bar best") != marked || (b.fill == markedColor) != marked || strings.Contains(b.body, "best") != marked {
			t.Errorf("bar %d: class %q, fill %s, body %s; want the marked colour and \"best\" on bar 1 only", i, b.class, b.fill, b.body)
		}
		if !marked && b.rect && b.fill != barColor {
			t.Errorf("bar %d is %s, want %s", i, b.fill, barColor)
		}
	}
	if strings.Count(svg, markedColor) != 1 {
		t.Errorf("the marked colour appears %d times, want once", strings.Count(svg, markedColor))
	}
	if c := bars[2]; c.class != "bar missing" || c.rect || !strings.Contains(c.body, ">c</text>") || !strings.Contains(c.body, ">—</text>") {
		t.Errorf("the NaN bar: class %q, rect %v, body %s; want its label and — alone", c.class, c.rect, c.body)
	}
	if !strings.Contains(bars[0].body, ">100/s</text>") || bars[0].tip != "a: 100/s" {
		t.Errorf("bar 0 is not labelled with its value: tip %q, body %s", bars[0].tip, bars[0].body)
	}
}

// Nothing marked, nothing drawn in the marked colour; every value missing
// still draws the labels; no label, no chart.
func TestBarsEdges(t *testing.T) {
	svg := Bars("t", "u", []string{"a", "b"}, []float64{1, 2}, -1, Rate)
	if strings.Contains(svg, markedColor) || strings.Contains(svg, "best") {
		t.Errorf("Bars(marked -1) marks a bar:\n%s", svg)
	}
	svg = Bars("t", "u", []string{"a", "b"}, []float64{math.NaN(), math.Inf(1)}, -1, Rate)
	if bars := parseBars(t, svg); len(bars) != 2 || strings.Contains(svg, "<rect") || bars[0].class != "bar missing" || bars[1].class != "bar missing" {
		t.Errorf("Bars(all missing) = %v, want two labels without bars:\n%s", bars, svg)
	}
	if svg := Bars("t", "u", nil, nil, -1, Rate); svg != "" {
		t.Errorf("Bars(no label) = %q, want \"\"", svg)
	}
	long := strings.Repeat("x", 100)
	if svg := Bars("t", "u", []string{long}, []float64{1}, 0, Rate); !strings.Contains(svg, ">"+strings.Repeat("x", barLabelMax-1)+"…</text>") || !strings.Contains(svg, "<title>"+long+": ") {
		t.Errorf("a long label is not clipped in the chart and whole in its tooltip:\n%s", svg)
	}
}

// Every text of a chart is escaped: labels, title, unit, values.
func TestBarsEscapes(t *testing.T) {
	bad := `<script>alert("x")</script>`
	svg := Bars(bad, bad, []string{bad, "b"}, []float64{1, math.NaN()}, 0, func(float64) string { return bad })
	if strings.Contains(svg, "<script") || strings.Contains(svg, `"x"`) {
		t.Errorf("Bars left markup unescaped:\n%s", svg)
	}
	if !strings.Contains(svg, "&lt;script&gt;") {
		t.Errorf("Bars dropped the text instead of escaping it:\n%s", svg)
	}
}

// Page is the run report's page around a body: title escaped in the head
// and the heading, the style sheet followed by the caller's rules.
func TestPage(t *testing.T) {
	var b strings.Builder
	if err := Page(&b, "a <b>", ".x{}", "<p>body</p>\n"); err != nil {
		t.Fatal(err)
	}
	p := b.String()
	for _, want := range []string{"<title>a &lt;b&gt;</title>", "<h1>a &lt;b&gt;</h1>\n<p>body</p>\n</body></html>\n", css + ".x{}</style>"} {
		if !strings.Contains(p, want) {
			t.Errorf("Page lacks %q:\n%s", want, p)
		}
	}
}
