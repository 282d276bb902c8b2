package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The CI gate (action.yml runs scripts/ceiling-gate.sh) is tested here,
// beside the action's own checks, with this test binary as the ceiling
// binary: the script is a client of the binary's exit codes, of compare's
// JSON and Markdown and of report's Markdown, as a process. Each test runs
// the script as a GitHub job would, a file as $GITHUB_STEP_SUMMARY and
// another as $GITHUB_OUTPUT, once for each outcome the script maps. The
// run is real where that is quick and certain (no baseline yet, a target
// down); elsewhere it is a stand-in that writes a result file of the
// test's and exits as the test says, so that compare's answer (same,
// worse, better, could not tell) is the test's, whatever this machine
// does meanwhile.

// gateJob is what a run of the gate script left.
type gateJob struct {
	code    int
	log     string            // stdout and stderr
	summary string            // what it appended to $GITHUB_STEP_SUMMARY
	outputs map[string]string // what it wrote to $GITHUB_OUTPUT (the last value of each)
	calls   []string          // its calls of ceiling: "token=GH_TOKEN arg|arg|…|"
}

// runGate runs the gate script in dir (a job's checkout, with its
// plan.yaml) with env (the action's inputs) and nothing else of this
// process' environment but PATH, HOME and TMPDIR: no GITHUB_* variable of
// a CI that runs this test leaks in. ceiling is this test binary, but for
// `ceiling run` when env sets CEILING_TEST_RESULT: then run copies that
// file to its --out and exits CEILING_TEST_EXIT (0 when unset).
func runGate(t *testing.T, dir string, env ...string) gateJob {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ci := t.TempDir()
	bin, calls := filepath.Join(ci, "ceiling"), filepath.Join(ci, "calls")
	stand := fmt.Sprintf(`#!/bin/sh
{ printf 'token=%%s ' "${GH_TOKEN:-}"; printf '%%s|' "$@"; echo; } >>%q
if [ "$1" = run ] && [ -n "${CEILING_TEST_RESULT:-}" ]; then
  while [ $# -gt 0 ]; do if [ "$1" = --out ]; then cp "$CEILING_TEST_RESULT" "$2"; fi; shift; done
  exit "${CEILING_TEST_EXIT:-0}"
fi
CEILING_TEST_MAIN=1 exec %q "$@"
`, calls, exe)
	if err := os.WriteFile(bin, []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	summary, outputs := filepath.Join(ci, "summary.md"), filepath.Join(ci, "output")
	// A summary that already holds an earlier step's Markdown: the gate
	// appends.
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "ceiling-gate.sh"))
	cmd.Dir = dir
	testkit.Group(t, cmd)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir(),
		"CEILING_BIN=" + bin, "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=" + outputs, "RUNNER_TEMP=" + ci,
	}
	for _, e := range env {
		if k, v, ok := strings.Cut(e, "="); ok && k == "PATH" {
			e = "PATH=" + v + string(os.PathListSeparator) + os.Getenv("PATH")
		}
		cmd.Env = append(cmd.Env, e)
	}
	out, err := cmd.CombinedOutput()
	job := gateJob{log: string(out), outputs: map[string]string{}}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		job.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run the gate: %v", err)
	}
	s, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(string(s), "earlier step\n")
	if !ok {
		t.Errorf("the gate did not append to $GITHUB_STEP_SUMMARY: it starts %.40q", s)
	}
	job.summary = rest
	if f, err := os.Open(outputs); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				job.outputs[k] = v
			}
		}
		f.Close()
	}
	if c, err := os.ReadFile(calls); err == nil {
		job.calls = strings.Split(strings.TrimSuffix(string(c), "\n"), "\n")
	}
	return job
}

// check fails t with the job's log and summary unless it exited code,
// its outputs are outs, and every string of want is in the summary, in
// that order.
func (j gateJob) check(t *testing.T, code int, outs map[string]string, want ...string) {
	t.Helper()
	if j.code != code {
		t.Errorf("exit %d, want %d", j.code, code)
	}
	for k, v := range outs {
		if j.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, j.outputs[k], v)
		}
	}
	rest := j.summary
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("the summary has no %q (after what came before it)", w)
			continue
		}
		rest = rest[i+len(w):]
	}
	if t.Failed() {
		t.Logf("log:\n%s\nsummary:\n%s\noutputs: %v\ncalls: %q", j.log, j.summary, j.outputs, j.calls)
	}
}

