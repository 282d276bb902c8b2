package report

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func sample() *results.Result {
	pass, fail := true, false
	ended := time.Date(2026, 11, 30, 6, 2, 0, 0, time.UTC)
	return &results.Result{
		Schema:    results.Schema,
		Command:   "ceiling run --url http://127.0.0.1:8080/send --rate 200,400,800 --step 30s --slo 'p99<100ms'",
		Name:      "widget stairs",
		Target:    "http://127.0.0.1:8080/send",
		Host:      results.Host{Hostname: "box", OS: "linux/amd64", CPUs: 2, Version: "v0.1.0"},
		StartedAt: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC),
		EndedAt:   &ended,
		Steps: []results.Step{
			{Figures: results.Figures{Index: 0, Model: "open", TargetRate: 200, Completed: 6000, OK: 6000, AchievedRate: 200,
				LatencyMS: metrics.Latency{P50: 5.9, P95: 7.2, P99: 8.04, Max: 12.5}, SLOPassed: &pass, Verdict: "HEALTHY"}},
			{Figures: results.Figures{Index: 1, Model: "open", TargetRate: 400, Completed: 12000, OK: 11880, Limited: 120, AchievedRate: 399.1,
				LatencyMS: metrics.Latency{P50: 6.3, P95: 9.1, P99: 11.2, Max: 40}, SLOPassed: &pass}},
			{Figures: results.Figures{Index: 2, Model: "open", TargetRate: 800, Completed: 24000, OK: 20000, Failed: 4000, AchievedRate: 666.7,
				Errors: map[string]int64{"http_5xx": 3000, "timeout": 900, "reset": 100}, ErrorRate: 4000.0 / 24000,
				Late: 35, MaxLagMS: 31.5, Verdict: "OVERLOADED", VerdictReason: "errors 16.7% > 1.0%",
				Target: &results.Target{CPUPct: 61, CPULimitPct: 100, RSSMB: 112, Samples: 30},
				Notes: []string{"p99 3.9s reached the timeout (4s): its percentiles are lower bounds, shaped by the timeout",
					"latency rose without CPU saturation (p99 11.2ms → 3.9s at 61% of 100% CPU): something blocks (I/O, locks, a pool)"},
				LatencyMS: metrics.Latency{P50: 210, P95: 3300, P99: 3900, Max: 10000}, SLOPassed: &fail,
				Warnings: []string{"generator could not hold the rate"}}},
		},
		Thresholds: []results.Threshold{{Expr: "p99<100ms", Value: 3900, OK: false}, {Expr: "errors<1%", Value: 16.67, OK: false}},
		Outcome: results.Outcome{Status: results.StatusFailed, Strict: true, Reasons: []results.Reason{
			{Kind: results.ReasonThreshold, Text: "threshold p99<100ms failed"}, {Kind: results.ReasonThreshold, Text: "threshold errors<1% failed"}}},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestTextGolden(t *testing.T) {
	var b bytes.Buffer
	Text(&b, sample())
	golden(t, "table.txt", b.Bytes())
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	Markdown(&b, sample())
	golden(t, "table.md", b.Bytes())
}

func TestFormats(t *testing.T) {
	for in, want := range map[float64]string{0: "0 ms", 0.42: "0.42 ms", 8.64: "8.6 ms", 11.24: "11.2 ms", 482.2: "482 ms", 3900: "3.90 s", 12500: "12.5 s"} {
		if got := Millis(in); got != want {
			t.Errorf("Millis(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{480: "480/s", 12.5: "12.5/s", 1201.4: "1201/s"} {
		if got := Rate(in); got != want {
			t.Errorf("Rate(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0: "0%", 0.0013: "0.13%", 0.87: "87.0%"} {
		if got := Percent(in); got != want {
			t.Errorf("Percent(%v) = %q, want %q", in, got, want)
		}
	}
}

// The HTML report is one self-contained page: tables readable without
// JavaScript, plots as inline SVG, nothing fetched at view time.
func TestHTML(t *testing.T) {
	r := sample()
	for i := range r.Steps {
		for s := range 5 {
			r.Steps[i].Series = append(r.Steps[i].Series, results.Point{T: float64(i*5 + s + 1), Completed: 10, P50: 5, P99: 9 + float64(i*100)})
		}
	}
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<!doctype html>", "<table>", "<th>p99</th>", "<svg", "Load against latency", "Response time over time", "Requests per second over time", "Latency distribution", "Errors by class", "NOTE step 3", "FAILED: threshold p99&lt;100ms failed"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=\"http", "href=\"http", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page is not self-contained: it has %q", bad)
		}
	}
	if n := strings.Count(page, "<svg"); n != 5 {
		t.Errorf("%d plots, want 5 (no target, delivery, failures per second, workers or scenarios in the sample)", n)
	}
}

// Off a terminal, progress is a plain line every PlainEvery of the counted
// window (none in the warm-up) and one when the step ends; on a terminal
// the line is rewritten in place every tick.
func TestLiveLines(t *testing.T) {
	st := results.Progress{Index: 0, Rate: 100, Warmup: 2 * time.Second, Length: 12 * time.Second, Achieved: 100}
	ticks := func(l *Live) {
		for s := 1; s <= 14; s++ {
			p := st
			p.Elapsed, p.Warming = time.Duration(s)*time.Second, s <= 2
			l.Update(p)
		}
		end := st
		end.Elapsed, end.Done = 12*time.Second, true
		l.Update(end)
	}
	var plain bytes.Buffer
	ticks(NewLive(&plain, false, 3))
	lines := strings.Split(strings.TrimSuffix(plain.String(), "\n"), "\n")
	want := []string{"5s/12s", "10s/12s", "12s"}
	if len(lines) != len(want) || strings.Contains(plain.String(), "\r") {
		t.Fatalf("plain output = %q, want %d lines without carriage returns", plain.String(), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], "step 1/3  100/s") || !strings.Contains(lines[i], " "+w+"  ") {
			t.Errorf("plain line %d = %q, want step 1/3 at %s", i, lines[i], w)
		}
	}
	var term bytes.Buffer
	ticks(NewLive(&term, true, 3))
	if n := strings.Count(term.String(), "\r\x1b[K"); n != 15 {
		t.Errorf("terminal output rewrote the line %d times, want 15 (14 ticks and the end)", n)
	}
	if n := strings.Count(term.String(), "\n"); n != 1 {
		t.Errorf("terminal output has %d newlines, want 1 (the step's end)", n)
	}
}

// With sinks, the live line shows the step's ids delivered so far and the
// backlog behind the target; the wait for late deliveries counts down on a
// terminal each second (every PlainEvery elsewhere) with what arrived, and
// ends with a line that says how it ended.
func TestLiveDeliveries(t *testing.T) {
	var b bytes.Buffer
	l := NewLive(&b, false, 1)
	l.Update(results.Progress{Rate: 160, Length: 20 * time.Second, Elapsed: 20 * time.Second, Done: true, Achieved: 160,
		Delivery: &results.DeliveryNow{Expected: 3200, Delivered: 1404, Backlog: 1796}})
	if !strings.Contains(b.String(), "delivered 1404/3200  backlog 1796") {
		t.Errorf("live line = %q, want the deliveries and the backlog", b.String())
	}
	drain := func(l *Live) {
		for s := 1; s <= 12; s++ {
			l.Drain(results.Draining{Elapsed: time.Duration(s) * time.Second, Timeout: time.Minute, Missing: int64(1800 - 80*s), Arrived: 80})
		}
		l.Drain(results.Draining{Elapsed: 12500 * time.Millisecond, Timeout: time.Minute, Missing: 840, Done: true})
	}
	var term bytes.Buffer
	drain(NewLive(&term, true, 1))
	if n := strings.Count(term.String(), "\r\x1b[K"); n != 13 {
		t.Errorf("terminal drain rewrote its line %d times, want 13 (12 seconds and the end)", n)
	}
	if !strings.Contains(term.String(), "waiting for late deliveries  48s left of 1m0s  840 missing  80 arrived in the last 1s") {
		t.Errorf("terminal drain = %q, want a countdown with the missing ids and the arrivals", term.String())
	}
	var plain bytes.Buffer
	drain(NewLive(&plain, false, 1))
	lines := strings.Split(strings.TrimSuffix(plain.String(), "\n"), "\n")
	want := []string{
		"waiting for late deliveries  55s left of 1m0s  1400 missing  400 arrived in the last 5s",
		"waiting for late deliveries  50s left of 1m0s  1000 missing  400 arrived in the last 5s",
		"deliveries: 840 still missing when the wait ended after 12.5s, arrivals still coming",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("plain drain lines = %q, want %q", lines, want)
	}
}

// What a run did not measure follows from what it did.
func TestUnmeasured(t *testing.T) {
	has := func(lines []string, prefix string) bool {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
		return false
	}
	bare := &results.Result{Target: "http://127.0.0.1:8080", Steps: []results.Step{{Figures: results.Figures{Model: "closed", DurationS: 10}}}}
	u := Unmeasured(bare)
	for _, p := range []string{"The network", "The target's own resources", "What happens after the answer", "Time: the longest step lasted 10 s", "Arrivals that do not wait"} {
		if !has(u, p) {
			t.Errorf("Unmeasured(bare loopback closed run) = %q, want a line starting %q", u, p)
		}
	}
	full := &results.Result{Target: "https://api.example.com", Delivery: &results.Delivery{},
		Steps: []results.Step{{Figures: results.Figures{Model: "open", DurationS: 120, Target: &results.Target{Samples: 120, CPUPct: 35, RSSMB: 80, RSSMaxMB: 90}}}}}
	u = Unmeasured(full)
	if len(u) != 1 || !has(u, "Real outside services") {
		t.Errorf("Unmeasured(watched, delivered, long, remote open run) = %q, want only the mocks' caveat", u)
	}
	// Readings of the metrics endpoint alone say nothing of CPU and memory.
	scraped := &results.Result{Target: "https://api.example.com", Delivery: &results.Delivery{},
		Steps: []results.Step{{Figures: results.Figures{Model: "open", DurationS: 120, Target: &results.Target{Samples: 120,
			Metrics: map[string]results.Metric{"queue_depth": {Last: 3, Max: 5, Mean: 4}}}}}}}
	u = Unmeasured(scraped)
	if len(u) != 2 || !has(u, "The target's own resources: only its metrics endpoint was scraped") {
		t.Errorf("Unmeasured(scraped only) = %q, want the mocks' caveat and that only the endpoint was scraped", u)
	}
}

// A run stopped before any step finished still renders (Ctrl-C during the
// first step of a run with --html).
func TestHTMLWithoutFinishedSteps(t *testing.T) {
	for name, r := range map[string]*results.Result{
		"no steps":               {Schema: results.Schema},
		"one interrupted step":   {Schema: results.Schema, Interrupted: true, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 100, Interrupted: true}}}},
		"interrupted, delivered": {Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 100, Interrupted: true, Delivery: &results.Delivery{Expected: 5}}}}},
	} {
		var b bytes.Buffer
		if err := HTML(&b, r); err != nil || !strings.Contains(b.String(), "</html>") {
			t.Errorf("HTML(%s) = %v", name, err)
		}
	}
}

