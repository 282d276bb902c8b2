package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
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

	"github.com/ceiling-dev/ceiling/internal/compare"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// These tests compare real runs, run in this process against servers on
// loopback, as `ceiling compare` compares the files `ceiling run` wrote.

// TestMain gives the scheduler a processor more than the tests that run
// at once: their runs go side by side in this process (testkit.LoopProcs).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}

// runPlan runs a plan's text with its result written to out, and returns
// the run's result and what it printed (its table, and its notes).
func runPlan(t *testing.T, text, out string) (*results.Result, string) {
	t.Helper()
	p, err := plan.Parse(filepath.Join(filepath.Dir(out), "plan.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var printed strings.Builder
	s, err := run.Open(ctx, p, run.Options{Out: out, OnNote: func(n string) { printed.WriteString(n + "\n") }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("run %s: %v", filepath.Base(out), err)
	}
	if err := report.Text(&printed, res); err != nil {
		t.Fatal(err)
	}
	return res, printed.String()
}

// compareFiles compares the results written at a and b, with compare's
// default options, as `ceiling compare a b` does.
func compareFiles(t *testing.T, a, b string) *compare.Report {
	t.Helper()
	ra, err := results.Read(a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := results.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	o, err := compare.ParseOptions("", compare.DefaultMinEffect, compare.DefaultMinAbs)
	if err != nil {
		t.Fatal(err)
	}
	o.A, o.B = a, b
	return compare.Compare(ra, rb, o)
}

// text and verdictJSON are a comparison as --format text prints it, and
// the verdict of --format json.
func text(t *testing.T, r *compare.Report) string {
	t.Helper()
	var b strings.Builder
	if err := compare.Text(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func verdictJSON(t *testing.T, r *compare.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := compare.JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var got struct{ Verdict string }
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("--format json: %v\n%s", err, b.String())
	}
	return got.Verdict
}

// exitCode is the exit of `ceiling compare --fail-on-regression`: 1 when
// it failed, 4 when it could not tell, else 0.
func exitCode(r *compare.Report) int {
	switch {
	case r.Failed(true):
		return 1
	case r.CouldNotTell():
		return 4
	}
	return 0
}

// pagesServer answers /api after d, and everything else at once with a
// static page of size bytes (a landing page: the control).
func pagesServer(t *testing.T, d time.Duration, size int) *httptest.Server {
	t.Helper()
	page := []byte("<html>" + strings.Repeat("x", size-13) + "</html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			time.Sleep(d) // the endpoint's own time
			w.Write([]byte("ok"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A plan with a control, run once against a 20 ms endpoint and once
// against a 26 ms one: single runs have no noise estimate, so the
// comparison says so and gives the deltas, is never a regression, and its
// verdict is unknown. Timing is not asserted.
func TestCompareRealRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var files []string
	for i, d := range []time.Duration{20 * time.Millisecond, 26 * time.Millisecond} {
		srv := pagesServer(t, d, 100)
		out := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		res, _ := runPlan(t, "target: "+srv.URL+"\nload: {rates: [40], step: 1s, warmup: 200ms}\ncontrol: static\n"+
			"scenarios:\n  - {name: api, weight: 3, request: {url: /api}}\n  - {name: static, request: {url: /static}}\n", out)
		if !res.Passed || res.Control != "static" {
			t.Fatalf("run against %v: passed %v, control %q; want passed, control static", d, res.Passed, res.Control)
		}
		files = append(files, out)
	}
	r := compareFiles(t, files[0], files[1])
	got := text(t, r)
	t.Logf("compare a.json b.json:\n%s", got)
	if code := exitCode(r); code != 0 {
		t.Errorf("--fail-on-regression exits %d, want 0: single runs are never a significant regression", code)
	}
	for _, want := range []string{"test: no noise estimate (use --repeat): deltas only", "Δ", "(single run)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the comparison lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^1 \(40/s\)\s+api\s+p50\s+[\d.]+ ms\s+[\d.]+ ms\s+[+-][\d.]+ %`).MatchString(got) {
		t.Errorf("the comparison lacks api's p50 delta")
	}
	if v := verdictJSON(t, r); v != "unknown" {
		t.Errorf("--format json's verdict = %q, want unknown", v)
	}
}

// A 200 ms endpoint against a 260 ms one, each run with 5 repeats,
// compared with the rank test: significant and worse (exit 1 with
// --fail-on-regression); two runs of the same endpoint are "same". (The
// rates are low and the margins wide: a 30 % slowdown of 60 ms cannot
// hide behind a busy neighbour's jitter, and the same endpoint's medians
// differ by far less than the 5 % minimum effect, beside other packages'
// tests, under -race.)
func TestCompareRepeatedRuns(t *testing.T) {
	long(t)
	dir := t.TempDir()
	runOf := func(name string, d time.Duration) string {
		srv := pagesServer(t, d, 100)
		out := filepath.Join(dir, name)
		if res, printed := runPlan(t, "target: "+srv.URL+"\nload: {rates: [20], step: 500ms, warmup: 100ms}\nrepeat: 5\nscenarios: [{request: {url: /api}}]\n", out); !res.Passed {
			t.Fatalf("run against %v did not pass:\n%s", d, printed)
		}
		return out
	}
	a, b, a2 := runOf("a.json", 200*time.Millisecond), runOf("b.json", 260*time.Millisecond), runOf("a2.json", 200*time.Millisecond)
	r := compareFiles(t, a, b)
	got := text(t, r)
	t.Logf("compare a.json b.json:\n%s", got)
	switch code := exitCode(r); {
	case !strings.Contains(got, "Mann-Whitney"):
		t.Errorf("200 ms → 260 ms over 5 repeats: the rank test is not named")
	case machineBusy(r):
		// These machines are shared: when a neighbour took more CPU
		// during one run than the other, compare rightly cannot tell
		// (exit 4); the regression it would have called is named.
		if code != 4 || !regexp.MustCompile(`regression signal suppressed: .*p50 \+(2\d|3\d)\.\d %`).MatchString(got) {
			t.Errorf("200 ms → 260 ms, the host busier in one run: exit %d, want 4 naming the p50 +30 %% it suppressed", code)
		}
	case code != 1 || !strings.Contains(got, "verdict: worse"):
		t.Errorf("200 ms → 260 ms over 5 repeats: exit %d, want 1 and verdict worse", code)
	}
	same := compareFiles(t, a, a2)
	switch code, v := exitCode(same), verdictJSON(t, same); {
	case machineBusy(same):
		if code != 4 || !strings.Contains(text(t, same), "no change would have been significant either") {
			t.Errorf("the same endpoint twice, the host busier in one run: exit %d, want 4 with no change that would have counted\n%s", code, text(t, same))
		}
	case code != 0 || v != "same":
		t.Errorf("the same endpoint twice: exit %d, verdict %q; want 0, same\n%s", code, v, text(t, same))
	}
}

// machineBusy reports whether compare could not tell because the machine
// was not as busy during both runs (other processes' CPU, a hypervisor's
// steal), not because of the runs' own figures.
func machineBusy(r *compare.Report) bool {
	return r.HostBusy && (strings.HasPrefix(r.Why, "the host was not as busy") || strings.HasPrefix(r.Why, "the hypervisor"))
}

// A plan with a control (a static 75 KB landing page) beside an api, run
// with 3 repeats against an api answering after 100 ms and then after
// 130 ms, in an open weighted mix (where the control's throughput in a
// repeat is its drawn share of the arrivals, not a measurement) and with
// each scenario alone (where the control runs its own stairs, alone, and
// is checked there). The control's repeats once marked the host busy (its
// drawn throughput, or a tail of a few dozen exchanges, more than 10 %
// from the median) and compare answered unknown, exit 0: the regression
// was hidden. Now compare calls it worse (exit 1); or, when this machine
// was busy while one run ran (the static page's latency really moved
// between the runs, or the host's other processes took more CPU in one
// run than in the other), it says it could not tell (exit 4) and names
// the regression it suppressed. Never exit 0; and in the mix, never for
// the control's throughput.
func TestCompareControlledRuns(t *testing.T) {
	long(t)
	plans := []struct {
		name, load string
	}{
		{"open mix", "{rates: [160], step: 250ms, warmup: 100ms}"},
		{"each alone", "{rates: [100], step: 250ms, warmup: 100ms, each: true}"},
	}
	// Why the host was busy, when it was: the control's latency, or the
	// machine (these machines are shared: a neighbour's load can differ
	// between the two runs).
	busyWhy := regexp.MustCompile(`^note: host busy: (the control moved: .*"?landing"?.* p(50|95|99) [\d.]+ m?s → [\d.]+ m?s |other processes used |the hypervisor stole )`)
	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			runOf := func(name string, d time.Duration) string {
				srv := pagesServer(t, d, 75*1024)
				out := filepath.Join(dir, name)
				res, printed := runPlan(t, "target: "+srv.URL+"\nload: "+p.load+"\ncontrol: landing\nrepeat: 3\n"+
					"scenarios:\n  - {name: api, request: {url: /api}}\n  - {name: landing, request: {url: /}}\n", out)
				if !res.Passed {
					t.Errorf("run against %v did not pass:\n%s", d, printed)
				}
				return out
			}
			r := compareFiles(t, runOf("a.json", 100*time.Millisecond), runOf("b.json", 130*time.Millisecond))
			got := text(t, r)
			code := exitCode(r)
			t.Logf("compare a.json b.json --fail-on-regression: exit %d\n%s", code, got)
			switch code {
			case 1:
				if !strings.Contains(got, "verdict: worse") || !strings.Contains(got, `note: the control "landing" held`) {
					t.Errorf("exit 1 without verdict worse and the control held")
				}
			case 4:
				// The host was busy in one run: the static page's latency moved
				// past its spread and its 1 ms floor, or other processes took
				// more CPU. The regression is named.
				if !regexp.MustCompile(`verdict: unknown: host busy: .*; regression signal suppressed: .*p50 \+(29|3\d)\.\d %`).MatchString(got) {
					t.Errorf("could not tell, without the api's p50 +30 %% suppressed in the verdict")
				}
				for _, line := range strings.Split(got, "\n") {
					if strings.HasPrefix(line, "note: host busy") && !busyWhy.MatchString(line) && p.name == "open mix" {
						t.Errorf("host busy from something else than the control's latency or the machine: %s", line)
					}
				}
			default:
				t.Errorf("100 ms → 130 ms: exit %d, want 1 (worse) or 4 (could not tell)", code)
			}
			if strings.Contains(got, "is not among the compared scenarios") {
				t.Errorf("the control was not checked")
			}
			if !regexp.MustCompile(`(?m)^\S.*landing.*\s+p50\s+[\d.]+ ms\s+[\d.]+ ms\s+[+-][\d.]+ %\s+CoV [\d.]+/[\d.]+ %\s+control( moved)?$`).MatchString(got) {
				t.Errorf("the control's p50 row is not marked control")
			}
		})
	}
}

// forwarder is a target that accepts POST /msg {"id"} with 202 and
// forwards each id to the sink's /hooks/slack from a pool of workers, each
// taking work per message.
func forwarder(t *testing.T, sinkURL string, workers int, work time.Duration) *httptest.Server {
	t.Helper()
	queue := make(chan string, 100000)
	quit := make(chan struct{})
	client := &http.Client{Timeout: 5 * time.Second}
	for range workers {
		go func() {
			for {
				select {
				case <-quit:
					return
				case id := <-queue:
					time.Sleep(work) // the message's own time
					body, _ := json.Marshal(map[string]string{"channel": "c", "text": id})
					if resp, err := client.Post(sinkURL+"/hooks/slack", "application/json", bytes.NewReader(body)); err == nil {
						resp.Body.Close()
					}
				}
			}
		}()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ID string }
		json.NewDecoder(r.Body).Decode(&in)
		queue <- in.ID
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(func() { srv.Close(); close(quit) })
	return srv
}

// A before/after of a gateway whose posts to an outside service were
// slow (one worker, 20 ms a post: about half the messages of a 100/s
// step delivered by its end) and then fast (four workers, 1 ms), the
// target (this process) watched: the comparison shows the share
// delivered, the delivery latency and the target's CPU and memory next to
// the latency (it compared throughput, latency and errors only).
func TestCompareDeliveryAndTarget(t *testing.T) {
	long(t)
	dir := t.TempDir()
	var files []string
	for i, w := range []struct {
		workers int
		work    time.Duration
	}{{1, 20 * time.Millisecond}, {4, time.Millisecond}} {
		port := testkit.FreePort(t)
		srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), w.workers, w.work)
		out := filepath.Join(dir, []string{"before.json", "after.json"}[i])
		res, printed := runPlan(t, fmt.Sprintf(`
target: %s
load: {rates: [100], step: 1500ms, warmup: 0s}
vars: {msgid: "{{uuid}}"}
monitor: {pid: %d}
sinks: [{name: hook, listen: "127.0.0.1:%d", id: {json: text}, drain: 3s}]
scenarios:
  - request: {method: POST, url: /msg, json: {id: "{{.msgid}}"}}
    expect: {status: [202]}
    delivery: {sink: hook, id: "{{.msgid}}"}
`, srv.URL, os.Getpid(), port), out)
		// The one worker's 50/s falls behind the 100/s: OVERLOADED, it
		// does not pass (exit 1); the four keep up (exit 0), unless this
		// machine was too busy for ceiling to hold the rate (GENERATOR
		// LIMITED: the figures compared are measured all the same).
		if res.Passed != (i == 1) && !(i == 1 && res.Steps[0].GeneratorLimited) {
			t.Fatalf("run %d: passed %v, want %v\n%s", i, res.Passed, i == 1, printed)
		}
		files = append(files, out)
	}
	r := compareFiles(t, files[0], files[1])
	got := text(t, r)
	if r.Failed(false) {
		t.Errorf("compare (no threshold, no --fail-on-regression) failed: exit 1, want 0:\n%s", got)
	}
	row := regexp.MustCompile(`(?m)^1 \(100/s\)\s+\(all\)\s+(delivered|delivery_p50|delivery_p99|target_cpu|target_rss)\s+([0-9.]+) (%|ms|s|MB)\s+([0-9.]+) (%|ms|s|MB)`)
	rows := map[string][2]float64{}
	for _, m := range row.FindAllStringSubmatch(got, -1) {
		a, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.ParseFloat(m[4], 64)
		rows[m[1]] = [2]float64{a, b}
	}
	if len(rows) != 5 {
		t.Fatalf("rows %v; want delivered, delivery_p50, delivery_p99, target_cpu and target_rss:\n%s", rows, got)
	}
	if d := rows["delivered"]; d[0] > 80 || d[1] < 90 {
		t.Errorf("delivered by the step's end %.2f %% → %.2f %%; want about half → nearly all:\n%s", d[0], d[1], got)
	}
	if rss := rows["target_rss"]; rss[0] <= 0 || rss[1] <= 0 {
		t.Errorf("target RSS %v MB; want this process's, measured on both sides", rss)
	}
}
