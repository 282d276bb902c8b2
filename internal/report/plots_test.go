package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// findSample is a find over a demo-like target: levels 50, 100 and 200/s,
// then 141, 168, 154, 161 and 161 again (the edge, re-verified), one
// series a second with the target watched, two scenarios, deliveries that
// fall behind above 161/s and a queue that grows, failures at 200/s.
func findSample() *results.Result {
	pass, fail := true, false
	r := &results.Result{
		Schema: results.Schema, Command: "ceiling find plan.yaml --max 3200 --precision 5%", Name: "a find shaped like the demo's (the report package's test sample)",
		StartedAt:  time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		Host:       results.Host{OS: "linux/amd64", CPUs: 2, Version: "test"},
		Search:     &results.Search{Start: 50, Precision: 0.05, Outcome: "edge", Answer: "edge: 161/s at p99<50ms, errors<1%, delivered>=95%; 168/s fails: delivered 91.87%"},
		Edge:       &results.Edge{Rate: 161, Step: 7},
		Outcome:    results.Outcome{Status: results.StatusPassed, Strict: true, Reasons: []results.Reason{}},
		Passed:     true,
		Thresholds: []results.Threshold{{Expr: "p99<50ms", Value: 3, OK: true}, {Expr: "errors<1%", Value: 2.5, OK: false}, {Expr: "delivered>=95%", Value: 71, OK: false}},
	}
	levels := []float64{50, 100, 200, 141, 168, 154, 161, 161}
	t := 0.0
	for i, l := range levels {
		s := results.Step{Figures: results.Figures{Index: i, Model: "open", TargetRate: l, DurationS: 3, WarmupS: 1, AchievedRate: l, Workers: 4 + i,
			LatencyMS: metrics.Latency{P50: 0.3, P90: 0.5, P95: 0.6, P99: 0.8 + float64(i)/10, P999: 2, Max: 5}, Verdict: results.Healthy,
			WebSocket: &results.Sockets{Open: 20}}}
		s.Completed = int64(3 * l)
		s.OK = s.Completed
		expected := s.Completed
		delivered := min(expected, int64(3*161))
		if l > 161 {
			delivered = int64(float64(expected) * 0.9206)
		}
		queue := 3.0
		if l > 161 {
			queue = 412
		}
		s.Delivery = &results.Delivery{Expected: expected, Delivered: expected, AtStepEnd: &delivered}
		s.Target = &results.Target{CPUPct: l / 4, RSSMB: 30, Samples: 3, SourceSamples: 3, Metrics: map[string]results.Metric{
			"demo_queue_depth": {Last: queue, Max: queue}, `demo_save_seconds{quantile="0.99"}`: {Last: 5e-5, Max: 5.347e-05},
		}}
		s.Scenarios = []results.Breakdown{
			{Name: "send", Completed: s.Completed / 2, OK: s.Completed / 2, LatencyMS: metrics.Latency{P50: 0.3, P99: 0.9}},
			{Name: "list", Completed: s.Completed / 2, OK: s.Completed / 2, LatencyMS: metrics.Latency{P50: 0.2, P99: 0.5}},
		}
		if l == 200 {
			s.Failed, s.OK = 15, s.OK-15
			s.Errors = map[string]int64{"timeout": 10, "ws_no_ack": 5}
			s.ErrorRate = 15.0 / float64(s.Completed)
		}
		ok := (l <= 161)
		s.SLOPassed = map[bool]*bool{true: &pass, false: &fail}[ok]
		t += 2 // a pause between steps, then the warm-up
		for sec := range 4 {
			t++
			cpu, rss := l/4, 30.0
			p := results.Point{T: t, Completed: int64(l), OK: int64(l), Rate: l, P50: 0.3, P99: 0.8, Max: 2, TargetCPU: &cpu, TargetRSS: &rss}
			if sec == 0 { // the warm-up's last second: finished, not counted
				p.Completed, p.OK, p.Rate = 0, 0, 0
			}
			if l == 200 && sec == 2 {
				p.Failed = 15
			}
			s.Series = append(s.Series, p)
		}
		r.Steps = append(r.Steps, s)
		r.DeliverySeries = append(r.DeliverySeries, results.DeliveryPoint{T: t - 1, Arrived: int64(min(l, 161))}, results.DeliveryPoint{T: t, Arrived: int64(min(l, 161)), Backlog: int64(max(0, l-161))})
	}
	return r
}