// Names from a plan are text in Markdown: no raw HTML, no links, no new
// table rows, and a command cannot close its code fence.
func TestMarkdownEscapes(t *testing.T) {
	r := &results.Result{Schema: results.Schema, Name: "<img src=x onerror=alert(1)> [x](javascript:y)\n| a |",
		Command: "ceiling run --body '```'", Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 10}}}}
	var b bytes.Buffer
	Markdown(&b, r)
	md := b.String()
	for _, bad := range []string{"<img", "[x](", "\n| a |", "\n```\nceiling"} {
		if strings.Contains(md, bad) {
			t.Errorf("the Markdown holds %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "````\nceiling run --body '```'\n````") {
		t.Errorf("the command is not fenced past its backticks:\n%s", md)
	}
}

// What the target sent (a failed check's body, in a step's warning), the
// findings and a tag key are text in the Markdown report, as in the job
// summary: no HTML, no closing of <details>, no link, no new table row.
func TestMarkdownEscapesFindings(t *testing.T) {
	body := "<img src=x onerror=alert(1)> </details><script>alert(2)</script> [click](http://evil.test/)"
	r := &results.Result{Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{
		Model: "open", TargetRate: 10, Completed: 10, Failed: 10, ErrorRate: 1,
		Warnings: []string{"check failed on the body: " + body},
		Tags:     map[string]map[string]results.Breakdown{"<b>site</b> | x": {"a": {Completed: 10}}},
	}}}, Invalid: []string{"step 1: " + body}, Warnings: []string{body}}
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, bad := range []string{"<img", "</details>", "<script>", "[click](", "<b>", "</b> | x"} {
		if strings.Contains(md, bad) {
			t.Errorf("the Markdown holds %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "WARNING step 1: check failed on the body: &lt;img") {
		t.Errorf("the warning is not there, escaped:\n%s", md)
	}
}

// The HTML report is written whole or not at all: through a temporary file
// renamed over the path, which leaves nothing else behind.
func TestWriteHTMLAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.html")
	r := &results.Result{Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 10}}}}
	for range 2 {
		if err := WriteHTML(path, r, ""); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if page, err := os.ReadFile(path); err != nil || !strings.Contains(string(page), "</html>") || len(entries) != 1 {
		t.Errorf("folder holds %d files, page %d bytes (err %v); want the whole page alone", len(entries), len(page), err)
	}
	if err := WriteHTML(filepath.Join(dir, "missing", "r.html"), r, ""); err == nil {
		t.Errorf("WriteHTML into a missing folder = nil, want an error")
	}
}

