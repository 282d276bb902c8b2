package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A sweep of the built-in target's CPU-bound /burn (5 ms of CPU a request)
// under two CPU quotas, each in its own cgroup: throughput follows the
// quota, the * is on the larger shape, and the target's CPU sits near its
// quota. It needs root and a cgroup cpu and memory controller.
func TestSweepLocalCPUQuotas(t *testing.T) {
	probe, err := sweep.NewLimits("probe", sweep.Config{Workers: 1, CPUs: 1, MemoryMB: 256})
	if err != nil {
		if errors.Is(err, sweep.ErrNoController) || errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("cgroup limits unavailable here: %v", err)
		}
		t.Fatal(err)
	}
	if err := probe.Remove(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(asCeiling, "1") // the target is this binary, run as ceiling demo-target
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := ceiling(t, context.Background(), "sweep", "--configs", "1@0.5/256m 1@1/256m",
		"--cmd", "'"+exe+"' demo-target --addr 127.0.0.1:{{.port}}", "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/burn?ms=5", "--vus", "4", "--step", "3s", "--warmup", "300ms", "--out", out, "--quiet")
	t.Log(stdout)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readSweep(t, out)
	if len(r.Configs) != 2 || !strings.HasPrefix(r.Limits, "cgroup") {
		t.Fatalf("configs %d, limits %q; want 2 shapes under cgroup limits", len(r.Configs), r.Limits)
	}
	half, one := r.Configs[0], r.Configs[1]
	ratio := one.Throughput / half.Throughput
	t.Logf("throughput %.0f/s at 0.5 CPU, %.0f/s at 1 CPU: ratio %.2f; target CPU %.0f%%, %.0f%%", half.Throughput, one.Throughput, ratio, deref(half.CPUPct), deref(one.CPUPct))
	// Twice the CPU, about twice the throughput; a busy neighbour can take
	// from the 1-CPU shape, never give the 0.5 one more than its quota.
	if ratio < 1.4 || ratio > 2.6 {
		t.Errorf("throughput ratio 1 CPU / 0.5 CPU = %.2f, want about 2", ratio)
	}
	if !one.Best || half.Best {
		t.Errorf("best: 0.5c %v, 1c %v; want the * on 1c", half.Best, one.Best)
	}
	if c := deref(half.CPUPct); c > 70 || c < 25 {
		t.Errorf("the 0.5-CPU target used %.0f%% CPU, want near its 50%% quota", c)
	}
	if _, err := os.Stat(half.Result); err != nil {
		t.Errorf("the shape's own result.json: %v", err)
	}
	if !strings.Contains(stdout, "* 1w / 1c / 256Mi") || !strings.Contains(stdout, "scaling from 0.5 to 1 CPUs") {
		t.Errorf("table without the * or the scaling lesson:\n%s", stdout)
	}
}

// A shape whose target never gets ready is FAILED TO START with why, and
// the sweep goes on to the next shape; the command's templates are
// rendered per shape.
func TestSweepFailedToStart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := ceiling(t, context.Background(), "sweep", "--configs", "1@0.5/64m 2@1/64m",
		"--cmd", "echo workers=$WORKERS port={{.port}} cpus={{.cpus}}; exit 3", "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "10", "--step", "200ms", "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0 (a shape that did not start is a row, not a crash)\n%s\n%s", code, stdout, stderr)
	}
	r := readSweep(t, out)
	if len(r.Configs) != 2 {
		t.Fatalf("%d shapes, want both tried", len(r.Configs))
	}
	for _, c := range r.Configs {
		if c.State != sweep.FailedToStart || !strings.Contains(c.Error, "exit") || c.Best {
			t.Errorf("%s: state %q, error %q, best %v; want FAILED TO START with why", c.Name, c.State, c.Error, c.Best)
		}
	}
	log, err := os.ReadFile(r.Configs[1].Result + ".target.log")
	t.Logf("%s", log)
	if err != nil || !strings.Contains(string(log), "workers=2 port=") || !strings.Contains(string(log), "cpus=1") {
		t.Errorf("the second shape's target log %q (%v): want the templates rendered for it", log, err)
	}
}