// svgOf returns the SVG of the plot whose caption starts with prefix.
func svgOf(t *testing.T, r *results.Result, prefix string) string {
	t.Helper()
	var captions []string
	for _, p := range plotsOf(r) {
		if strings.HasPrefix(p.caption, prefix) {
			return p.svg
		}
		captions = append(captions, p.caption)
	}
	t.Fatalf("no plot %q among %q", prefix, captions)
	return ""
}

var circle = regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)"[^>]*><title>([^<]*)</title>`)

// dots returns the x of each dot whose tooltip contains name, by the
// level its tooltip names ("step 3, 200/s: p99 …").
func dots(t *testing.T, svg, name string) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, m := range circle.FindAllStringSubmatch(svg, -1) {
		if !strings.Contains(m[3], name) {
			continue
		}
		level := strings.TrimSuffix(strings.Fields(m[3])[2], ":")
		x, _ := strconv.ParseFloat(m[1], 64)
		out[level] = append(out[level], x)
	}
	return out
}

// The load axis is numeric: a step's dot sits at a distance from the
// first proportional to its rate (50→100/s is seven times as wide as
// 161→168/s), a level tried twice has both its dots at one x, and every
// level is marked on the axis (the old categorical axis spaced levels
// evenly and dropped labels).
func TestLoadAxisIsNumeric(t *testing.T) {
	r := findSample()
	for _, prefix := range []string{"Load against latency", "Load against delivery"} {
		svg := svgOf(t, r, prefix)
		name := "p99"
		if prefix == "Load against delivery" {
			name = "delivered"
		}
		x := dots(t, svg, name)
		if len(x["161/s"]) != 2 || x["161/s"][0] != x["161/s"][1] {
			t.Errorf("%s: the two steps at 161/s at x = %v, want two dots at one x", prefix, x["161/s"])
		}
		slope := (x["100/s"][0] - x["50/s"][0]) / 50
		for _, l := range []float64{141, 154, 161, 168, 200} {
			got := x[Rate(l)][0] - x["50/s"][0]
			if want := slope * (l - 50); math.Abs(got-want) > 0.5 {
				t.Errorf("%s: %s at %.1f from 50/s, want %.1f (proportional to the rate)", prefix, Rate(l), got, want)
			}
		}
		for _, l := range []string{"50/s", "100/s", "141/s", "154/s", "161/s", "168/s", "200/s"} {
			if !strings.Contains(svg, ">"+l+"</text>") {
				t.Errorf("%s: the axis does not mark %s", prefix, l)
			}
		}
		if !strings.Contains(svg, ">edge 161/s</text>") {
			t.Errorf("%s: the edge is not marked", prefix)
		}
	}
}

var yLabel = regexp.MustCompile(`<text x="58" y="([0-9.]+)" text-anchor="end" fill="#555">([^<]*)</text>`)

