package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The tests of what only cli does: each command's flags reach what it
// runs, what it prints, its exit codes. What a run does (its figures,
// verdicts, deliveries, events, searches) is tested in package run, on a
// fake clock where it can be.

// ceiling calls Main and returns its exit code, stdout and stderr.
func ceiling(t *testing.T, ctx context.Context, args ...string) (ExitCode, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, args, &out, &errb, nil)
	return code, out.String(), errb.String()
}

// delayServer is a target on loopback that answers "ok" after d.
func delayServer(t *testing.T, d time.Duration) *testkit.Target {
	t.Helper()
	return testkit.NewTarget(t, testkit.TargetConfig{Delay: d, Body: "ok"})
}

func readResult(t *testing.T, path string) *results.Result {
	t.Helper()
	r, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// capacityServer answers at most rate requests a second (a token bucket with
// a 20 ms burst) and 503 past it: a target whose capacity is known.
func capacityServer(t *testing.T, rate float64) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	tokens, last := rate*0.02, time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := time.Now()
		tokens = min(rate*0.02, tokens+now.Sub(last).Seconds()*rate)
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// run's smoke test: the quick flags make the plan (two steps at the
// rates asked), the run writes result.json, passes its SLO, and the table
// with its threshold goes to stdout; the command that reproduces it is
// quoted for a shell.
func TestRunFixed20ms(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 20*time.Millisecond)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "50,100",
		"--step", "300ms", "--warmup", "100ms", "--out", out, "--slo", "p99<1s", "--quiet")
	if code != ExitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", code, stderr)
	}
	r := readResult(t, out)
	if len(r.Steps) != 2 || r.Steps[0].TargetRate != 50 || r.Steps[1].TargetRate != 100 || !r.Passed || r.EndedAt == nil {
		t.Fatalf("result: %d steps, passed %v, ended %v; want 50/s and 100/s, passed, ended", len(r.Steps), r.Passed, r.EndedAt)
	}
	for _, s := range r.Steps {
		if s.Completed == 0 || s.Failed != 0 || s.LatencyMS.P50 < 20 {
			t.Errorf("step %d: completed %d, failed %d, p50 %v ms; want the target's answers, none failed, ≥ 20 ms", s.Index, s.Completed, s.Failed, s.LatencyMS.P50)
		}
	}
	if !strings.Contains(r.Command, "--rate 50,100") || !strings.Contains(r.Command, "'p99<1s'") {
		t.Errorf("command = %q, want the flags, quoted for a shell", r.Command)
	}
	if !strings.Contains(stdout, "p99") || !strings.Contains(stdout, "ok   p99<1s") {
		t.Errorf("stdout lacks the table and threshold:\n%s", stdout)
	}
}

// The exit code says how a command ended, one meaning each (docs/cli.md):
// a finished run's outcome (an older result without one, by whether it
// passed), or the kind of the error that stopped it.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	failed := results.Outcome{Status: results.StatusFailed, Reasons: []results.Reason{{Kind: results.ReasonThreshold}}}
	for _, tt := range []struct {
		name string
		res  *results.Result
		want ExitCode
	}{
		{"passed", &results.Result{Passed: true, Outcome: results.Outcome{Status: results.StatusPassed}}, ExitOK},
		{"failed", &results.Result{Outcome: failed}, ExitThreshold},
		{"could not run", &results.Result{Outcome: results.Outcome{Status: results.StatusCouldNotRun}}, ExitCannotRun},
		{"interrupted", &results.Result{Interrupted: true, Outcome: results.Outcome{Status: results.StatusInterrupted}}, ExitInterrupted},
		{"an older result, passed", &results.Result{Passed: true}, ExitOK},
		{"an older result, not passed", &results.Result{}, ExitThreshold},
	} {
		got := ExitOK
		if err := outcome(tt.res); err != nil {
			got, _ = codeOf(err)
		}
		if got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		err  error
		want ExitCode
	}{
		{&failure.InputError{Err: errors.New("plan.yaml:3:1: load: no rates")}, ExitBadInput},
		{fmt.Errorf("step 2: %w", failure.ErrInterrupted), ExitInterrupted},
		{fmt.Errorf("%w: GET http://127.0.0.1:9/: refused", failure.ErrUnreachable), ExitCannotRun},
		{fmt.Errorf("preflight: %w", failure.ErrRefused), ExitCannotRun},
		{failure.ErrTargetDied, ExitCannotRun},
		{errors.New("port in use"), ExitCannotRun},
	} {
		if got, _ := codeOf(runError(tt.err)); got != tt.want {
			t.Errorf("runError(%v): exit %d, want %d", tt.err, got, tt.want)
		}
	}
}

