package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// Runs through agents (a lost agent, a coordinator that died, a search,
// TLS, --allow-targets, merges of segments) are tested in package agent;
// here, that the commands are wired to it.

// tokenFile writes an agents' token for a test.
func tokenFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("test-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// agentInProcess runs `ceiling agent --token-file token ARGS` in this
// process on a free loopback port until the test ends, and returns its
// address once it listens, and its exit code when it returns.
func agentInProcess(t *testing.T, token string, args ...string) (string, <-chan ExitCode) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	exited, done := make(chan ExitCode, 1), make(chan struct{})
	go func() {
		code, _, stderr := ceiling(t, ctx, append([]string{"agent", "--listen", addr, "--token-file", token}, args...)...)
		if code != ExitOK {
			t.Errorf("ceiling agent: exit %d\n%s", code, stderr)
		}
		exited <- code
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, exited
		}
		if time.Now().After(deadline) {
			t.Fatalf("ceiling agent did not listen on %s within 10s", addr)
		}
	}
}

// ceiling agent --once serves one coordinator's run and exits 0 (a
// Kubernetes Job's pod completes); run --agents drives it, refused with
// the wrong token (exit 2), and --emit-result prints the result between
// the markers ceiling k8s reads back from the coordinator's log.
func TestAgent(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	addr, exited := agentInProcess(t, token, "--once")
	srv := delayServer(t, 0)
	args := []string{"run", "--url", srv.URL, "--rate", "20", "--step", "300ms", "--warmup", "100ms", "--agents", addr,
		"--out", filepath.Join(t.TempDir(), "r.json"), "--emit-result", "--quiet"}
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("another-token-0123456789"), 0o600)
	if code, _, stderr := ceiling(t, context.Background(), append(args, "--token-file", wrong)...); code != ExitBadInput || !strings.Contains(stderr, "valid bearer token") {
		t.Errorf("a wrong token: exit %d, %q; want refused (exit 2)", code, stderr)
	}
	code, stdout, stderr := ceiling(t, context.Background(), append(args, "--token-file", token)...)
	r, err := results.ReadLog(strings.NewReader(stdout))
	if err != nil || len(r.Steps) != 1 || r.Steps[0].Agents != 1 {
		t.Fatalf("exit %d, the emitted result: %v; want the run's, with its one agent\n%s\n%s", code, err, stdout, stderr)
	}
	if code != ExitOK && !(code == ExitThreshold && starved(t, r)) || code == ExitOK && !r.Passed {
		t.Errorf("exit %d, the emitted result passed %v; want 0, passed\n%s", code, r.Passed, stderr)
	}
	select {
	case code := <-exited:
		if code != ExitOK {
			t.Errorf("the agent --once exited %d, want 0", code)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("the agent --once still runs 20 s after its run ended")
	}
}

// run --segment i/N runs a share of the load, and merge puts the
// segments run at the same time together (exit 0), or refuses what is not
// every segment of one plan (exit 2).
func TestMerge(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 0)
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := 1; i <= 2; i++ {
		wg.Go(func() {
			out := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
			code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "40", "--step", "500ms", "--warmup", "100ms",
				"--segment", fmt.Sprintf("%d/2", i), "--out", out, "--quiet")
			if r, err := results.Read(out); code != ExitOK && !(code == ExitThreshold && err == nil && starved(t, r)) {
				t.Errorf("segment %d/2: exit %d\n%s", i, code, stderr)
			}
		})
	}
	wg.Wait()
	s1, s2, merged := filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2.json"), filepath.Join(dir, "merged.json")
	code, stdout, stderr := ceiling(t, context.Background(), "merge", s1, s2, "--out", merged, "--quiet")
	r := readResult(t, merged)
	if code != ExitOK && !(code == ExitThreshold && starved(t, r)) || !strings.Contains(stdout, "merged exactly") {
		t.Fatalf("merge: exit %d, want 0 and the table of the merged run\n%s\n%s", code, stdout, stderr)
	}
	if s := r.Steps; len(s) != 1 || s[0].Sent+s[0].NotSent != 20 {
		t.Errorf("merged steps %+v, want one of 20 arrivals", s)
	}
	if code, _, stderr := ceiling(t, context.Background(), "merge", s1, "--out", merged, "--quiet"); code != ExitBadInput || !strings.Contains(stderr, "segment 2/2 is missing") {
		t.Errorf("one segment of two: exit %d, %q; want refused (exit 2)", code, stderr)
	}
}