// Plots over time mark each step's start with its rate, label time as m:ss,
// and start their y axis at zero.
func TestTimePlots(t *testing.T) {
	r := findSample()
	for _, prefix := range []string{"Requests per second over time", "Response time over time", "Failed and limited", "Users, workers and open sockets", "Target CPU", "Target memory", "Deliveries per second"} {
		svg := svgOf(t, r, prefix)
		for _, want := range []string{">50/s</text>", ">200/s</text>", ">161/s (edge)</text>", ">0:10</text>", ">0:30</text>"} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s: lacks %s", prefix, want)
			}
		}
		labels := yLabel.FindAllStringSubmatch(svg, -1)
		if len(labels) < 2 || !slices.Contains([]string{"0", "0 ms", "0%", "0 MB", "0/s"}, labels[0][2]) {
			t.Errorf("%s: y axis labels %q, want the first at zero", prefix, labels)
		}
	}
	rate := svgOf(t, r, "Requests per second over time")
	if !strings.Contains(rate, ">target</text>") || !strings.Contains(rate, ">achieved (responses finished)</text>") {
		t.Errorf("the requests plot lacks target or achieved")
	}
}

// The achieved rate over time draws only the seconds that have a rate
// (window_s): not the one in which the window starts, which covers a
// sliver of it and whose responses count in the next second's rate, even
// when the ticks at the window's two ends were late by different amounts
// (here 3.0 and 1.0 ms), which placing the window by its last rate got
// wrong.
func TestRateOverTimeSkipsTheSliver(t *testing.T) {
	r := &results.Result{Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 50, DurationS: 3, Completed: 150, Series: []results.Point{
		{T: 1.003, Completed: 0},
		{T: 2.003, Completed: 1}, // the window starts at 2.000: a 3 ms sliver, no rate
		{T: 3.003, Completed: 50, Rate: 50.9, WindowS: 1.003},
		{T: 4.003, Completed: 50, Rate: 50, WindowS: 1},
		{T: 5.001, Completed: 49, Rate: 49, WindowS: 0.997},
	}}}}}
	var got []xy
	for _, c := range timeCharts(r, spansOf(r)) {
		for _, s := range c.chart.series {
			if strings.HasPrefix(s.name, "achieved") {
				got = append(got, s.points...)
			}
		}
	}
	var drawn []float64
	for _, p := range got {
		if !math.IsNaN(p.y) {
			drawn = append(drawn, p.x)
		}
	}
	if want := []float64{3.003, 4.003, 5.001}; !slices.Equal(drawn, want) {
		t.Errorf("achieved drawn at %v s, want %v: the seconds with a rate", drawn, want)
	}
}

// The latency distribution is read from each step's histogram (every
// percentile up to 99.99% and the maximum) or, without one, from the
// percentiles the step recorded.
func TestDistribution(t *testing.T) {
	r := findSample()
	h := metrics.NewHistogram()
	for v := int64(1); v <= 10000; v++ {
		h.RecordValue(v * 10) // 10 µs to 100 ms
	}
	enc, err := metrics.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	r.Steps[0].Histogram = enc
	svg := svgOf(t, r, "Latency distribution")
	x := map[string]int{}
	for _, m := range circle.FindAllStringSubmatch(svg, -1) {
		x[strings.Fields(m[3])[2]]++
		if strings.HasPrefix(m[3], "step 1,") && strings.Contains(m[3], "p99.99 ") && !strings.Contains(m[3], "p99.99 100 ms") {
			t.Errorf("step 1's p99.99 = %q, want 100 ms from its histogram", m[3])
		}
	}
	if x["50/s:"] != len(quantiles) || x["100/s:"] != 6 {
		t.Errorf("points per step = %v, want %d from the histogram (50/s) and 6 from the percentiles (others)", x, len(quantiles))
	}
}

