package report

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/compare"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// repeated is a run of stairs at these levels, each step repeated 5
// times: p50 at level l is base + l/100 ms (each repeat moved by -0.4,
// -0.2, 0, +0.2, +0.4 ms) and p99 twice p50, throughput the level.
func repeated(base float64, levels ...float64) *results.Result {
	r := &results.Result{Schema: results.Schema}
	for i, l := range levels {
		rep := &results.Repeat{N: 5, Values: map[string][]float64{}, CoVPct: map[string]float64{}}
		for _, d := range []float64{-0.4, -0.2, 0, 0.2, 0.4} {
			p50 := base + l/100 + d
			rep.Values["p50"] = append(rep.Values["p50"], p50)
			rep.Values["p95"] = append(rep.Values["p95"], 1.5*p50)
			rep.Values["p99"] = append(rep.Values["p99"], 2*p50)
			rep.Values["throughput"] = append(rep.Values["throughput"], l)
			rep.Values["error_rate"] = append(rep.Values["error_rate"], 0)
		}
		for m, v := range rep.Values {
			rep.CoVPct[m] = results.CoV(v)
		}
		p50 := base + l/100
		r.Steps = append(r.Steps, results.Step{Figures: results.Figures{Index: i, Model: "open", TargetRate: l, DurationS: 10, Throughput: l, Completed: int64(5 * 10 * l),
			LatencyMS: metrics.Latency{P50: p50, P95: 1.5 * p50, P99: 2 * p50}, Repeat: rep}})
	}
	return r
}

