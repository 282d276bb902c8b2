package cli

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The CI gate (action.yml runs scripts/ceiling-gate.sh) is tested here by
// running the script as a GitHub job would, with this test binary as
// ceiling, a file as $GITHUB_STEP_SUMMARY and another as $GITHUB_OUTPUT:
// first with no baseline (the job on main, which makes the baseline),
// then against targets that are as fast, slower, or whose control scenario
// is slower (the host "busy").

// gateTarget serves a plan's two scenarios: /api after api, and the
// static landing page, the plan's control, after landing.
func gateTarget(t *testing.T, api, landing time.Duration) string {
	t.Helper()
	page := []byte("<html>" + strings.Repeat("x", 4096) + "</html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, body := landing, page
		if r.URL.Path == "/api" {
			d, body = api, []byte(`{"ok":true}`)
		}
		time.Sleep(d)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// gatePlan writes a plan against url into a fresh folder (a job's
// checkout) and returns the folder.
func gatePlan(t *testing.T, url string) string {
	t.Helper()
	dir := t.TempDir()
	plan := "name: gate\ntarget: " + url + "\n" +
		"load: {model: open, rates: [60], step: 400ms, warmup: 100ms}\n" +
		"control: landing\n" +
		"scenarios:\n" +
		"  - {name: api, request: {url: /api}, expect: {status: [200]}}\n" +
		"  - {name: landing, request: {url: /}, expect: {status: [200]}}\n"
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// gateJob is what a run of the gate script left.
type gateJob struct {
	code    int
	log     string            // stdout and stderr
	summary string            // what it appended to $GITHUB_STEP_SUMMARY
	outputs map[string]string // what it wrote to $GITHUB_OUTPUT (the last value of each)
}

// runGate runs the gate script in dir with env (the action's inputs) and
// nothing else of this process' environment but PATH, HOME and TMPDIR:
// no GITHUB_* variable of a CI that runs this test leaks in. ceiling is
// this test binary.
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
	bin := filepath.Join(ci, "ceiling")
	if err := os.WriteFile(bin, []byte(fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", asCeiling, exe)), 0o755); err != nil {
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
	return job
}

// check fails t with the job's log and summary unless every string of
// want is in the summary, in that order, and the outputs are outs.
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
		t.Logf("log:\n%s\nsummary:\n%s\noutputs: %v", j.log, j.summary, j.outputs)
	}
}

// busy reports whether the gate could not tell because this machine was
// busier (or quieter) while the job ran than while the baseline did: its
// generator started even the control's requests late. That is the gate
// working as it should, on a machine that cannot show the outcome the
// test wanted; it is logged, not failed.
func (j gateJob) busy(t *testing.T) bool {
	t.Helper()
	if j.code != 4 {
		return false
	}
	j.check(t, 4, map[string]string{"verdict": "unknown", "exit-code": "4"},
		"**ceiling gate: failed: could not tell the runner from the service: ", "Could not tell")
	t.Logf("this machine was busy: the control moved (or the host measured busier), and the gate could not tell (exit 4), as it should:\n%s", j.summary)
	return true
}

func TestCIGate(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the gate is a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	const slow = 300 * time.Millisecond
	fast := gateTarget(t, 2*time.Millisecond, 0)
	slowAPI := gateTarget(t, slow, 0)
	slowControl := gateTarget(t, 2*time.Millisecond, slow)
	// The noise allowed is wide (50 % and 100 ms) so that a busy machine,
	// whose generator can start requests tens of milliseconds late, moves
	// nothing; the changes made on purpose (300 ms) are wider still.
	compareOpts := []string{"CEILING_REPEAT=3", "CEILING_MIN_EFFECT=50", "CEILING_MIN_ABS=100ms"}

	// On main: no baseline. The run is the next baseline.
	mainDir := gatePlan(t, fast)
	first := runGate(t, mainDir, append(compareOpts, "CEILING_PLAN=plan.yaml", "CEILING_RESULT=out/result.json")...)
	baseline := filepath.Join(mainDir, "out", "result.json")
	first.check(t, 0, map[string]string{"verdict": "none", "exit-code": "0", "result": baseline},
		"**ceiling gate: passed: nothing compared (no baseline)**", "No baseline to compare with", "## gate", "| step |")
	if _, err := os.Stat(baseline); err != nil {
		t.Fatalf("no baseline: %v\n%s", err, first.log)
	}

	// A baseline named but missing (a typo) is bad input, at once: were it
	// "nothing compared", the gate would pass for good.
	missing := runGate(t, gatePlan(t, fast), append(compareOpts, "CEILING_PLAN=plan.yaml", "CEILING_BASELINE=out/no-such-result.json")...)
	missing.check(t, 2, map[string]string{"verdict": "none", "exit-code": "2"},
		"**ceiling gate: bad input: baseline out/no-such-result.json does not exist")
	if strings.Contains(missing.log, "== ") {
		t.Errorf("the gate ran something before refusing its input:\n%s", missing.log)
	}

	// A pull request's job: the same plan against a candidate, compared
	// with the baseline.
	gate := func(t *testing.T, target string, env ...string) gateJob {
		t.Helper()
		env = append(append(compareOpts, "CEILING_PLAN=plan.yaml", "CEILING_BASELINE="+baseline), env...)
		return runGate(t, gatePlan(t, target), env...)
	}
	t.Run("as fast: passes", func(t *testing.T) {
		t.Parallel()
		j := gate(t, fast)
		if j.busy(t) {
			return
		}
		j.check(t, 0, map[string]string{"verdict": "same", "exit-code": "0"},
			"**ceiling gate: passed: no significant change**", "### ceiling compare: **same", "No significant change.", "## gate")
		if md, err := os.ReadFile(j.outputs["comparison"]); err != nil || !strings.Contains(j.summary, string(md)) {
			t.Errorf("the comparison output (%q) is not the summary's comparison: %v", j.outputs["comparison"], err)
		}
		// A blank line ends the comparison's HTML block: the report's
		// heading after it is a heading, not text within the block.
		if !strings.Contains(j.summary, "</details>\n\n## gate") {
			t.Errorf("no blank line between the comparison and the report")
		}
	})
	t.Run("slower: fails", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowAPI)
		if j.busy(t) {
			return
		}
		j.check(t, 1, map[string]string{"verdict": "worse", "exit-code": "1"},
			"**ceiling gate: failed: a significant change for the worse**", "### ceiling compare: **worse", "api", "p50", "worse", "## gate")
		if !strings.Contains(j.log, "::error::ceiling gate: a significant change for the worse") {
			t.Errorf("no error annotation in the log:\n%s", j.log)
		}
	})
	t.Run("control moved: fails with 4", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowControl)
		j.check(t, 4, map[string]string{"verdict": "unknown", "exit-code": "4"},
			"**ceiling gate: failed: could not tell the runner from the service: the control moved", "Could not tell", "landing", "## gate")
	})
	t.Run("control moved, on-unknown warn: passes with a warning", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowControl, "CEILING_ON_UNKNOWN=warn")
		j.check(t, 0, map[string]string{"verdict": "unknown", "exit-code": "4"},
			"**ceiling gate: passed with a warning: could not tell the runner from the service: the control moved", "Could not tell")
		if !strings.Contains(j.log, "::warning::ceiling gate: could not tell") {
			t.Errorf("no warning annotation in the log:\n%s", j.log)
		}
	})
	t.Run("slower, fail-on threshold: passes", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowAPI, "CEILING_FAIL_ON=threshold", "CEILING_THRESHOLD=p50:+100000%")
		if j.outputs["verdict"] == "unknown" && strings.Contains(j.summary, "Could not tell") {
			// The other jobs of this test ran beside it, and its baseline
			// alone: the host measured busier (or the control moved).
			j.check(t, 0, map[string]string{"exit-code": "0"}, "**ceiling gate: passed: compare could not tell (below), and that does not fail this gate")
			t.Logf("this machine was busier than while the baseline ran: compare could not tell, as it should:\n%s", j.summary)
			return
		}
		j.check(t, 0, map[string]string{"verdict": "worse", "exit-code": "0"},
			"**ceiling gate: passed: worse, but this gate fails only on a crossed threshold", "### ceiling compare: **worse")
	})
	t.Run("single run, slower: passes", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowAPI, "CEILING_REPEAT=1")
		j.check(t, 0, map[string]string{"verdict": "unknown", "exit-code": "0"},
			"**ceiling gate: passed: compare could not tell", "no noise estimate")
	})
	t.Run("single run, threshold crossed: fails", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowAPI, "CEILING_REPEAT=1", "CEILING_THRESHOLD=p50:+100%")
		j.check(t, 1, map[string]string{"verdict": "unknown", "exit-code": "1"},
			"**ceiling gate: failed: a threshold was crossed**", "p50")
	})
	t.Run("the run fails its SLO: fails, with the comparison", func(t *testing.T) {
		t.Parallel()
		j := gate(t, slowAPI, "CEILING_REPEAT=1", "CEILING_RUN_ARGS=--slo p99<10ms\n  --step 300ms\n")
		j.check(t, 1, map[string]string{"verdict": "unknown", "exit-code": "1"},
			"**ceiling gate: failed: the run failed its SLO", "### ceiling compare: **unknown", "--slo 'p99<10ms' --step 300ms", "FAIL")
	})
	t.Run("target down: fails with the run's 3", func(t *testing.T) {
		t.Parallel()
		j := gate(t, fmt.Sprintf("http://127.0.0.1:%d", freeLocalPort(t)))
		j.check(t, 3, map[string]string{"verdict": "none", "exit-code": "3"},
			"**ceiling gate: failed: ceiling run exited 3")
	})
	t.Run("bad input: 2 before any run", func(t *testing.T) {
		t.Parallel()
		j := gate(t, fast, "CEILING_ON_UNKNOWN=maybe")
		j.check(t, 2, map[string]string{"verdict": "none", "exit-code": "2"},
			`**ceiling gate: bad input: on-unknown "maybe": want fail or warn**`)
		if strings.Contains(j.log, "== ") || j.outputs["result"] != "" {
			t.Errorf("the gate ran ceiling with bad input:\n%s", j.log)
		}
	})

	// The baseline as a GitHub artifact: gh (here a stand-in that records
	// its arguments) finds the newest successful run of this workflow on
	// main and downloads its artifact.
	gh := func(t *testing.T, fail bool) (path, calls string) {
		dir := t.TempDir()
		calls = filepath.Join(dir, "calls")
		script := fmt.Sprintf(`#!/bin/sh
echo "gh $*" >>%q
echo "token=${GH_TOKEN:-}" >>%[1]q.env
if [ -n "%v" ] && [ "%v" = true ]; then echo "no runs" >&2; exit 1; fi
case "$1 $2" in
"run list") echo 42 ;;
"run download")
  while [ $# -gt 0 ]; do
    if [ "$1" = --dir ]; then mkdir -p "$2" && cp %q "$2/result.json"; fi
    shift
  done ;;
esac
`, calls, fail, fail, baseline)
		if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir, calls
	}
	artifact := []string{"CEILING_BASELINE_ARTIFACT=ceiling-baseline", "CEILING_BASELINE_BRANCH=main",
		"GITHUB_WORKFLOW_REF=acme/shop/.github/workflows/load.yml@refs/pull/7/merge"}
	t.Run("artifact", func(t *testing.T) {
		t.Parallel()
		path, calls := gh(t, false)
		// One run: compare cannot tell, whatever this machine does; that
		// it compared at all is what is tested here.
		j := runGate(t, gatePlan(t, fast), append([]string{"CEILING_REPEAT=1", "CEILING_PLAN=plan.yaml", "PATH=" + path}, artifact...)...)
		j.check(t, 0, map[string]string{"verdict": "unknown", "exit-code": "0"}, "### ceiling compare: **unknown", "(baseline, 3 repeats)")
		got, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		want := "gh run list --workflow load.yml --branch main --status success --limit 1 --json databaseId --jq .[0].databaseId\n" +
			"gh run download 42 --name ceiling-baseline --dir "
		if !strings.HasPrefix(string(got), want) {
			t.Errorf("gh was called\n%s\nwant\n%s...", got, want)
		}
	})
	// GH_TOKEN is for gh: the run, its target (monitor.command) and
	// ceiling's other calls do not see it.
	t.Run("the token goes to gh alone", func(t *testing.T) {
		t.Parallel()
		path, calls := gh(t, false)
		dir := gatePlan(t, fast)
		seen := filepath.Join(dir, "target-env")
		p, err := os.OpenFile(filepath.Join(dir, "plan.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(p, "monitor: {command: 'echo \"token=${GH_TOKEN:-}\" > %s; exec sleep 60', ready: %s/}\n", seen, fast)
		p.Close()
		j := runGate(t, dir, append([]string{"CEILING_REPEAT=1", "CEILING_PLAN=plan.yaml", "PATH=" + path, "GH_TOKEN=gh-S3CRET"}, artifact...)...)
		j.check(t, 0, map[string]string{"exit-code": "0"})
		target, err := os.ReadFile(seen)
		if err != nil {
			t.Fatalf("the plan's target did not start: %v\n%s", err, j.log)
		}
		if got := strings.TrimSpace(string(target)); got != "token=" {
			t.Errorf("the target started by the run saw %q, want no GH_TOKEN", got)
		}
		if got, _ := os.ReadFile(calls + ".env"); !strings.HasPrefix(string(got), "token=gh-S3CRET\ntoken=gh-S3CRET\n") {
			t.Errorf("gh saw %q, want the token on each of its calls", got)
		}
	})
	t.Run("artifact not found: passes with a warning", func(t *testing.T) {
		t.Parallel()
		path, _ := gh(t, true)
		j := runGate(t, gatePlan(t, fast), append([]string{"CEILING_REPEAT=1", "CEILING_PLAN=plan.yaml", "PATH=" + path}, artifact...)...)
		j.check(t, 0, map[string]string{"verdict": "none", "exit-code": "0"},
			"**ceiling gate: passed: nothing compared (no baseline)**")
		if !strings.Contains(j.log, "::warning::ceiling gate: no artifact ceiling-baseline from a successful run of load.yml on main") {
			t.Errorf("no warning annotation in the log:\n%s", j.log)
		}
	})
}

// action.yml passes every input to the script, and the script reads no
// variable the action does not set; the action's outputs are the ones
// the script writes.
func TestActionRunsTheGate(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// Strict: a key GitHub does not know (a typo) is an error here too.
	var action struct {
		Name, Description string
		Branding          struct{ Icon, Color string }
		Inputs            map[string]struct {
			Description, Default string
			Required             bool
		}
		Outputs map[string]struct{ Description, Value string }
		Runs    struct {
			Using string
			Steps []struct {
				Name, ID, If, Uses, Shell, Run string
				WorkingDirectory               string `yaml:"working-directory"`
				With, Env                      map[string]string
			}
		}
	}
	if err := yaml.UnmarshalWithOptions(raw, &action, yaml.Strict()); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", action.Runs.Using)
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "ceiling-gate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	runs := string(raw[strings.Index(string(raw), "\nruns:"):])
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`inputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(runs, -1) {
		used[m[1]] = true
		if _, ok := action.Inputs[m[1]]; !ok {
			t.Errorf("the steps use inputs.%s, which action.yml does not declare", m[1])
		}
	}
	for name, in := range action.Inputs {
		if !used[name] {
			t.Errorf("input %s is declared but no step uses it", name)
		}
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}
	var gate map[string]string
	for _, s := range action.Runs.Steps {
		if s.ID == "gate" {
			gate = s.Env
			if s.Run != `bash "$GITHUB_ACTION_PATH/scripts/ceiling-gate.sh"` || s.Shell != "bash" {
				t.Errorf("the gate step runs %q in %q, want the script in bash", s.Run, s.Shell)
			}
		}
	}
	if gate == nil {
		t.Fatal("action.yml has no step with id gate")
	}
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{(CEILING_[A-Z_]+)`).FindAllStringSubmatch(string(script), -1) {
		read[m[1]] = true
		if _, ok := gate[m[1]]; !ok {
			t.Errorf("the script reads %s, which the action does not set", m[1])
		}
	}
	for k := range gate {
		if strings.HasPrefix(k, "CEILING_") && !read[k] {
			t.Errorf("the action sets %s, which the script does not read", k)
		}
	}
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:'|\\n)([a-z][a-z-]*)=%s`).FindAllStringSubmatch(string(script), -1) {
		written[m[1]] = true
	}
	if len(written) == 0 {
		t.Fatal("the script writes no output")
	}
	for name, out := range action.Outputs {
		if want := "${{ steps.gate.outputs." + name + " }}"; out.Value != want || !written[name] {
			t.Errorf("output %s = %q (the script writes it: %v), want %q", name, out.Value, written[name], want)
		}
		delete(written, name)
	}
	for name := range written {
		t.Errorf("the script writes output %s, which action.yml does not declare", name)
	}
}