// exeAsCeiling returns this test binary, quoted for a shell, set to act as
// ceiling (for demo-target) in the commands the test starts.
func exeAsCeiling(t *testing.T) string {
	t.Helper()
	t.Setenv(asCeiling, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "'" + exe + "'"
}

// The command launcher runs the user's own apply and teardown commands
// with each shape's values templated in (as helm upgrade --set would take
// them), waits for --ready, runs the load, then tears down: apply and
// teardown alternate, one pair per shape, each with that shape's values.
func TestSweepCommandLauncher(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test's apply and teardown commands are POSIX shell")
	}
	exe := exeAsCeiling(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	apply := exe + ` demo-target --addr 127.0.0.1:{{.port}} >/dev/null 2>&1 & echo $! > '` + dir + `/{{.id}}.pid'; ` +
		`echo "apply {{.id}} workers={{.workers}} cpus={{.cpus}} memory={{.memory}} mb={{.memory_mb}} env=$WORKERS" >> '` + dir + `/log'`
	teardown := `kill $(cat '` + dir + `/{{.id}}.pid'); echo "teardown {{.id}}" >> '` + dir + `/log'`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, stdout, stderr := ceiling(t, ctx, "sweep", "--launcher", "command", "--configs", "1@0.5/256m 2@1.5/1g",
		"--apply", apply, "--teardown", teardown, "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "400ms", "--warmup", "100ms", "--out", out, "--quiet")
	t.Log(stdout)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "apply 1w-0.5c-256Mi workers=1 cpus=0.5 memory=256Mi mb=256 env=1\nteardown 1w-0.5c-256Mi\n" +
		"apply 2w-1.5c-1Gi workers=2 cpus=1.5 memory=1Gi mb=1024 env=2\nteardown 2w-1.5c-1Gi\n"
	if string(log) != want {
		t.Errorf("the commands ran as\n%s\nwant\n%s", log, want)
	}
	r := readSweep(t, out)
	if len(r.Configs) != 2 || !strings.Contains(r.Limits, "apply command") {
		t.Fatalf("%d shapes, limits %q; want 2, limits set by the apply command", len(r.Configs), r.Limits)
	}
	for _, c := range r.Configs {
		if c.State != "HEALTHY" || c.Throughput < 10 || c.Throughput > 30 {
			t.Errorf("%s: %s at %.1f/s, want HEALTHY near 20/s", c.Name, c.State, c.Throughput)
		}
	}
	// The targets were stopped by the teardown: their ports no longer answer.
	for _, c := range r.Configs {
		pid, _ := os.ReadFile(filepath.Join(dir, c.ID+".pid"))
		p, err := strconv.Atoi(strings.TrimSpace(string(pid)))
		if err != nil {
			t.Fatalf("%s: pid file %q", c.Name, pid)
		}
		deadline := time.Now().Add(5 * time.Second) // SIGTERM: it shuts down gracefully
		for syscall.Kill(p, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(p, 0) == nil {
			t.Errorf("%s: its target (pid %d) still runs 5 s after the teardown", c.Name, p)
		}
	}
}

// An apply that fails is the shape's FAILED TO START with its log's tail,
// and the sweep goes on; the teardown still runs for it.
func TestSweepCommandApplyFails(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell commands")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	code, stdout, stderr := ceiling(t, context.Background(), "sweep", "--launcher", "command", "--configs", "1@1/256m",
		"--apply", "echo Error: release {{.id}} has no deployed releases; exit 1", "--teardown", "echo torn >> '"+dir+"/log'",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "200ms", "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readSweep(t, out)
	c := r.Configs[0]
	if c.State != sweep.FailedToStart || !strings.Contains(c.Error, "exit status 1") || !strings.Contains(c.LogTail, "release 1w-1c-256Mi has no deployed releases") {
		t.Errorf("state %q, error %q, log tail %q; want FAILED TO START with the apply's output", c.State, c.Error, c.LogTail)
	}
	if !strings.Contains(stdout, "its log ends:") {
		t.Errorf("the table does not show the log's tail:\n%s", stdout)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log")); string(log) != "torn\n" {
		t.Errorf("teardown ran %q, want once", log)
	}
}

// deref reads a figure that must have been measured (-1 when it was not).
func deref(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}