// A target that refuses every request (401) measures nothing: run says so
// before its first step and exits 1, SLO or not, since its step is
// INVALID; find stops at the preflight (exit 3) instead of searching level
// after level of refusals, and writes no step.
func TestRefusedRequestsFail(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Status: http.StatusUnauthorized})
	dir := t.TempDir()
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL+"/api", "--rate", "20", "--step", "300ms", "--warmup", "0s", "--out", filepath.Join(dir, "run.json"))
	warning := "preflight: the target refused the request: GET " + srv.URL + "/api answered 401 Unauthorized: check the credentials"
	if code != ExitThreshold || !strings.HasPrefix(stderr, "ceiling: "+warning) {
		t.Errorf("run = exit %d, stderr:\n%s\nwant exit 1, and first of all %q", code, stderr, warning)
	}
	if r := readResult(t, filepath.Join(dir, "run.json")); r.Passed || len(r.Steps) != 1 || r.Steps[0].Verdict != results.Invalid {
		t.Errorf("run: passed %v, %d steps; want one INVALID step that fails the run\n%s", r.Passed, len(r.Steps), stdout)
	}
	before := srv.Hits()
	start := time.Now()
	code, stdout, stderr = ceiling(t, context.Background(), "find", "--url", srv.URL+"/api", "--start", "20", "--step", "300ms", "--warmup", "0s", "--out", filepath.Join(dir, "find.json"))
	if code != ExitCannotRun || !strings.Contains(stderr, warning) || !strings.Contains(stderr, "stopped before the first step") || srv.Hits()-before != 1 {
		t.Errorf("find = exit %d after %d requests in %v, stderr:\n%s\nwant exit 3 after the preflight's one, saying %q", code, srv.Hits()-before, time.Since(start), stderr, warning)
	}
	if stdout != "" {
		t.Errorf("find printed a table of nothing:\n%s", stdout)
	}
}

// find's smoke test: its flags make the search, and a start that fails
// exits 1, the answer saying why, with no edge in result.json. (A start
// of 40/s against a capacity of 10/s: the errors are the target's; a
// machine too busy to send even 40/s is the one other answer accepted,
// exit 1 too, and only when result.json says so.)
func TestFindStartFails(t *testing.T) {
	t.Parallel()
	srv := capacityServer(t, 10)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, _ := ceiling(t, context.Background(), "find", "--url", srv.URL, "--start", "40",
		"--step", "400ms", "--warmup", "0s", "--slo", "errors<1%", "--out", out, "--quiet")
	r := readResult(t, out)
	if code != ExitThreshold || !strings.Contains(stdout, "even the start, 40/s, fails: errors") && !starved(t, r) {
		t.Errorf("exit %d, stdout:\n%s\nwant 1 and the reason", code, stdout)
	}
	if r.Edge != nil || r.Passed {
		t.Errorf("edge %+v, passed %v; want none", r.Edge, r.Passed)
	}
}

func TestExitUnreachable(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := ceiling(t, context.Background(), "run", "--url", "http://"+addr+"/", "--rate", "10", "--step", "1s", "--out", out)
	if code != ExitCannotRun {
		t.Errorf("exit = %d, want 3", code)
	}
	if !strings.Contains(stderr, "target unreachable") || !strings.Contains(stderr, "refused") {
		t.Errorf("stderr = %q, want it to say the target is unreachable (refused)", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a result file was written for a run that never started")
	}
}

func TestExitBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("target: http://127.0.0.1:1\nload:\n  rates: [10, -5]\n  stepp: 10s\nscenarios:\n  - request: {url: /}\n"), 0o644)
	badSLO := filepath.Join(dir, "slo.yaml")
	os.WriteFile(badSLO, []byte("target: http://127.0.0.1:1\nload: {rates: [10]}\nslo: \"p99<200\"\nscenarios:\n  - request: {url: /}\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no plan, no url", []string{"run"}, []string{"nothing to run"}},
		{"bad rate", []string{"run", "--url", "http://127.0.0.1:1/", "--rate", "10,abc"}, []string{"--rate", "abc"}},
		{"bad duration", []string{"run", "--url", "http://127.0.0.1:1/", "--rate", "10", "--step", "ten"}, []string{"--step", "ten"}},
		{"rate and vus", []string{"run", "--url", "http://127.0.0.1:1/", "--rate", "10", "--vus", "5"}, []string{"exclude"}},
		{"no load", []string{"run", "--url", "http://127.0.0.1:1/"}, []string{"no load"}},
		{"bad slo flag", []string{"run", "--url", "http://127.0.0.1:1/", "--rate", "10", "--slo", "p99<fast"}, []string{"--slo", "duration"}},
		{"unknown flag", []string{"run", "--rats", "10"}, []string{"unknown flag"}},
		{"unknown command", []string{"rnu"}, []string{"unknown command"}},
		{"missing plan file", []string{"run", filepath.Join(dir, "nope.yaml")}, []string{"nope.yaml"}},
		{"bad plan", []string{"validate", bad}, []string{"bad.yaml:3:", "load.rates[1]", "bad.yaml:4:", "stepp"}},
		{"bad plan slo", []string{"validate", badSLO}, []string{"slo.yaml:3:", "duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := ceiling(t, context.Background(), tt.args...)
			if code != ExitBadInput {
				t.Errorf("exit = %d, want 2; stderr: %s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, w)
				}
			}
		})
	}
}