// The workflows in the documentation give the action only inputs it
// has and read only outputs it has; the GitLab job's ceiling commands
// are those of a shell block that is run (TestDocShellBlocks).
func TestCIDocsMatchTheAction(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs, Outputs map[string]any
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, b := range docBlocks(t, root) {
		if m, err := parseDocMarker(b.marker); err == nil && m.kind == "run" && b.file == "docs/ci.md" {
			for line := range strings.Lines(b.text) {
				tested[strings.TrimSpace(line)] = true
			}
		}
	}
	uses, gitlab := 0, 0
	for _, file := range []string{"README.md", "docs/ci.md"} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
			text := block[1]
			if !strings.Contains(text, "ceiling-dev/ceiling@") && !strings.Contains(text, "script:") {
				continue
			}
			var doc any
			if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
				t.Errorf("%s: a YAML block does not parse: %v\n%s", file, err, text)
				continue
			}
			walkYAML(doc, func(m map[string]any) {
				if u, _ := m["uses"].(string); strings.HasPrefix(u, "ceiling-dev/ceiling@") {
					uses++
					with, _ := m["with"].(map[string]any)
					for k := range with {
						if _, ok := action.Inputs[k]; !ok {
							t.Errorf("%s: the action is given %s:, which is not one of its inputs", file, k)
						}
					}
					if id, _ := m["id"].(string); id != "" {
						for _, o := range regexp.MustCompile(`steps\.`+regexp.QuoteMeta(id)+`\.outputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(text, -1) {
							if _, ok := action.Outputs[o[1]]; !ok {
								t.Errorf("%s: reads the action's output %s, which it does not have", file, o[1])
							}
						}
					}
				}
				script, _ := m["script"].([]any)
				for _, line := range script {
					if s, _ := line.(string); strings.HasPrefix(s, "ceiling ") {
						gitlab++
						if !tested[s] {
							t.Errorf("%s: the GitLab job runs %q, which no run block of docs/ci.md runs", file, s)
						}
					}
				}
			})
		}
	}
	if uses < 2 || gitlab < 3 {
		t.Errorf("found the action used %d times and %d GitLab ceiling commands: the check checked nothing", uses, gitlab)
	}
}

// walkYAML calls f with every mapping in a decoded YAML document.
func walkYAML(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, e := range v {
			walkYAML(e, f)
		}
	case []any:
		for _, e := range v {
			walkYAML(e, f)
		}
	}
}