// A render that fails halfway leaves the previous file as it was and no
// temporary file behind.
func TestWriteFileRenderError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.html")
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "whole"); return err }); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("render failed")
	err := WriteFile(path, func(w io.Writer) error { io.WriteString(w, "half"); return failed })
	page, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if !errors.Is(err, failed) || string(page) != "whole" || len(entries) != 1 {
		t.Errorf("WriteFile(failing render) = %v, file %q, %d files; want the error, \"whole\" alone", err, page, len(entries))
	}
}

// A step of a plan with a login has a line for its logins under it, in
// the text and Markdown tables alike; the step's own row is unchanged.
func TestLoginLine(t *testing.T) {
	r := sample()
	r.Steps[1].Logins = &results.Logins{Count: 13, OK: 10, Failed: 3, Retried: 3, NotLoggedIn: 1,
		ByClass: map[string]int64{"timeout": 3}, LatencyMS: metrics.Latency{P50: 12, P95: 900, P99: 1000, Max: 1000}}
	var text, md bytes.Buffer
	if err := Text(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if n := strings.Count(out, "↳ login"); n != 1 {
			t.Errorf("%s: %d login lines, want 1 (only step 2 has logins):\n%s", name, n, out)
		}
		for _, want := range []string{"13 logins", "23.1% (timeout 3)", "3 retried, 1 users not logged in"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in the login line:\n%s", name, want, out)
			}
		}
	}
}