// A run of several scenarios has a p99 and a throughput plot per
// scenario, errors by class against the load; a run of one has neither
// per-scenario plot.
func TestScenarioPlots(t *testing.T) {
	r := findSample()
	svg := svgOf(t, r, "Per scenario: p99")
	if !strings.Contains(svg, ">send</text>") || !strings.Contains(svg, ">list</text>") {
		t.Errorf("the per-scenario plot does not name both scenarios")
	}
	svgOf(t, r, "Per scenario: completed")
	// a scenario's name comes from the plan: its text is escaped
	r.Steps[0].Scenarios[0].Name = `<script>&"'`
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if svg := svgOf(t, r, "Per scenario: p99"); !strings.Contains(svg, ">&lt;script&gt;&amp;&#34;&#39;</text>") || strings.Contains(page.String(), "<script") {
		t.Errorf("a scenario named <script>&\"' is not escaped in the plots")
	}
	r = findSample()
	if svg := svgOf(t, r, "Errors by class"); !strings.Contains(svg, ">timeout</text>") || !strings.Contains(svg, ">ws_no_ack</text>") {
		t.Errorf("the errors-by-class plot lacks timeout or ws_no_ack")
	}
	for i := range r.Steps {
		r.Steps[i].Scenarios = r.Steps[i].Scenarios[:1]
	}
	for _, p := range plotsOf(r) {
		if strings.HasPrefix(p.caption, "Per scenario") {
			t.Errorf("one scenario has a plot %q", p.caption)
		}
	}
}

// A run says its highest step that passed (or that none did), and where
// it failed; a find does not (its answer says it).
func TestSummary(t *testing.T) {
	r := sample()
	if got, want := Summary(r), "highest step that passed: 400/s (step 2); 800/s (step 3) failed: p99 3.90 s, errors 16.67%"; got != want {
		t.Errorf("Summary(sample) = %q, want %q", got, want)
	}
	none := sample()
	for i := range none.Steps {
		f := false
		none.Steps[i].SLOPassed = &f
	}
	if got := Summary(none); !strings.HasPrefix(got, "no step passed; 200/s (step 1) failed: ") {
		t.Errorf("Summary(none passed) = %q, want no step passed", got)
	}
	users := &results.Result{Steps: []results.Step{
		{Figures: results.Figures{Index: 0, Model: "closed", VUs: 10, Verdict: results.Healthy}},
		{Figures: results.Figures{Index: 1, Model: "closed", VUs: 50, Verdict: results.Stressed}},
		{Figures: results.Figures{Index: 2, Model: "closed", VUs: 100, Verdict: results.Overloaded, VerdictReason: "p95 800 ms > 500 ms"}},
	}}
	if got, want := Summary(users), "highest step that passed: 50 users (step 2); 100 users (step 3) failed: p95 800 ms > 500 ms"; got != want {
		t.Errorf("Summary(users) = %q, want %q", got, want)
	}
	if got := Summary(findSample()); got != "" {
		t.Errorf("Summary(find) = %q, want none", got)
	}
	// A failure below a step that passed is not hidden by it, and each
	// scenario run alone (load.each) gets its own answer.
	dip := &results.Result{Steps: []results.Step{
		{Figures: results.Figures{Index: 0, Model: "closed", VUs: 10, Verdict: results.Healthy, Scenario: "a"}},
		{Figures: results.Figures{Index: 1, Model: "closed", VUs: 50, Verdict: results.Overloaded, VerdictReason: "errors 5%", Scenario: "a"}},
		{Figures: results.Figures{Index: 2, Model: "closed", VUs: 100, Verdict: results.Healthy, Scenario: "a"}},
		{Figures: results.Figures{Index: 3, Model: "closed", VUs: 10, Verdict: results.Healthy, Scenario: "b"}},
	}}
	if got, want := Summary(dip), "a: highest step that passed: 10 users (step 1); 50 users (step 2) failed: errors 5% (1 later steps passed after it); b: highest step that passed: 10 users (step 4)"; got != want {
		t.Errorf("Summary(dip) = %q\nwant %q", got, want)
	}
	for name, render := range map[string]func(*bytes.Buffer, *results.Result) error{
		"text": func(b *bytes.Buffer, r *results.Result) error { return Text(b, r) },
		"md":   func(b *bytes.Buffer, r *results.Result) error { return Markdown(b, r) },
		"html": func(b *bytes.Buffer, r *results.Result) error { return HTML(b, r) },
	} {
		var b bytes.Buffer
		if err := render(&b, r); err != nil || !strings.Contains(b.String(), "highest step that passed: 400/s (step 2)") {
			t.Errorf("%s report lacks the summary line (err %v)", name, err)
		}
	}
}

