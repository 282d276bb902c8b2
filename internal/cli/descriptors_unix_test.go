//go:build unix

package cli

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

// fdLimit is the open-file limit of the ceiling the tests below start.
const fdLimit = 256

// ceilingLimited runs this test binary as ceiling with its open-file
// limit (soft and hard) lowered to fdLimit, in a child process: never the
// test's own. It returns the exit code and the output.
func ceilingLimited(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, fdLimit), exe}, args...)...)
	cmd.Env = append(append(os.Environ(), asCeiling+"=1"), env...)
	testkit.Group(t, cmd)
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("ceiling under ulimit -n %d: %v\n%s", fdLimit, err, out)
	}
	return code, string(out)
}

// A rate that needs more connections than the open-file limit allows is
// held to what the limit leaves (less a reserve): its arrivals wait, the
// step is GENERATOR LIMITED and says why, no connection fails as if the
// target had refused it, and the step is on disk. On both engines.
func TestOpenModelPastOpenFileLimit(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 500*time.Millisecond)
	for _, engine := range []string{"loop", "goroutines"} {
		t.Run(engine, func(t *testing.T) {
			var env []string
			if engine == "goroutines" {
				env = []string{"CEILING_LOOP=off"}
			}
			out := filepath.Join(t.TempDir(), "r.json")
			// 800/s answered after 0.5 s needs 400 connections; 256 descriptors allow fewer.
			code, output := ceilingLimited(t, env, "run", "--url", srv.URL, "--rate", "800", "--step", "1s", "--warmup", "0s",
				"--timeout", "5s", "--out", out, "--quiet")
			if code != int(ExitThreshold) { // GENERATOR LIMITED: the run does not pass
				t.Fatalf("exit %d, want 1\n%s", code, output)
			}
			r := readResult(t, out)
			if len(r.Steps) != 1 {
				t.Fatalf("%d steps in result.json, want the step written\n%s", len(r.Steps), output)
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
	srv := delayServer(t, 20*time.Millisecond)
	out := filepath.Join(t.TempDir(), "r.json")
	code, output := ceilingLimited(t, nil, "run", "--url", srv.URL, "--vus", "300", "--step", "1s", "--warmup", "0s",
		"--timeout", "5s", "--out", out, "--quiet")
	if code != int(ExitThreshold) { // GENERATOR LIMITED: the run does not pass
		t.Fatalf("exit %d, want 1\n%s", code, output)
	}
	r := readResult(t, out)
	if len(r.Steps) != 1 {
		t.Fatalf("%d steps in result.json, want the step written\n%s", len(r.Steps), output)
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