// The per-endpoint table's Success counts the answers of the URL asked
// for: in a strict run an answer that came after following a redirect
// (the login page every URL is sent to) is not a success; a run that
// opted out counts it, and says so.
func TestEndpointSuccessLeavesOutRedirects(t *testing.T) {
	for _, strict := range []bool{true, false} {
		r := &results.Result{Outcome: results.Outcome{Strict: strict}, Steps: []results.Step{
			{Figures: results.Figures{Scenario: "dashboard", Model: "closed", VUs: 10, Completed: 1000, OK: 1000, Redirected: 750, Throughput: 500}},
		}}
		var b bytes.Buffer
		endpointTable(&b, r)
		want, note := "| 25.0% |", "Success leaves out the answers that came after following a redirect"
		if !strict {
			want, note = "| 100.0% |", "Success counts the answers that came after following a redirect (strict: false)"
		}
		if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), note) {
			t.Errorf("strict %v: want %q and %q in\n%s", strict, want, note, b.String())
		}
	}
}

// The live page shows the outcome so far, from the same outcome as every
// report (a run under way is not called unfinished), and the final page
// the outcome itself.
func TestLivePageShowsTheOutcome(t *testing.T) {
	r := sample()
	r.Unfinished = true
	r.Outcome.Reasons = append([]results.Reason{{Kind: results.ReasonUnfinished, Text: "ceiling stopped before the run ended"}}, r.Outcome.Reasons...)
	r.Outcome.Status = results.StatusUnfinished
	live := LiveBody(r, nil, "")
	if !strings.Contains(live, "so far: FAILED: threshold p99&lt;100ms failed") || strings.Contains(live, "UNFINISHED") {
		t.Errorf("the live page's outcome:\n%s", live)
	}
	if final := FinalBody(sample()); !strings.Contains(final, "<p class=\"answer\">FAILED: threshold p99&lt;100ms failed") {
		t.Errorf("the final page has no outcome line:\n%s", final)
	}
}
