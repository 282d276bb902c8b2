package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// TestMain lets the test binary stand in for the ceiling binary: with
// CEILING_TEST_MAIN=1 it runs main() instead of the tests, and exits if
// the test binary that started it, directly or not, is gone.
func TestMain(m *testing.M) {
	if os.Getenv("CEILING_TEST_MAIN") == "1" {
		testkit.ExitWithOwner()
		main()
		return
	}
	testkit.Own()
	// The tests wait on the ceiling processes they start more than they
	// compute.
	flag.Parse()
	testkit.ParallelWaits(8)
	os.Exit(m.Run())
}

// ceiling returns the command that runs this binary as ceiling with args,
// in a process group that dies with the test.
func ceiling(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CEILING_TEST_MAIN=1")
	testkit.Group(t, cmd)
	return cmd
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A real SIGINT mid-run: exit 130, and result.json holds the finished steps.
func TestSIGINTKeepsFinishedSteps(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 2 * time.Millisecond})
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := ceiling(t, "run", "--url", srv.URL, "--rate", "50,50,50,50", "--step", "700ms", "--warmup", "0s", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1800 * time.Millisecond) // inside the third step
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 130 {
			t.Errorf("exit = %d, want 130; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("ceiling did not stop within 10s of SIGINT")
	}
	var r struct {
		Interrupted bool              `json:"interrupted"`
		Steps       []json.RawMessage `json:"steps"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || len(r.Steps) < 2 || len(r.Steps) > 3 {
		t.Errorf("result: interrupted %v with %d steps, want true with the finished steps", r.Interrupted, len(r.Steps))
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"version"}, 0},
		{[]string{"run", "--rate", "x"}, 2},
		{[]string{"bogus"}, 2},
		{[]string{"run", "--url", "http://127.0.0.1:1/", "--rate", "10", "--step", "1s", "--out", filepath.Join(t.TempDir(), "r.json")}, 3},
	}
	for _, tt := range tests {
		if got := exitCode(ceiling(t, tt.args...).Run()); got != tt.want {
			t.Errorf("ceiling %v: exit %d, want %d", tt.args, got, tt.want)
		}
	}
}