func TestValidateOK(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "ok.yaml")
	os.WriteFile(p, []byte("target: http://127.0.0.1:1\nload: {rates: [10, 20], step: 30s, warmup: 5s}\nscenarios:\n  - request: {url: /}\n"), 0o644)
	code, stdout, stderr := ceiling(t, context.Background(), "validate", p)
	if code != ExitOK || !strings.Contains(stdout, "ok: 2 steps") || !strings.Contains(stdout, "1m10s") {
		t.Errorf("validate = %d %q %q, want 0 and a summary of 2 steps, 1m10s", code, stdout, stderr)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := ceiling(t, context.Background(), "version")
	if code != ExitOK || !strings.HasPrefix(stdout, "ceiling ") {
		t.Errorf("version = %d %q", code, stdout)
	}
}

// The demo's first act (demo --quick): a search of the built-in target
// over websockets, whose edge is the delivery lanes', said with what
// broke first, in the table and the report; the plan it wrote validates,
// and its rerun line works after go run. A machine too busy to hold the
// demo's rates is the one other answer accepted: exit 1, saying so, and
// result.json's every reason the generator's.
func TestDemoQuick(t *testing.T) {
	long(t)
	// The demo target is this binary, run as ceiling demo-target (TestMain).
	dir := t.TempDir()
	code, stdout, stderr := ceiling(t, context.Background(), "demo", "--quick", "--out", dir)
	r, err := results.Read(filepath.Join(dir, "result.json"))
	if code == ExitThreshold && err == nil && strings.Contains(stdout, "generator limit reached") && starved(t, r) {
		return
	}
	if code != ExitOK || err != nil {
		t.Fatalf("demo exit = %d, its result: %v; stdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	// The delivery lanes cap at 8 ÷ 50 ms = 160/s: a step above that grows
	// the backlog and is OVERLOADED, so the edge is at or below it and,
	// with the quick search's 30 % precision, above 100/s.
	if r.Edge == nil || r.Edge.Rate < 100 || r.Edge.Rate > 160 {
		t.Fatalf("edge = %+v, want between 100/s and the lanes' 160/s\n%s", r.Edge, stdout)
	}
	failed := checkDemoSteps(t, r)
	if failed == nil || failed.Delivery == nil || failed.Delivery.AtStepEnd == nil || *failed.Delivery.AtStepEnd >= failed.Delivery.Expected {
		t.Fatalf("no step failed on delivery: %+v", failed)
	}
	if q, ok := failed.Target.Metrics["demo_queue_depth"]; !ok || q.Max < 10 {
		t.Errorf("at %v/s the target's queue depth = %+v, want a backlog", failed.TargetRate, q)
	}
	checkDemoOutputs(t, dir, stdout)
}

// checkDemoSteps checks that each step of the demo's search sent frames
// over sockets in the open model, its target watched, and that the acks
// were never the limit; it returns the first step that failed its SLO.
func checkDemoSteps(t *testing.T, r *results.Result) (failed *results.Step) {
	t.Helper()
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Model != "open" || s.WebSocket == nil || s.Target == nil || s.Target.Samples == 0 {
			t.Fatalf("step %d: model %s, websocket %v, target %+v: want open-model frames over sockets, watched", i+1, s.Model, s.WebSocket, s.Target)
		}
		// Under -race beside other packages' tests, a starved generator
		// makes its own frames late: that is the machine, not the acks,
		// and is said so; acks slow with frames on time are the failure.
		switch {
		case s.LatencyMS.P99 > 50 && s.MaxLagMS > 10:
			t.Logf("step %d: ack p99 %v ms with frames sent up to %v ms late: this machine was too busy for the demo's timing", i+1, s.LatencyMS.P99, s.MaxLagMS)
		case s.LatencyMS.P99 > 50:
			t.Errorf("step %d: ack p99 %v ms: the acks should never be the limit", i+1, s.LatencyMS.P99)
		}
		if failed == nil && s.SLOPassed != nil && !*s.SLOPassed {
			failed = s
		}
	}
	return failed
}

// checkDemoOutputs checks what the demo wrote in dir and printed: what
// broke first, the report with its plots and story, a plan that validates
// with the drain in its estimate, and a rerun line that works after go
// run.
func checkDemoOutputs(t *testing.T, dir, stdout string) {
	t.Helper()
	if !strings.Contains(stdout, "What broke first") || !strings.Contains(stdout, "edge: ") {
		t.Errorf("demo did not say what broke first:\n%s", stdout)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || strings.Count(string(page), "<svg") < 3 {
		t.Errorf("demo report.html: %v, plots %v", err, strings.Count(string(page), "<svg"))
	} else if !strings.Contains(string(page), "What broke first: the target posts each saved message") {
		t.Errorf("demo report.html lacks the demo's story of what broke first")
	}
	if code, out, errOut := ceiling(t, context.Background(), "validate", filepath.Join(dir, "plan.yaml")); code != ExitOK || !strings.Contains(out, "waiting for late deliveries") {
		t.Errorf("validate plan.yaml = %d, want 0 with the drain in its estimate\n%s%s", code, out, errOut)
	}
	// This test binary is go's temporary build, as go run's is: the rerun
	// line says to build ceiling first, since the plan names this binary.
	if !strings.Contains(stdout, "go build -o ceiling ./cmd/ceiling && ./ceiling demo --out "+dir) {
		t.Errorf("no rerun line that works after go run:\n%s", stdout)
	}
}

// ceiling report renders a result written by run, as text or Markdown.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, time.Millisecond)
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "20", "--step", "300ms", "--warmup", "0s", "--out", out, "--quiet"); code != ExitOK {
		t.Fatalf("run: %d %s", code, stderr)
	}
	code, md, _ := ceiling(t, context.Background(), "report", out, "--format", "md")
	if code != ExitOK || !strings.Contains(md, "| step | target |") || !strings.Contains(md, "Reproduce:") {
		t.Errorf("report md = %d:\n%s", code, md)
	}
	code, text, _ := ceiling(t, context.Background(), "report", out)
	if code != ExitOK || !strings.Contains(text, "achieved") {
		t.Errorf("report text = %d:\n%s", code, text)
	}
	if code, _, _ := ceiling(t, context.Background(), "report", filepath.Join(t.TempDir(), "none.json")); code != ExitBadInput {
		t.Errorf("missing file: exit %d, want 2", code)
	}
}

