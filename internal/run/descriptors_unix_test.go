//go:build unix

package run

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// fdLimit is the open-file limit of the runs the tests below start.
const fdLimit = 256

// runLimited runs the plan text in a child process (this test binary,
// started again: runFile) with its open-file limit, soft and hard, lowered
// to fdLimit: never the test's own. It returns the child's exit code (0
// passed, 1 did not pass, 3 could not run), its output, and the result it
// wrote.
func runLimited(t *testing.T, env []string, text string) (int, string, *results.Result) {
	t.Helper()
	dir := t.TempDir()
	path, out := filepath.Join(dir, "plan.yaml"), filepath.Join(dir, "result.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0"`, fdLimit), exe(t))
	cmd.Env = append(append(os.Environ(), planEnv+"="+path, planOutEnv+"="+out), env...)
	testkit.Group(t, cmd)
	output, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("a run under ulimit -n %d: %v\n%s", fdLimit, err, output)
	}
	res, err := results.Read(out)
	if err != nil {
		t.Fatalf("exit %d, result.json: %v\n%s", code, err, output)
	}
	return code, string(output), res
}

// A rate that needs more connections than the open-file limit allows is
// held to what the limit leaves (less a reserve): its arrivals wait, the
// step is GENERATOR LIMITED and says why, no connection fails as if the
// target had refused it, and the step is on disk. On both engines.
func TestOpenModelPastOpenFileLimit(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 500 * time.Millisecond, Body: "ok"})
	for _, engine := range []string{"loop", "goroutines"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each a child process of its own, limited apart
			var env []string
			if engine == "goroutines" {
				env = []string{"CEILING_LOOP=off"}
			}
			// 800/s answered after 0.5 s needs 400 connections; 256 descriptors allow fewer.
			code, output, r := runLimited(t, env, fmt.Sprintf("target: %s\nload: {rates: [800], step: 1s, warmup: 0s}\nhttp: {timeout: 5s}\nscenarios: [{request: {url: /}}]\n", srv.URL))
			if code != 1 || len(r.Steps) != 1 { // GENERATOR LIMITED: the run does not pass
				t.Fatalf("exit %d, %d steps in result.json; want 1, the step written\n%s", code, len(r.Steps), output)
			}
			s := r.Steps[0]
			if s.Failed != 0 {
				t.Errorf("errors %v: want none, the target failed nothing", s.Errors)
			}
			g := s.Generator
			if g == nil || g.FDLimit != fdLimit || g.ConnLimit <= 0 || g.ConnLimit > fdLimit-64 || s.Workers > g.ConnLimit {
				t.Fatalf("generator %+v, %d workers: want the open-file limit %d and connections held below it, less a reserve", g, s.Workers, fdLimit)
			}
			if s.Verdict != results.GeneratorLimited || !strings.Contains(s.VerdictReason, "open-file limit") {
				t.Errorf("verdict %s (%s), want GENERATOR LIMITED by the open-file limit", s.Verdict, s.VerdictReason)
			}
		})
	}
}

// More closed-model users than the open-file limit allows connections:
// the users past it fail in ceiling (class generator, not the target's
// connect), the step is GENERATOR LIMITED saying so, the plan is warned
// about, and result.json is written although every descriptor is taken.
func TestClosedModelPastOpenFileLimit(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 20 * time.Millisecond, Body: "ok"})
	code, output, r := runLimited(t, nil, fmt.Sprintf("target: %s\nload: {vus: [300], step: 1s, warmup: 0s}\nhttp: {timeout: 5s}\nscenarios: [{request: {url: /}}]\n", srv.URL))
	if code != 1 || len(r.Steps) != 1 { // GENERATOR LIMITED: the run does not pass
		t.Fatalf("exit %d, %d steps in result.json; want 1, the step written\n%s", code, len(r.Steps), output)
	}
	s := r.Steps[0]
	if s.Errors["generator"] == 0 || s.Errors["connect"] != 0 || s.OK == 0 {
		t.Errorf("errors %v, %d ok: want users past the limit failing as generator, never connect, the others answered", s.Errors, s.OK)
	}
	if s.Verdict != results.GeneratorLimited || !strings.Contains(s.VerdictReason, "ran out of file descriptors") {
		t.Errorf("verdict %s (%s), want GENERATOR LIMITED, out of file descriptors", s.Verdict, s.VerdictReason)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "300 users need a connection each") {
		t.Errorf("warnings %q: want the users past the limit warned about", r.Warnings)
	}
}
