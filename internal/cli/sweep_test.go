package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/sweep"
)

func readSweep(t *testing.T, path string) sweep.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r sweep.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A sweep whose load runs on agents (--agents): each shape's run is a
// coordinator's, its rows merged from the agents.
func TestSweepOnAgents(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	agent, _ := agentInProcess(t, token)
	srv := delayServer(t, 0)
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := ceiling(t, context.Background(), "sweep", "--launcher", "command", "--configs", "1@1/256m",
		"--apply", "echo {{.id}}", "--url", srv.URL, "--rate", "20", "--step", "300ms", "--warmup", "100ms",
		"--agents", agent, "--token-file", token, "--out", out, "--quiet")
	r := readSweep(t, out)
	if code != ExitOK && !(code == ExitThreshold && sweepStarved(t, r)) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	c := r.Configs[0]
	if res := readResult(t, c.Result); c.Throughput <= 0 || len(res.Agents) != 1 || res.Steps[0].Agents != 1 {
		t.Errorf("row %s, agents %+v; want the shape measured through its agent", c.State, res.Agents)
	}
}

// A sweep in which every shape failed to start measured nothing: its
// table says why, and it exits 3; a sweep given wrong shapes exits 2.
func TestSweepExitCodes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the test's command is POSIX shell")
	}
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := ceiling(t, context.Background(), "sweep", "--configs", "1@0.5/64m 2@1/64m", "--cmd", "exit 3",
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", "http://127.0.0.1:{{.port}}/", "--rate", "10", "--step", "200ms", "--out", out, "--quiet")
	if code != ExitCannotRun || !strings.Contains(stderr, "every shape failed to start") || strings.Count(stdout, "FAILED TO START") != 2 {
		t.Errorf("every shape failed to start: exit %d, want 3 with both shapes' rows and why\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = ceiling(t, context.Background(), "sweep", "--configs", "1@fast/64m", "--cmd", "exit 3", "--url", "http://127.0.0.1:9/", "--rate", "10")
	if code != ExitBadInput || !strings.Contains(stderr, "--configs") {
		t.Errorf("bad --configs: exit %d, %q; want 2 naming the flag", code, stderr)
	}
}