// failing is a writer whose every write fails, as a full disk does.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Output that cannot be written is an error (exit 3), found before the run
// when it can be: a report into a missing folder stops the run before its
// first step, and a table or report that cannot be written is not exit 0.
func TestUnwritableOutputs(t *testing.T) {
	srv := delayServer(t, 0)
	dir := t.TempDir()
	start := time.Now()
	code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "10", "--step", "5s",
		"--out", filepath.Join(dir, "r.json"), "--html", filepath.Join(dir, "missing", "r.html"), "--quiet")
	if code != ExitCannotRun || !strings.Contains(stderr, "missing") || time.Since(start) > 3*time.Second {
		t.Errorf("--html into a missing folder: exit %d after %v, stderr %q; want 3 at once, naming it", code, time.Since(start), stderr)
	}
	out := filepath.Join(dir, "r.json")
	if code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "10", "--step", "200ms", "--warmup", "0s", "--out", out, "--quiet"); code != ExitOK {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	for _, format := range []string{"text", "md", "html"} {
		var errb bytes.Buffer
		if code := Main(context.Background(), []string{"report", out, "--format", format}, failing{}, &errb, nil); code != ExitCannotRun {
			t.Errorf("report --format %s to a full disk: exit %d (%s), want 3", format, code, errb.String())
		}
	}
}