// What broke first comes from the result: the lowest failing level (168/s,
// not 200/s, which failed first in time), the terms that failed and held,
// and what grew on the target from the level below that passed.
func TestBrokeFirst(t *testing.T) {
	got := BrokeFirst(findSample())
	for _, want := range []string{
		"What broke first, at 168/s (step 5): delivered 91.87%.",
		"What held there: p99 1.2 ms, errors 0.00%.",
		"463 of 504 messages had been delivered by the step's end.",
		"From 161/s, the highest level below it that passed: target CPU 40% → 42%; demo_queue_depth max 3 → 412.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("BrokeFirst = %q, want it to say %q", got, want)
		}
	}
	if got := BrokeFirst(&results.Result{Steps: findSample().Steps[:2]}); got != "" {
		t.Errorf("BrokeFirst(nothing failed) = %q, want none", got)
	}
	var b bytes.Buffer
	if err := HTML(&b, findSample()); err != nil || !strings.Contains(b.String(), `<p class="story">What broke first, at 168/s`) {
		t.Errorf("the HTML report lacks what broke first (err %v)", err)
	}
	// WriteHTML tells the caller's story (the demo's) instead, escaped.
	path := filepath.Join(t.TempDir(), "r.html")
	if err := WriteHTML(path, findSample(), "the <lanes> broke"); err != nil {
		t.Fatal(err)
	}
	if page, err := os.ReadFile(path); err != nil || !strings.Contains(string(page), `<p class="story">the &lt;lanes&gt; broke</p>`) || strings.Contains(string(page), "What broke first, at") {
		t.Errorf("WriteHTML with a story: %v, want that story alone", err)
	}
}

// The demo's story is told of the lowest level that failed, as the HTML
// report's.
func TestDemoStoryLowestFailure(t *testing.T) {
	got := DemoStory(findSample(), Demo{Lanes: 8, SinkLatency: 50e6, AckP99MS: 50, DeliveredPct: 95})
	if !strings.Contains(got, "At 168/s only 463 of 504 messages") || !strings.Contains(got, "8 ÷ 50ms = 160 messages") {
		t.Errorf("DemoStory = %q, want the lanes' story at 168/s", got)
	}
}

// A level whose backlog grew through its step failed on delivery though
// 97 % of its messages had arrived by its end (over the SLO's 95 %): the
// demo's story is the lanes', with the backlog's growth, not "not the
// delivery lanes".
func TestDemoStoryBacklogGrew(t *testing.T) {
	pass := true
	mk := func(i int, rate float64, atEnd, start, end int64) results.Step {
		expected := int64(3 * rate)
		return results.Step{Figures: results.Figures{Index: i, Model: "open", TargetRate: rate, AchievedRate: rate, DurationS: 3, Completed: expected, OK: expected,
			LatencyMS: metrics.Latency{P50: 0.3, P95: 0.5, P99: 0.6}, SLOPassed: &pass,
			Delivery: &results.Delivery{Expected: expected, Delivered: expected, AtStepEnd: &atEnd, BacklogStart: &start, BacklogEnd: &end}}}
	}
	r := &results.Result{Search: &results.Search{Outcome: "edge"}, Steps: []results.Step{mk(0, 154, 462, 1, 0), mk(1, 161, 469, 4, 15)}}
	r.Judge(results.DefaultRules)
	got := DemoStory(r, Demo{Lanes: 8, SinkLatency: 50e6, AckP99MS: 50, DeliveredPct: 95})
	if !strings.Contains(got, "At 161/s the backlog of undelivered messages grew from 4 to 15 during the step (469 of 483 messages had arrived by its end)") {
		t.Errorf("DemoStory = %q, want the lanes' story at 161/s with the backlog's growth", got)
	}
}