func compareHTML(t *testing.T, r *compare.Report) string {
	t.Helper()
	var b strings.Builder
	if err := CompareFormats["html"](&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The compare page: the verdict on top, the test and the number of
// comparisons, one plot with both runs' p50 and p99 placed numerically
// against the load (A dashed, B solid, the repeats' range as whiskers),
// and the table with a row per change, the significant ones coloured.
func TestCompareHTML(t *testing.T) {
	levels := []float64{100, 200, 800}
	r := compare.Compare(repeated(20, levels...), repeated(26, levels...), compare.Options{A: "a.json", B: "b.json", MinEffect: 5})
	page := compareHTML(t, r)
	if !strings.HasPrefix(page, "<!doctype html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Errorf("not a whole page: %.80q … %.20q", page, page[max(0, len(page)-20):])
	}

	verdict := strings.Index(page, `<p class="answer worse">verdict: worse: 9 significant changes, 9 worse, 0 better</p>`)
	if verdict < 0 || verdict > strings.Index(page, "<svg") || verdict > strings.Index(page, "<table") {
		t.Errorf("the verdict is not on top, before the plot and the table (at %d)", verdict)
	}
	for _, want := range []string{"Mann-Whitney U rank test", "15 comparisons (5 metrics × 3 steps)", "a.json (baseline, 5 repeats) → b.json (5 repeats)", "<script", "<link"} {
		if got := strings.Contains(page, want); got != !strings.HasPrefix(want, "<") {
			t.Errorf("page contains %q: %v, want %v", want, got, !got)
		}
	}

	if n := strings.Count(page, "<svg"); n != 1 {
		t.Fatalf("%d plots, want 1", n)
	}
	svg := page[strings.Index(page, "<svg"):strings.Index(page, "</svg>")]
	for _, side := range []string{"A", "B"} {
		for _, m := range []string{"p50", "p99"} {
			x := dots(t, svg, side+" "+m)
			if len(x) != 3 {
				t.Fatalf("%s %s: dots at %v, want one per level", side, m, x)
			}
			slope := (x["200/s"][0] - x["100/s"][0]) / 100
			if got, want := x["800/s"][0]-x["100/s"][0], slope*700; math.Abs(got-want) > 0.5 {
				t.Errorf("%s %s: 800/s at %.1f from 100/s, want %.1f (proportional to the rate)", side, m, got, want)
			}
		}
	}
	ya, yb := dotY(t, svg, "200/s: A p99"), dotY(t, svg, "200/s: B p99")
	if !(yb < ya) { // SVG's y grows downwards
		t.Errorf("at 200/s B's p99 is drawn at y %.1f, A's at %.1f: want B's higher (slower)", yb, ya)
	}
	for _, l := range []string{"100/s", "200/s", "800/s"} {
		if !strings.Contains(svg, ">"+l+"</text>") {
			t.Errorf("the axis does not mark %s", l)
		}
	}
	polylines := regexp.MustCompile(`<polyline [^>]*>`).FindAllString(svg, -1)
	if len(polylines) != 4 || strings.Count(strings.Join(polylines, ""), "stroke-dasharray") != 2 {
		t.Errorf("lines: %q, want 4, two of them (A's) dashed", polylines)
	}
	if n := strings.Count(svg, `class="whisker"`); n != 12 {
		t.Errorf("%d whiskers, want 12 (4 series × 3 levels)", n)
	}
	if !strings.Contains(svg, "5 repeats from 26.6 ms to 27.4 ms") {
		t.Errorf("B p50's tooltip at 100/s does not give the repeats' range")
	}

	rows := regexp.MustCompile(`<tr class="([a-z ]*)">`).FindAllStringSubmatch(page, -1)
	if len(rows) != len(r.Changes) {
		t.Fatalf("%d rows, want %d (one per change)", len(rows), len(r.Changes))
	}
	var worse int
	for _, m := range rows {
		if m[1] == "worse" {
			worse++
		}
	}
	if worse != 9 {
		t.Errorf("%d rows marked worse, want 9 (p50, p95, p99 of 3 steps)", worse)
	}
	if !strings.Contains(page, "<td>2 (200/s)</td><td>(all)</td><td>p99</td><td>44.0 ms</td><td>56.0 ms</td><td>+27.3 %</td><td>p=0.0079</td><td>worse</td>") {
		t.Errorf("the page lacks the row of step 2's p99")
	}
}

// The other way round, B is better: green; single runs have no plot's
// whiskers, an unknown verdict and their notes.
func TestCompareHTMLBetterAndNotes(t *testing.T) {
	r := compare.Compare(repeated(26, 100, 200), repeated(20, 100, 200), compare.Options{A: "a.json", B: "b.json", MinEffect: 5})
	page := compareHTML(t, r)
	if !strings.Contains(page, `<p class="answer better">verdict: better: 6 significant changes, 0 worse, 6 better</p>`) ||
		strings.Count(page, `<tr class="better">`) != 6 {
		t.Errorf("B faster: the page does not say better, or colour 6 rows better")
	}

	a, b := repeated(20, 100, 200), repeated(26, 100, 300)
	for _, s := range []*results.Result{a, b} {
		for i := range s.Steps {
			s.Steps[i].Repeat = nil
		}
	}
	r = compare.Compare(a, b, compare.Options{A: "a.json", B: "b.json"})
	page = compareHTML(t, r)
	if !strings.Contains(page, `<p class="answer unknown">verdict: unknown: no noise estimate (use --repeat)</p>`) {
		t.Errorf("single runs: the verdict is not unknown")
	}
	if !strings.Contains(page, "<li>step 2 is 200/s in A, 300/s in B: compared by index</li>") {
		t.Errorf("the page lacks the note on steps of other levels")
	}
	if strings.Contains(page, "whisker") || strings.Contains(page, `<tr class="worse">`) {
		t.Errorf("single runs: whiskers or significant rows drawn")
	}
	// B's second step is at its own level, 300/s; A's at 200/s.
	svg := page[strings.Index(page, "<svg"):]
	if x := dots(t, svg, "B p99"); len(x["300/s"]) != 1 || len(x["200/s"]) != 0 {
		t.Errorf("B's dots at %v, want one at 300/s and none at 200/s", x)
	}
}

// Scenario names, control names and file names come from users: every
// one is escaped, in the table, the notes and the title.
func TestCompareHTMLEscapes(t *testing.T) {
	const name = `<script>&"'`
	mk := func(p99 float64) *results.Result {
		r := repeated(p99, 100)
		r.Steps[0].Repeat = nil
		r.Steps[0].Scenarios = []results.Breakdown{
			{Name: name, Completed: 100, OK: 100, LatencyMS: metrics.Latency{P50: p99 / 2, P99: p99}},
			{Name: "b", Completed: 100, OK: 100, LatencyMS: metrics.Latency{P50: 1, P99: 2}},
		}
		return r
	}
	a := mk(20)
	a.Steps[0].Scenarios = append(a.Steps[0].Scenarios, results.Breakdown{Name: name + "2", Completed: 1})
	r := compare.Compare(a, mk(26), compare.Options{A: name + ".json", B: "b.json", Thresholds: mustThresholds(t, "p99:+10%")})
	page := compareHTML(t, r)
	if strings.Contains(page, "<script") || strings.Contains(page, `&"'`) {
		t.Errorf("the page holds the name unescaped")
	}
	const escaped = `&lt;script&gt;&amp;&#34;&#39;`
	for _, where := range []string{"<title>ceiling compare: " + escaped + ".json", "<td>" + escaped + "</td>", `scenario &#34;&lt;script&gt;&amp;\&#34;&#39;2&#34; is only in A` /* the note quotes it with %q */, "threshold crossed: p99:+10%"} {
		if !strings.Contains(page, where) {
			t.Errorf("the page lacks %q", where)
		}
	}
}

func mustThresholds(t *testing.T, s string) []compare.Threshold {
	t.Helper()
	o, err := compare.ParseOptions(s, 5, compare.DefaultMinAbs)
	if err != nil {
		t.Fatal(err)
	}
	return o.Thresholds
}

var dotAt = regexp.MustCompile(`<circle cx="[0-9.]+" cy="([0-9.]+)"[^>]*><title>([^<]*)</title>`)

// dotY returns the y of the dot whose tooltip contains name.
func dotY(t *testing.T, svg, name string) float64 {
	t.Helper()
	i := slices.IndexFunc(dotAt.FindAllStringSubmatch(svg, -1), func(m []string) bool { return strings.Contains(m[2], name) })
	if i < 0 {
		t.Fatalf("no dot %q", name)
	}
	y, _ := strconv.ParseFloat(dotAt.FindAllStringSubmatch(svg, -1)[i][1], 64)
	return y
}

// Results of load.each: one line per side, figure and scenario, so the
// lines do not zigzag between endpoints, and tooltips name the scenario.
func TestCompareChartEach(t *testing.T) {
	var r compare.Report
	for i, sc := range []string{"landing", "dashboard"} {
		for _, m := range []string{results.MetricP50, results.MetricP99} {
			for _, vus := range []int{2, 4} {
				r.Changes = append(r.Changes, compare.Change{Step: i*2 + vus/4, StepB: i*2 + vus/4, VUs: vus, VUsB: vus,
					StepScenario: sc, Metric: m, A: float64(10 * (i + 1)), B: float64(12 * (i + 1))})
			}
		}
	}
	c := compareChart(&r)
	if len(c.series) != 8 {
		t.Fatalf("%d lines, want 2 sides × 2 figures × 2 scenarios", len(c.series))
	}
	for _, s := range c.series {
		if len(s.points) != 2 || !strings.Contains(s.name, "landing") && !strings.Contains(s.name, "dashboard") {
			t.Errorf("line %q has %d points, want one scenario's 2 levels", s.name, len(s.points))
		}
		if !strings.Contains(s.tips[0], "landing · ") && !strings.Contains(s.tips[0], "dashboard · ") {
			t.Errorf("tooltip %q does not name the scenario", s.tips[0])
		}
	}
}

// The control's rows are marked on the page: grey when it held, red when
// it moved; the changes it suppressed are amber, and the verdict says what
// would have been significant.
func TestCompareHTMLControl(t *testing.T) {
	alone := func(base float64, scenario string) *results.Result {
		r := repeated(base, 100)
		r.Control = "landing"
		r.Steps[0].Scenario = scenario
		return r
	}
	both := func(landing, api float64) *results.Result {
		l, a := alone(landing, "landing"), alone(api, "api")
		a.Steps[0].Index = 1
		l.Steps = append(l.Steps, a.Steps[0])
		return l
	}
	opts := compare.Options{A: "a.json", B: "b.json", MinEffect: 5, MinAbs: compare.DefaultMinAbs}
	page := compareHTML(t, compare.Compare(both(5, 20), both(5, 26), opts))
	if strings.Count(page, `<tr class="control">`) != 5 || strings.Count(page, `<tr class="worse">`) != 3 {
		t.Errorf("steady control: want its 5 rows grey and the api's 3 latencies red:\n%s", page)
	}
	page = compareHTML(t, compare.Compare(both(5, 20), both(9, 26), opts))
	if !strings.Contains(page, `<p class="answer unknown">verdict: unknown: host busy: the control moved; regression signal suppressed: 2 (api · 100/s) p50 +28.6 % p=0.0079`) ||
		strings.Count(page, `<tr class="worse control">`) != 3 || strings.Count(page, `<tr class="suppressed">`) != 3 {
		t.Errorf("control moved: want the verdict naming what it suppressed, its 3 latencies red, the api's 3 amber:\n%s", page)
	}
}

// With deliveries and a watched target on both sides, the compare page
// also plots the target's CPU and the share delivered against the load,
// A dashed and B solid, and its table has their rows; without them it
// has neither plot.
func TestCompareHTMLStepFigures(t *testing.T) {
	levels := []float64{100, 200}
	withFigures := func(r *results.Result, cpu float64, atEnd int64) *results.Result {
		for i := range r.Steps {
			s := &r.Steps[i]
			s.Target = &results.Target{CPUPct: cpu * s.TargetRate / 100, RSSMB: 30, Samples: 3, SourceSamples: 3}
			n := atEnd
			s.Delivery = &results.Delivery{Expected: 1000, Delivered: 1000, AtStepEnd: &n, LatencyMS: metrics.Latency{P50: 60, P99: 90}}
		}
		return r
	}
	page := compareHTML(t, compare.Compare(withFigures(repeated(20, levels...), 48, 678), withFigures(repeated(20, levels...), 31, 1000), compare.Options{A: "before.json", B: "after.json"}))
	for _, want := range []string{
		"<figcaption>Load against the target&#39;s CPU: A (before.json, the baseline) dashed, B (after.json) solid",
		"<figcaption>Load against the share delivered by each step&#39;s end: A (before.json, the baseline) dashed, B (after.json) solid",
		"<title>step 2, 200/s: A target_cpu 96.0%</title>", "<title>step 2, 200/s: B target_cpu 62.0%</title>",
		"<title>step 1, 100/s: A delivered 67.8%</title>", "<title>step 1, 100/s: B delivered 100.0%</title>",
		"<td>target_cpu</td><td>96.0 %</td><td>62.0 %</td><td>-35.4 %</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 3 {
		t.Errorf("%d plots, want latency, CPU and delivered", n)
	}
	plain := compareHTML(t, compare.Compare(repeated(20, levels...), repeated(26, levels...), compare.Options{}))
	if n := strings.Count(plain, "<svg"); n != 1 || strings.Contains(plain, "target_cpu") {
		t.Errorf("without deliveries and a target: %d plots; want the latency's alone", n)
	}
}