// gatePlan writes a plan against url into a fresh folder (a job's
// checkout) and returns the folder.
func gatePlan(t *testing.T, url string) string {
	t.Helper()
	dir := t.TempDir()
	plan := "name: gate\ntarget: " + url + "\nload: {rates: [60], step: 300ms, warmup: 100ms}\nscenarios: [{name: api, request: {url: /api}}]\n"
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeSingle writes a result of one step run once (no repeats), its p50
// p50 ms.
func writeSingle(t *testing.T, path string, p50 float64) {
	t.Helper()
	r := &results.Result{Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 100, DurationS: 10,
		Throughput: 100, LatencyMS: metrics.Latency{P50: p50, P95: p50 * 1.2, P99: p50 * 1.5}}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

// The job on main, with no baseline yet, and a job whose target is down:
// a real `ceiling run` each. The first passes, its result the next
// baseline, with the run's report on the summary; the second fails with
// the run's exit 3.
func TestCIGateRealRuns(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the gate is a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	up := testkit.NewTarget(t, testkit.TargetConfig{Body: "ok"})
	dir := gatePlan(t, up.URL)
	first := runGate(t, dir, "CEILING_REPEAT=1", "CEILING_PLAN=plan.yaml", "CEILING_RESULT=out/result.json")
	result := filepath.Join(dir, "out", "result.json")
	r, err := results.Read(result)
	if err != nil || len(r.Steps) != 1 || r.Steps[0].Sent == 0 {
		t.Fatalf("the run's result: %v, want its step, measured\n%s", err, first.log)
	}
	code, line := 0, "passed: nothing compared (no baseline)"
	if first.code == 1 && starved(t, r) {
		code, line = 1, "failed: the run failed its SLO or thresholds, or a step was INVALID (ceiling run exited 1)"
	}
	first.check(t, code, map[string]string{"verdict": "none", "exit-code": fmt.Sprint(code), "result": result, "comparison": ""},
		"**ceiling gate: "+line+"**", "No baseline to compare with", "## gate", "| step |")
	down := runGate(t, gatePlan(t, fmt.Sprintf("http://127.0.0.1:%d", testkit.FreePort(t))), "CEILING_REPEAT=1", "CEILING_PLAN=plan.yaml")
	down.check(t, 3, map[string]string{"verdict": "none", "exit-code": "3"}, "**ceiling gate: failed: ceiling run exited 3 (the run could not be carried out")
}

// Each outcome the script maps from the run's exit and compare's answer,
// the run a stand-in that writes a result of the test's: the exit, the
// outputs, the summary (the outcome's line, the comparison, the run's
// report, exactly), the annotations in the log, and how ceiling was
// called.
func TestCIGate(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the gate is a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	files := t.TempDir()
	at := func(name string) string { return filepath.Join(files, name) }
	writeRepeated(t, at("fast.json"), 20.1, 19.8, 20.4, 20.0, 20.6)
	writeRepeated(t, at("fast2.json"), 20.3, 19.9, 20.2, 20.5, 19.7)
	writeRepeated(t, at("slow.json"), 26.2, 25.9, 26.5, 26.0, 26.8)
	writeSingle(t, at("single.json"), 26)
	page := []float64{2.0, 2.05, 1.95, 2.02, 1.98}
	writeControlled(t, at("base.json"), []float64{20.1, 19.8, 20.4, 20.0, 20.6}, page)
	writeControlled(t, at("busy.json"), []float64{23.2, 22.9, 23.5, 23.0, 23.6}, []float64{4.0, 4.1, 3.9, 4.05, 3.95})
	if err := os.WriteFile(at("garbage.json"), []byte("{not a result"), 0o644); err != nil {
		t.Fatal(err)
	}
	const run = "run|plan.yaml|--repeat|5|--out|ceiling-result.json|"
	tests := []struct {
		name             string
		baseline, result string // files of the test's; "" none
		exit             int    // the run's
		env              []string
		code             int
		verdict          string
		line             string // the summary's first line, between ** **
		compared         string // in the comparison, "" when there is none
		log              string // in the log
		bare             bool   // the summary is the outcome's line alone, with a result written
		calls            []string
	}{
		{name: "same", baseline: "fast.json", result: "fast2.json", verdict: "same",
			line: "passed: no significant change", compared: "### ceiling compare: **same", calls: []string{run}},
		{name: "worse", baseline: "fast.json", result: "slow.json", code: 1, verdict: "worse",
			line: "failed: a significant change for the worse", compared: "### ceiling compare: **worse",
			log: "::error::ceiling gate: a significant change for the worse (ceiling compare exited 1)"},
		{name: "better", baseline: "slow.json", result: "fast.json", verdict: "better",
			line: "passed: better: significant changes, all for the better", compared: "### ceiling compare: **better"},
		{name: "worse, fail-on threshold", baseline: "fast.json", result: "slow.json", env: []string{"CEILING_FAIL_ON=threshold"}, verdict: "worse",
			line: "passed: worse, but this gate fails only on a crossed threshold (fail-on: threshold)", compared: "### ceiling compare: **worse"},
		{name: "compare's flags", baseline: "fast.json", result: "slow.json", env: []string{"CEILING_MIN_EFFECT=40", "CEILING_MIN_ABS=2ms", "CEILING_THRESHOLD=p99:+50%"},
			verdict: "same", line: "passed: no significant change", compared: "### ceiling compare: **same",
			calls: []string{run, "report|ceiling-result.json|--format|md|",
				"compare|BASELINE|ceiling-result.json|--fail-on-regression|--threshold|p99:+50%|--min-effect|40|--min-abs|2ms|--format|md|",
				"compare|BASELINE|ceiling-result.json|--fail-on-regression|--threshold|p99:+50%|--min-effect|40|--min-abs|2ms|--format|json|"}},
		{name: "single run", baseline: "fast.json", result: "single.json", verdict: "unknown",
			line: "passed: compare could not tell (below), and that does not fail this gate", compared: "no noise estimate"},
		{name: "single run, threshold crossed", baseline: "fast.json", result: "single.json", env: []string{"CEILING_THRESHOLD=p50:+10%"}, code: 1, verdict: "unknown",
			line: "failed: a threshold was crossed", compared: "p50:+10%", log: "::error::ceiling gate: a threshold was crossed"},
		{name: "control moved", baseline: "base.json", result: "busy.json", code: 4, verdict: "unknown",
			line:     "failed: could not tell the runner from the service: the control moved; no change was judged: run the job again",
			compared: "**Could not tell:** the control moved", log: "::error::ceiling gate: could not tell"},
		{name: "control moved, on-unknown warn", baseline: "base.json", result: "busy.json", env: []string{"CEILING_ON_UNKNOWN=warn"}, verdict: "unknown",
			line:     "passed with a warning: could not tell the runner from the service: the control moved; no change was judged: run the job again",
			compared: "**Could not tell:** the control moved", log: "::warning::ceiling gate: could not tell"},
		{name: "the run failed its SLO", baseline: "fast.json", result: "fast2.json", exit: 1, env: []string{"CEILING_RUN_ARGS=--slo p99<10ms\n  --step 300ms\n"},
			code: 1, verdict: "same", line: "failed: the run failed its SLO or thresholds, or a step was INVALID (ceiling run exited 1)",
			compared: "### ceiling compare: **same", log: "::error::ceiling gate: the run failed its SLO",
			calls: []string{"run|plan.yaml|--repeat|5|--out|ceiling-result.json|--slo|p99<10ms|--step|300ms|"}},
		{name: "the run's bad input", baseline: "fast.json", result: "fast2.json", exit: 2, code: 2, verdict: "none", bare: true,
			line: "failed: ceiling run exited 2 (bad input: a flag or the plan; the log says what and where)"},
		{name: "the run interrupted", baseline: "fast.json", result: "fast2.json", exit: 130, code: 130, verdict: "none",
			line: "failed: ceiling run exited 130"},
		{name: "compare fails", baseline: "garbage.json", result: "fast.json", code: 2, verdict: "none", bare: true,
			line: "failed: ceiling compare exited 2 (the log says why)"},
		{name: "baseline missing", baseline: "missing.json", code: 2, verdict: "none",
			line: "bad input: baseline BASELINE does not exist (or is not a file): fix the path, or leave baseline empty while there is none yet"},
		{name: "baseline and artifact", baseline: "fast.json", env: []string{"CEILING_BASELINE_ARTIFACT=base"}, code: 2, verdict: "none",
			line: "bad input: baseline and baseline-artifact are both set: give one"},
		{name: "bad on-unknown", result: "fast.json", env: []string{"CEILING_ON_UNKNOWN=maybe"}, code: 2, verdict: "none",
			line: `bad input: on-unknown "maybe": want fail or warn`},
		{name: "bad fail-on", result: "fast.json", env: []string{"CEILING_FAIL_ON=always"}, code: 2, verdict: "none",
			line: `bad input: fail-on "always": want regression or threshold`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := gatePlan(t, "http://127.0.0.1:9")
			env := append([]string{"CEILING_PLAN=plan.yaml", "CEILING_TEST_EXIT=" + fmt.Sprint(tt.exit)}, tt.env...)
			baseline := ""
			if tt.baseline != "" {
				baseline = at(tt.baseline)
				env = append(env, "CEILING_BASELINE="+baseline)
			}
			if tt.result != "" {
				env = append(env, "CEILING_TEST_RESULT="+at(tt.result))
			}
			j := runGate(t, dir, env...)
			code := tt.code
			if tt.code == 0 && strings.HasPrefix(tt.line, "passed with a warning") {
				code = 4 // the code that decided, though the job passed
			}
			outs := map[string]string{"verdict": tt.verdict, "exit-code": fmt.Sprint(code)}
			line := strings.ReplaceAll(tt.line, "BASELINE", baseline)
			j.check(t, tt.code, outs, "**ceiling gate: "+line+"**\n\n")
			if tt.log != "" && !strings.Contains(j.log, tt.log) {
				t.Errorf("the log has no %q:\n%s", tt.log, j.log)
			}
			for i, c := range tt.calls {
				c = "token= " + strings.ReplaceAll(c, "BASELINE", baseline)
				if i >= len(j.calls) || j.calls[i] != c {
					t.Errorf("ceiling's calls %q, want %q first", j.calls, tt.calls)
					break
				}
			}
			if strings.HasPrefix(line, "bad input") && len(j.calls) > 0 {
				t.Errorf("the gate refused its input after calling ceiling: %q", j.calls)
			}
			// The summary is the outcome's line, then the comparison when
			// there is one, then the run's report when it wrote a result:
			// exactly, each followed by a blank line (the comparison's
			// HTML block ends before the report's heading).
			want := "**ceiling gate: " + line + "**\n\n"
			if tt.compared != "" {
				md, err := os.ReadFile(j.outputs["comparison"])
				if err != nil || !strings.Contains(string(md), tt.compared) {
					t.Errorf("the comparison output (%q): %v, want it to say %q", j.outputs["comparison"], err, tt.compared)
				}
				want += string(md) + "\n"
			} else if j.outputs["comparison"] != "" {
				t.Errorf("output comparison = %q, want none", j.outputs["comparison"])
			}
			if j.outputs["result"] != "" && !tt.bare {
				report, err := ceiling(t, "report", at(tt.result), "--format", "md").Output()
				if err != nil {
					t.Fatalf("ceiling report: %v", err)
				}
				want += string(report) + "\n"
			}
			if j.summary != want {
				t.Errorf("the summary:\n%s\nwant:\n%s", j.summary, want)
			}
		})
	}
}

// The baseline as a GitHub artifact: gh (here a stand-in that records its
// calls and its token) finds the newest successful run of this workflow on
// main and downloads its artifact, which is compared; no artifact is a
// pass with a warning. GH_TOKEN is for gh alone: no call of ceiling (the
// run, and so its target, too) sees it.
func TestCIGateArtifact(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the gate is a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	files := t.TempDir()
	baseline, result := filepath.Join(files, "fast.json"), filepath.Join(files, "fast2.json")
	writeRepeated(t, baseline, 20.1, 19.8, 20.4, 20.0, 20.6)
	writeRepeated(t, result, 20.3, 19.9, 20.2, 20.5, 19.7)
	gh := func(t *testing.T, found bool) (path, calls string) {
		dir := t.TempDir()
		calls = filepath.Join(dir, "calls")
		script := fmt.Sprintf(`#!/bin/sh
echo "token=${GH_TOKEN:-} gh $*" >>%q
if [ %v = false ]; then echo "no runs" >&2; exit 1; fi
case "$1 $2" in
"run list") echo 42 ;;
"run download")
  while [ $# -gt 0 ]; do
    if [ "$1" = --dir ]; then mkdir -p "$2" && cp %q "$2/result.json"; fi
    shift
  done ;;
esac
`, calls, found, baseline)
		if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir, calls
	}
	env := func(path string) []string {
		return []string{"CEILING_PLAN=plan.yaml", "CEILING_TEST_RESULT=" + result, "PATH=" + path, "GH_TOKEN=gh-S3CRET",
			"CEILING_BASELINE_ARTIFACT=ceiling-baseline", "CEILING_BASELINE_BRANCH=main",
			"GITHUB_WORKFLOW_REF=acme/shop/.github/workflows/load.yml@refs/pull/7/merge"}
	}
	t.Run("found", func(t *testing.T) {
		t.Parallel()
		path, calls := gh(t, true)
		j := runGate(t, gatePlan(t, "http://127.0.0.1:9"), env(path)...)
		j.check(t, 0, map[string]string{"verdict": "same", "exit-code": "0"}, "**ceiling gate: passed: no significant change**", "### ceiling compare: **same", "(baseline, 5 repeats)")
		got, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		want := "token=gh-S3CRET gh run list --workflow load.yml --branch main --status success --limit 1 --json databaseId --jq .[0].databaseId\n" +
			"token=gh-S3CRET gh run download 42 --name ceiling-baseline --dir "
		if !strings.HasPrefix(string(got), want) || strings.Count(string(got), "\n") != 2 {
			t.Errorf("gh was called\n%s\nwant\n%s...", got, want)
		}
		for _, c := range j.calls {
			if !strings.HasPrefix(c, "token= ") {
				t.Errorf("ceiling was called with GH_TOKEN set: %q", c)
			}
		}
		if len(j.calls) != 4 {
			t.Errorf("ceiling's calls %q, want run, report and compare twice", j.calls)
		}
	})
	t.Run("not found: passes with a warning", func(t *testing.T) {
		t.Parallel()
		path, _ := gh(t, false)
		j := runGate(t, gatePlan(t, "http://127.0.0.1:9"), env(path)...)
		j.check(t, 0, map[string]string{"verdict": "none", "exit-code": "0"}, "**ceiling gate: passed: nothing compared (no baseline)**")
		if !strings.Contains(j.log, "::warning::ceiling gate: no artifact ceiling-baseline from a successful run of load.yml on main") {
			t.Errorf("no warning annotation in the log:\n%s", j.log)
		}
	})
}

// repeatOf is a step's repeats with these p50s (ms): p95 is 1.2 × p50,
// p99 1.5 × p50, throughput 100/s, no errors.
func repeatOf(p50 []float64) *results.Repeat {
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

// latencyOf is the latency of the median of these p50s (ms), as repeatOf.
func latencyOf(p50 []float64) metrics.Latency {
	m := results.Median(p50)
	return metrics.Latency{P50: m, P95: m * 1.2, P99: m * 1.5}
}

// writeRepeated writes a result whose one step ran 5 times with these p50s
// (ms), as repeatOf.
func writeRepeated(t *testing.T, path string, p50 ...float64) {
	t.Helper()
	r := &results.Result{Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 100, DurationS: 10,
		Throughput: 100, LatencyMS: latencyOf(p50), Repeat: repeatOf(p50)}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

// writeControlled writes a result whose one step ran 5 times, an api
// scenario at these p50s (ms) beside a control "landing" at those, each
// as repeatOf.
func writeControlled(t *testing.T, path string, api, landing []float64) {
	t.Helper()
	n := int64(len(api))
	r := &results.Result{Schema: results.Schema, Control: "landing", Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 200, DurationS: 10,
		Throughput: 200, Completed: 2000 * n, LatencyMS: latencyOf(api), Repeat: repeatOf(api), Scenarios: []results.Breakdown{
			{Name: "api", Completed: 1000 * n, OK: 1000 * n, LatencyMS: latencyOf(api), Repeat: repeatOf(api)},
			{Name: "landing", Completed: 1000 * n, OK: 1000 * n, LatencyMS: latencyOf(landing), Repeat: repeatOf(landing)},
		}}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

// starved reports whether r did not pass only because ceiling could not
// hold its load (a neighbour's load on this machine): every reason it
// gives is that, or that no step passed, and each of its steps passed or
// was GENERATOR LIMITED.
func starved(t *testing.T, r *results.Result) bool {
	t.Helper()
	if r == nil || r.Passed || len(r.Steps) == 0 {
		return false
	}
	for _, why := range r.Outcome.Reasons {
		if why.Kind != results.ReasonGeneratorLimited && why.Kind != results.ReasonNoStepPassed {
			return false
		}
	}
	for _, s := range r.Steps {
		if !slices.Contains([]string{results.Healthy, results.Stressed, results.GeneratorLimited}, s.Verdict) {
			return false
		}
	}
	t.Logf("this machine was too busy for the run: %s", r.Outcome.Summary())
	return true
}
