package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// apiServer answers /api after d and /static at once.
func apiServer(t *testing.T, d time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			time.Sleep(d)
		}
		w.Write([]byte("ok " + r.URL.Path))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCompareRealRuns runs a plan with a control against a 20 ms endpoint
// and a 26 ms one (single runs: --repeat is not here yet) and compares the
// result files as a user would. Single runs have no noise estimate, so the
// output says so and gives the deltas; timing is not asserted.
func TestCompareRealRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	var files []string
	for i, d := range []time.Duration{20 * time.Millisecond, 26 * time.Millisecond} {
		srv := apiServer(t, d)
		planFile := filepath.Join(dir, "plan.yaml")
		yaml := "target: " + srv.URL + "\nload: {rates: [40], step: 1s, warmup: 200ms}\ncontrol: static\n" +
			"scenarios:\n  - {name: api, weight: 3, request: {url: /api}}\n  - {name: static, request: {url: /static}}\n"
		if err := os.WriteFile(planFile, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		if code, _, stderr := ceiling(t, ctx, "run", planFile, "--out", out, "--quiet"); code != ExitOK {
			t.Fatalf("run against %v: exit %d, want 0; stderr:\n%s", d, code, stderr)
		}
		if r := readResult(t, out); r.Control != "static" {
			t.Fatalf("result control = %q, want %q", r.Control, "static")
		}
		files = append(files, out)
	}
	code, stdout, stderr := ceiling(t, ctx, "compare", files[0], files[1], "--fail-on-regression")
	t.Logf("ceiling compare a.json b.json:\n%s", stdout)
	if code != ExitOK {
		t.Fatalf("compare: exit %d, want 0 (single runs are never a significant regression); stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"test: no noise estimate (use --repeat): deltas only", "Δ", "(single run)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^1 \(40/s\)\s+api\s+p50\s+[\d.]+ ms\s+[\d.]+ ms\s+[+-][\d.]+ %`).MatchString(stdout) {
		t.Errorf("compare output lacks api's p50 delta")
	}
	code, stdout, _ = ceiling(t, ctx, "compare", files[0], files[1], "--format", "json")
	var got struct{ Verdict, Test string }
	if err := json.Unmarshal([]byte(stdout), &got); code != ExitOK || err != nil || got.Verdict != "unknown" {
		t.Errorf("compare --format json: exit %d, %v, verdict %q; want 0, unknown", code, err, got.Verdict)
	}
}

// writeRepeated writes a result whose one step ran 5 times with these p50s
// (ms); p99 is 1.5 × p50, throughput 100/s.
func writeRepeated(t *testing.T, path string, p50 ...float64) {
	t.Helper()
	rep := &results.Repeat{N: len(p50), Values: map[string][]float64{}, CoVPct: map[string]float64{}}
	for _, x := range p50 {
		rep.Values["p50"] = append(rep.Values["p50"], x)
		rep.Values["p95"] = append(rep.Values["p95"], x*1.2)
		rep.Values["p99"] = append(rep.Values["p99"], x*1.5)
		rep.Values["throughput"] = append(rep.Values["throughput"], 100)
		rep.Values["error_rate"] = append(rep.Values["error_rate"], 0)
	}
	for m, v := range rep.Values {
		rep.CoVPct[m] = results.CoV(v)
	}
	m := results.Median(p50)
	r := &results.Result{Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 100, DurationS: 10,
		Throughput: 100, LatencyMS: metrics.Latency{P50: m, P95: m * 1.2, P99: m * 1.5}, Repeat: rep}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

func TestCompareExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fast, fast2, slow := filepath.Join(dir, "fast.json"), filepath.Join(dir, "fast2.json"), filepath.Join(dir, "slow.json")
	writeRepeated(t, fast, 20.1, 19.8, 20.4, 20.0, 20.6)
	writeRepeated(t, fast2, 20.3, 19.9, 20.2, 20.5, 19.7)
	writeRepeated(t, slow, 26.2, 25.9, 26.5, 26.0, 26.8)
	tests := []struct {
		name   string
		args   []string
		code   ExitCode
		stdout string
		stderr string
	}{
		{"30 % slower", []string{fast, slow}, ExitOK, "verdict: worse: 3 significant changes", ""},
		{"30 % slower fails", []string{fast, slow, "--fail-on-regression"}, ExitThreshold, "verdict: worse", ""},
		{"same", []string{fast, fast2, "--fail-on-regression"}, ExitOK, "verdict: same: no significant change", ""},
		{"faster is no regression", []string{slow, fast, "--fail-on-regression"}, ExitOK, "verdict: better", ""},
		{"threshold crossed", []string{fast, slow, "--threshold", "p99:+10%"}, ExitThreshold, "threshold crossed: p99:+10%", ""},
		{"threshold held", []string{fast, fast2, "--threshold", "p99:+10%,throughput:-5%"}, ExitOK, "verdict: same", ""},
		{"min effect past the change", []string{fast, slow, "--min-effect", "40", "--fail-on-regression"}, ExitOK, "exceeds 40 %", ""},
		{"markdown", []string{fast, slow, "--format", "md"}, ExitOK, "### ceiling compare: **worse", ""},
		{"html", []string{fast, slow, "--format", "html"}, ExitOK, `<p class="answer worse">verdict: worse: 3 significant changes`, ""},
		{"html fails", []string{fast, slow, "--format", "html", "--fail-on-regression"}, ExitThreshold, "</html>", ""},
		{"bad threshold", []string{fast, slow, "--threshold", "p99:-10%"}, ExitBadInput, "", `ceiling: --threshold "p99:-10%": p99 gets worse going up: want p99:+10%`},
		{"bad format", []string{fast, slow, "--format", "xml"}, ExitBadInput, "", `--format "xml": want text, md, json or html`},
		{"bad min effect", []string{fast, slow, "--min-effect", "-1"}, ExitBadInput, "", "--min-effect -1"},
		{"missing file", []string{fast, filepath.Join(dir, "nope.json")}, ExitBadInput, "", "read result"},
		{"one file", []string{fast}, ExitBadInput, "", "accepts 2 arg(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ceiling(t, context.Background(), append([]string{"compare"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("compare %v: exit %d, want %d; stdout (want %q):\n%s\nstderr (want %q):\n%s", tt.args, code, tt.code, tt.stdout, stdout, tt.stderr, stderr)
			}
		})
	}
}

// compare --format html writes one self-contained page: the verdict, one
// plot with both runs, a row per change, no script.
func TestCompareHTMLPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	writeRepeated(t, a, 20.1, 19.8, 20.4, 20.0, 20.6)
	writeRepeated(t, b, 26.2, 25.9, 26.5, 26.0, 26.8)
	code, stdout, stderr := ceiling(t, context.Background(), "compare", a, b, "--format", "html")
	if code != ExitOK || stderr != "" {
		t.Fatalf("compare --format html: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "<!doctype html>") || !strings.HasSuffix(stdout, "</html>\n") {
		t.Errorf("not a whole page: %.80q … %.20q", stdout, stdout[max(0, len(stdout)-20):])
	}
	checks := map[string]int{"<svg": 1, "<script": 0, "<tr class=": 5, `<tr class="worse">`: 3, "verdict: worse": 1, "a.json (baseline, 5 repeats)": 1}
	for s, want := range checks {
		if got := strings.Count(stdout, s); got != want {
			t.Errorf("the page has %q %d times, want %d", s, got, want)
		}
	}
}

// The case end to end: a 20 ms endpoint against a 26 ms one, each
// run with --repeat 5, compared with the rank test: p50 significant and
// worse, exit 1 with --fail-on-regression. Two runs of the same endpoint
// are "same". (The rates are low and the margins wide: a 30 % slowdown of
// 6 ms cannot hide behind a busy neighbour's jitter, and the same
// endpoint's medians differ by far less than the 5 % minimum effect.)
func TestCompareRepeatedRuns(t *testing.T) {
	long(t)
	dir := t.TempDir()
	ctx := context.Background()
	run := func(name string, d time.Duration) string {
		srv := apiServer(t, d)
		out := filepath.Join(dir, name)
		code, stdout, stderr := ceiling(t, ctx, "run", "--url", srv.URL+"/api", "--rate", "20", "--step", "500ms", "--warmup", "100ms", "--repeat", "5", "--out", out, "--quiet")
		if code != ExitOK {
			t.Fatalf("run against %v: exit %d\n%s\n%s", d, code, stdout, stderr)
		}
		return out
	}
	// 200 ms against 260 ms: a busy neighbour (this test runs beside the
	// others, under -race) delays responses by milliseconds, which must stay
	// under the 5 % minimum effect for the same endpoint to compare same.
	a, b, a2 := run("a.json", 200*time.Millisecond), run("b.json", 260*time.Millisecond), run("a2.json", 200*time.Millisecond)
	code, stdout, _ := ceiling(t, ctx, "compare", a, b, "--fail-on-regression")
	t.Logf("ceiling compare a.json b.json:\n%s", stdout)
	if code != ExitThreshold || !strings.Contains(stdout, "Mann-Whitney") || !strings.Contains(stdout, "verdict: worse") {
		t.Errorf("200 ms → 260 ms over 5 repeats: exit %d, want 1, the rank test named and verdict worse:\n%s", code, stdout)
	}
	code, stdout, _ = ceiling(t, ctx, "compare", a, a2, "--fail-on-regression", "--format", "json")
	var got struct{ Verdict string }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != ExitOK || got.Verdict != "same" {
		t.Errorf("the same endpoint twice: exit %d, verdict %q (%v); want 0, same\n%s", code, got.Verdict, err, stdout)
	}
}

// writeControlled writes a result whose one step ran 5 times, an api
// scenario at these p50s (ms) beside a control "landing" at those: p99 is
// 1.5 × p50, each scenario 100/s.
func writeControlled(t *testing.T, path string, api, landing []float64) {
	t.Helper()
	repeat := func(p50 []float64) *results.Repeat {
		rep := &results.Repeat{N: len(p50), Values: map[string][]float64{}, CoVPct: map[string]float64{}}
		for _, x := range p50 {
			rep.Values["p50"] = append(rep.Values["p50"], x)
			rep.Values["p95"] = append(rep.Values["p95"], x*1.2)
			rep.Values["p99"] = append(rep.Values["p99"], x*1.5)
			rep.Values["throughput"] = append(rep.Values["throughput"], 100)
			rep.Values["error_rate"] = append(rep.Values["error_rate"], 0)
		}
		for m, v := range rep.Values {
			rep.CoVPct[m] = results.CoV(v)
		}
		return rep
	}
	lat := func(p50 []float64) metrics.Latency {
		m := results.Median(p50)
		return metrics.Latency{P50: m, P95: m * 1.2, P99: m * 1.5}
	}
	n := int64(len(api))
	r := &results.Result{Schema: results.Schema, Control: "landing", Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 200, DurationS: 10,
		Throughput: 200, Completed: 2000 * n, LatencyMS: lat(api), Repeat: repeat(api), Scenarios: []results.Breakdown{
			{Name: "api", Completed: 1000 * n, OK: 1000 * n, LatencyMS: lat(api), Repeat: repeat(api)},
			{Name: "landing", Completed: 1000 * n, OK: 1000 * n, LatencyMS: lat(landing), Repeat: repeat(landing)},
		}}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

// When the control moved between the runs, compare cannot tell: with
// --fail-on-regression it exits 4, neither 0 (as if nothing changed) nor
// 1; the verdict names what would have been significant. A threshold is a
// line the user drew: crossing it still exits 1.
func TestCompareControlExitCodes(t *testing.T) {
	dir := t.TempDir()
	base, slower, busy := filepath.Join(dir, "base.json"), filepath.Join(dir, "slower.json"), filepath.Join(dir, "busy.json")
	page := []float64{2.0, 2.05, 1.95, 2.02, 1.98}
	writeControlled(t, base, []float64{20.1, 19.8, 20.4, 20.0, 20.6}, page)
	writeControlled(t, slower, []float64{23.2, 22.9, 23.5, 23.0, 23.6}, page)
	writeControlled(t, busy, []float64{23.2, 22.9, 23.5, 23.0, 23.6}, []float64{4.0, 4.1, 3.9, 4.05, 3.95})
	tests := []struct {
		name   string
		args   []string
		code   ExitCode
		stdout string
	}{
		{"steady control, 15 % slower", []string{base, slower, "--fail-on-regression"}, ExitThreshold, "verdict: worse: 6 significant changes"},
		{"control moved", []string{base, busy, "--fail-on-regression"}, ExitCouldNotTell,
			"verdict: unknown: host busy: the control moved; regression signal suppressed: 1 (200/s) p50 +15.4 % p=0.0079"},
		{"control moved, not gated", []string{base, busy}, ExitOK, "verdict: unknown: host busy"},
		{"control moved, threshold crossed", []string{base, busy, "--fail-on-regression", "--threshold", "p50:+10%"}, ExitThreshold, "threshold crossed: p50:+10%"},
		{"control moved, markdown", []string{base, busy, "--fail-on-regression", "--format", "md"}, ExitCouldNotTell, "**Could not tell:** the control moved"},
		{"control moved, html", []string{base, busy, "--format", "html"}, ExitOK, `<tr class="suppressed">`},
		// --min-abs is the judged scenarios' floor: the control is judged
		// on its own scale (half its figure), so a wide --min-abs does not
		// silence a control that doubled.
		{"a floor above the control's move", []string{base, busy, "--fail-on-regression", "--min-abs", "5ms"}, ExitCouldNotTell, "verdict: unknown: host busy: the control moved"},
		{"bad min-abs", []string{base, busy, "--min-abs", "-1ms"}, ExitBadInput, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ceiling(t, context.Background(), append([]string{"compare"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("compare %v: exit %d, want %d; stdout (want %q):\n%s\nstderr:\n%s", tt.args, code, tt.code, tt.stdout, stdout, stderr)
			}
		})
	}
}

// pagesServer answers /api after d, and everything else at once with a
// static 75 KB page (a landing page: the control).
func pagesServer(t *testing.T, d time.Duration) *httptest.Server {
	t.Helper()
	page := []byte("<html>" + strings.Repeat("x", 75*1024-13) + "</html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			time.Sleep(d)
			w.Write([]byte("ok"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A plan with a control (a static 75 KB landing page) beside an api, run
// with --repeat 3 against an api answering after 100 ms and then after
// 130 ms, in an open weighted mix (where the control's throughput in a
// repeat is its drawn share of the arrivals, not a measurement) and with
// --each (where the control runs its own stairs, alone, and is checked
// there). Before, both runs marked their steps host busy from the
// control's repeats (its drawn throughput, or a tail of a few dozen
// exchanges, more than 10 % from the median) and compare answered
// unknown, exit 0: the regression was hidden. Now compare calls it worse
// (exit 1); or, when this machine was busy while one run ran and the
// static page's latency really moved between the runs, it says it could
// not tell (exit 4) and lists the regression it suppressed. Never exit 0.
// (The margins are wide, as in TestCompareRepeatedRuns: this runs beside
// other packages' tests.)
func TestCompareControlledRuns(t *testing.T) {
	long(t)
	plans := []struct {
		name, load string
	}{
		{"open mix", "{rates: [160], step: 250ms, warmup: 100ms}"},
		{"each alone", "{rates: [100], step: 250ms, warmup: 100ms, each: true}"},
	}
	movedLatency := regexp.MustCompile(`^note: host busy: the control moved: .*"?landing"?.* p(50|95|99) [\d.]+ m?s → [\d.]+ m?s `)
	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			run := func(name string, d time.Duration) string {
				srv := pagesServer(t, d)
				plan := filepath.Join(dir, "plan.yaml")
				yaml := "target: " + srv.URL + "\nload: " + p.load + "\ncontrol: landing\n" +
					"scenarios:\n  - {name: api, request: {url: /api}}\n  - {name: landing, request: {url: /}}\n"
				if err := os.WriteFile(plan, []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, name)
				code, stdout, stderr := ceiling(t, ctx, "run", plan, "--repeat", "3", "--out", out, "--quiet")
				if code != ExitOK || strings.Contains(stdout+stderr, "host busy") {
					t.Errorf("run against %v: exit %d, want 0 and no host busy\n%s\n%s", d, code, stdout, stderr)
				}
				return out
			}
			a, b := run("a.json", 100*time.Millisecond), run("b.json", 130*time.Millisecond)
			code, stdout, stderr := ceiling(t, ctx, "compare", a, b, "--fail-on-regression")
			t.Logf("ceiling compare a.json b.json --fail-on-regression: exit %d\n%s", code, stdout)
			switch code {
			case ExitThreshold:
				if !strings.Contains(stdout, "verdict: worse") || !strings.Contains(stdout, `note: the control "landing" held`) {
					t.Errorf("exit 1 without verdict worse and the control held")
				}
			case ExitCouldNotTell:
				// The host was busy in one run: the static page's latency moved
				// past its spread and its 1 ms floor. The regression is named.
				if !regexp.MustCompile(`verdict: unknown: host busy: the control moved; regression signal suppressed: .*p50 \+(29|3\d)\.\d %`).MatchString(stdout) {
					t.Errorf("could not tell, without the api's p50 +30 %% suppressed in the verdict")
				}
				for _, line := range strings.Split(stdout, "\n") {
					if strings.HasPrefix(line, "note: host busy") && !movedLatency.MatchString(line) && p.name == "open mix" {
						t.Errorf("host busy from something else than the control's latency: %s", line)
					}
				}
			default:
				t.Errorf("100 ms → 130 ms: exit %d, want 1 (worse) or 4 (could not tell); stderr:\n%s", code, stderr)
			}
			if strings.Contains(stdout, "is not among the compared scenarios") {
				t.Errorf("the control was not checked")
			}
			if !regexp.MustCompile(`(?m)^\S.*landing.*\s+p50\s+[\d.]+ ms\s+[\d.]+ ms\s+[+-][\d.]+ %\s+CoV [\d.]+/[\d.]+ %\s+control( moved)?$`).MatchString(stdout) {
				t.Errorf("the control's p50 row is not marked control")
			}
		})
	}
}

// A before/after of a gateway whose posts to an outside service were
// slow (one worker, 20 ms a post: about half the messages of a 100/s
// step delivered by its end) and then fast (four workers, 1 ms), the target
// (this process) watched: compare shows the share delivered, the
// delivery latency and the target's CPU and memory next to the latency
// (it compared throughput, latency and errors only).
func TestCompareDeliveryAndTarget(t *testing.T) {
	long(t)
	dir := t.TempDir()
	var files []string
	for i, w := range []struct {
		workers int
		work    time.Duration
	}{{1, 20 * time.Millisecond}, {4, time.Millisecond}} {
		port := freeLocalPort(t)
		srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), w.workers, w.work, 0, 0)
		plan := writePlan(t, fmt.Sprintf(`
target: %s
load: {rates: [100], step: 1500ms, warmup: 0s}
vars: {msgid: "{{uuid}}"}
monitor: {pid: %d}
sinks: [{name: hook, listen: "127.0.0.1:%d", id: {json: text}, drain: 3s}]
scenarios:
  - request: {method: POST, url: /msg, json: {id: "{{.msgid}}"}}
    expect: {status: [202]}
    delivery: {sink: hook, id: "{{.msgid}}"}
`, srv.URL, os.Getpid(), port))
		out := filepath.Join(dir, []string{"before.json", "after.json"}[i])
		// The one worker's 50/s falls behind the 100/s: OVERLOADED, exit 1.
		if code, _, stderr := ceiling(t, context.Background(), "run", plan, "--out", out, "--quiet"); code != []ExitCode{ExitThreshold, ExitOK}[i] {
			t.Fatalf("run %d: exit %d; stderr:\n%s", i, code, stderr)
		}
		files = append(files, out)
	}
	code, stdout, stderr := ceiling(t, context.Background(), "compare", files[0], files[1])
	if code != ExitOK {
		t.Fatalf("compare: exit %d; stderr:\n%s", code, stderr)
	}
	row := regexp.MustCompile(`(?m)^1 \(100/s\)\s+\(all\)\s+(delivered|delivery_p50|delivery_p99|target_cpu|target_rss)\s+([0-9.]+) (%|ms|s|MB)\s+([0-9.]+) (%|ms|s|MB)`)
	got := map[string][2]float64{}
	for _, m := range row.FindAllStringSubmatch(stdout, -1) {
		a, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.ParseFloat(m[4], 64)
		got[m[1]] = [2]float64{a, b}
	}
	if len(got) != 5 {
		t.Fatalf("rows %v; want delivered, delivery_p50, delivery_p99, target_cpu and target_rss:\n%s", got, stdout)
	}
	if d := got["delivered"]; d[0] > 80 || d[1] < 90 {
		t.Errorf("delivered by the step's end %.2f %% → %.2f %%; want about half → nearly all:\n%s", d[0], d[1], stdout)
	}
	if rss := got["target_rss"]; rss[0] <= 0 || rss[1] <= 0 {
		t.Errorf("target RSS %v MB; want this process's, measured on both sides", rss)
	}
}
