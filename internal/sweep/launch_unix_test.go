//go:build unix

package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// readResult reads a shape's result.json.
func readResult(t *testing.T, path string) *results.Result {
	t.Helper()
	r, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The sweeps whose commands are POSIX shell.

// A shape whose target never gets ready is FAILED TO START with why, and
// the sweep goes on to the next shape; the command's templates are
// rendered per shape. A sweep in which every shape failed so measured
// nothing: its table says why, and it could not be carried out (exit 3).
func TestSweepFailedToStart(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "sweep.json")
	r, table, err := sweepRun(t, context.Background(), "--configs", "1@0.5/64m 2@1/64m",
		"--cmd", "echo workers=$WORKERS port={{.port}} cpus={{.cpus}}; exit 3", "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "10", "--step", "200ms", "--out", out, "--quiet")
	if ended(r, err) != results.StatusCouldNotRun || !strings.Contains(fmt.Sprint(err), "every shape failed to start") || strings.Count(table, "FAILED TO START") != 2 {
		t.Fatalf("%v, want every shape failed to start, both shapes' rows and why\n%s", err, table)
	}
	r2 := readSweep(t, out)
	if len(r2.Configs) != 2 {
		t.Fatalf("%d shapes, want both tried", len(r2.Configs))
	}
	for _, c := range r2.Configs {
		if c.State != FailedToStart || !strings.Contains(c.Error, "exit") || c.Best {
			t.Errorf("%s: state %q, error %q, best %v; want FAILED TO START with why", c.Name, c.State, c.Error, c.Best)
		}
	}
	log, err := os.ReadFile(r2.Configs[1].Result + ".target.log")
	t.Logf("%s", log)
	if err != nil || !strings.Contains(string(log), "workers=2 port=") || !strings.Contains(string(log), "cpus=1") {
		t.Errorf("the second shape's target log %q (%v): want the templates rendered for it", log, err)
	}
}

// The command launcher runs the user's own apply and teardown commands
// with each shape's values templated in (as helm upgrade --set would take
// them), waits for --ready, runs the load, then tears down: apply and
// teardown alternate, one pair per shape, each with that shape's values.
func TestSweepCommandLauncher(t *testing.T) {
	long(t)
	t.Parallel()
	target := targetCmd(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	apply := target + ` --addr 127.0.0.1:{{.port}} >/dev/null 2>&1 & echo $! > '` + dir + `/{{.id}}.pid'; ` +
		`echo "apply {{.id}} workers={{.workers}} cpus={{.cpus}} memory={{.memory}} mb={{.memory_mb}} env=$WORKERS" >> '` + dir + `/log'`
	teardown := `kill $(cat '` + dir + `/{{.id}}.pid'); echo "teardown {{.id}}" >> '` + dir + `/log'`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, table, err := sweepRun(t, ctx, "--launcher", "command", "--configs", "1@0.5/256m 2@1.5/1g",
		"--apply", apply, "--teardown", teardown, "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "400ms", "--warmup", "100ms", "--repeat", "2", "--out", out, "--quiet")
	t.Log(table)
	if got := ended(r, err); got != results.StatusPassed {
		t.Fatalf("the sweep %s (%v), want passed", got, err)
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
	if len(r.Configs) != 2 || !strings.Contains(r.Limits, "apply command") {
		t.Fatalf("%d shapes, limits %q; want 2, limits set by the apply command", len(r.Configs), r.Limits)
	}
	for _, c := range r.Configs {
		if c.State != "HEALTHY" || c.Throughput < 10 || c.Throughput > 30 {
			t.Errorf("%s: %s at %.1f/s, want HEALTHY near 20/s", c.Name, c.State, c.Throughput)
		}
		// --repeat applies per shape: its row is the median of two repeats.
		if st := readResult(t, c.Result).Steps; len(st) != 1 || st[0].Repeat == nil || st[0].Repeat.N != 2 {
			t.Errorf("%s: steps %+v, want one step repeated twice", c.Name, st)
		}
	}
	// The targets were stopped by the teardown: their processes end.
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
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	r, table, err := sweepRun(t, context.Background(), "--launcher", "command", "--configs", "1@1/256m",
		"--apply", "echo Error: release {{.id}} has no deployed releases; exit 1", "--teardown", "echo torn >> '"+dir+"/log'",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "200ms", "--out", out, "--quiet")
	if got := ended(r, err); got != results.StatusCouldNotRun { // its one shape did not start: the sweep measured nothing
		t.Fatalf("the sweep %s (%v), want could not run\n%s", got, err, table)
	}
	c := r.Configs[0]
	if c.State != FailedToStart || !strings.Contains(c.Error, "exit status 1") || !strings.Contains(c.LogTail, "release 1w-1c-256Mi has no deployed releases") {
		t.Errorf("state %q, error %q, log tail %q; want FAILED TO START with the apply's output", c.State, c.Error, c.LogTail)
	}
	if !strings.Contains(table, "its log ends:") {
		t.Errorf("the table does not show the log's tail:\n%s", table)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log")); string(log) != "torn\n" {
		t.Errorf("teardown ran %q, want once", log)
	}
}

// One shape that failed to start among shapes that ran is a row of the
// sweep: a strict sweep (the default) fails on it, saying so; with
// --strict=false it is a row only, and the sweep passes.
func TestSweepOneShapeFailedToStart(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	out := filepath.Join(t.TempDir(), "sweep.json")
	args := []string{"--configs", "1@1/256m 2@1/256m",
		"--cmd", `if [ "$WORKERS" = 1 ]; then exit 3; fi; exec ` + target + ` --addr 127.0.0.1:{{.port}}`, "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/health", "--rate", "10", "--step", "200ms", "--warmup", "0s", "--out", out, "--quiet"}
	r, table, err := sweepRun(t, context.Background(), args...)
	if got := ended(r, err); got != results.StatusFailed || !strings.Contains(table, "FAILED: shape 1w / 1c / 256Mi failed to start") {
		t.Fatalf("strict: %s (%v), want failed, saying the shape failed to start\n%s", got, err, table)
	}
	r, table, err = sweepRun(t, context.Background(), append(args, "--strict=false")...)
	if got := ended(r, err); got != results.StatusPassed || !strings.Contains(table, "PASSED (not strict") {
		t.Fatalf("--strict=false: %s (%v), want passed\n%s", got, err, table)
	}
	if r := readSweep(t, out); len(r.Configs) != 2 || r.Configs[0].State != FailedToStart || r.Configs[1].State == FailedToStart || r.Configs[1].Throughput <= 0 {
		t.Errorf("rows %+v; want the first FAILED TO START, the second measured", r.Configs)
	}
}

// A target that refuses every scenario's request (a 401 for want of a
// token) stops the sweep at its first shape's preflight, as could not be
// carried out, saying why, instead of measuring refusals under every
// shape.
func TestSweepStopsWhenRefused(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	out := filepath.Join(t.TempDir(), "sweep.json")
	start := time.Now()
	r, table, err := sweepRun(t, context.Background(), "--configs", "1@1/256m 2@1/256m 4@1/256m",
		"--cmd", target+" --addr 127.0.0.1:{{.port}}", "--ready", "http://127.0.0.1:{{.port}}/health",
		"--url", "http://127.0.0.1:{{.port}}/api/messages", "--rate", "10", "--step", "2s", "--warmup", "0s", "--out", out, "--quiet")
	took := time.Since(start)
	if ended(r, err) != results.StatusCouldNotRun || !strings.Contains(fmt.Sprint(err), "1w / 1c / 256Mi: preflight: the target refused the request") ||
		!strings.Contains(fmt.Sprint(err), "401 Unauthorized: check the credentials") {
		t.Fatalf("%v after %v, want could not run, naming the shape, the 401 and what to check\n%s", err, took, table)
	}
	if r := readSweep(t, out); len(r.Configs) != 0 || took > 6*time.Second {
		t.Errorf("%d rows after %v; want the sweep stopped before any shape's step", len(r.Configs), took)
	}
}

// A sweep file: the plan inline (its target a template of the shape, its
// own {{uuid}} left alone), the shapes as a matrix, find mode: each
// shape's edge is searched for under the plan's SLO, and each row is its
// edge step's.
func TestSweepFileFind(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(file, []byte(`# find the edge of each shape
plan:
  target: http://127.0.0.1:{{.port}}
  load: {rates: [40], step: 300ms, warmup: 100ms}
  slo: "p99<500ms, errors<1%"
  scenarios:
    - request: {url: "/?id={{uuid}}&w={{.workers}}"}
launcher:
  kind: local
  command: "`+target+` --addr 127.0.0.1:{{.port}}"
  ready: http://127.0.0.1:{{.port}}/health
matrix: {workers: [1, 2], cpus: [1], memory: [256Mi]}
mode: find
find: {max: 120, precision: 20%}
`), 0o644)
	out := filepath.Join(dir, "out", "sweep.json")
	os.MkdirAll(filepath.Dir(out), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, table, err := sweepRun(t, ctx, file, "--out", out, "--quiet")
	t.Log(table)
	if got := ended(r, err); got != results.StatusPassed {
		t.Fatalf("the sweep %s (%v), want passed", got, err)
	}
	if !strings.Contains(table, "config   edge") || !strings.Contains(table, "≥ 120") {
		t.Errorf("the table has no edge column:\n%s", table)
	}
	if r := readSweep(t, out); r.Mode != "find" || len(r.Configs) != 2 || r.Configs[0].ID != "1w-1c-256Mi" || r.Configs[1].ID != "2w-1c-256Mi" {
		t.Fatalf("mode %q, shapes %+v; want find over the matrix's two shapes in order", r.Mode, r.Configs)
	}
	for _, c := range r.Configs {
		// The built-in target's / is far from its edge: every level up to
		// --max passes, the edge is the max, and the shape is not limited.
		if c.Edge != 120 || !c.Unlimited || c.Throughput < 80 {
			t.Errorf("%s: edge %v, unlimited %v, %.0f/s; want the edge at --max 120", c.Name, c.Edge, c.Unlimited, c.Throughput)
		}
		if res := readResult(t, c.Result); res.Search == nil || res.Search.Outcome != "no_failure" {
			t.Errorf("%s: its result.json has no search (%+v)", c.Name, res.Search)
		}
	}
}

// --resume keeps the shapes an earlier sweep finished and runs the rest:
// an interrupted shape and a new one; another load is another sweep,
// whose rows would not compare: refused as bad input.
func TestSweepResume(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	args := func(configs string) []string {
		return []string{"--configs", configs, "--launcher", "command",
			"--apply", target + ` --addr 127.0.0.1:{{.port}} >/dev/null 2>&1 & echo $! > '` + dir + `/pid'; echo {{.id}} >> '` + dir + `/applied'`,
			"--teardown", `kill $(cat '` + dir + `/pid')`, "--ready", "http://127.0.0.1:{{.port}}/health",
			"--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "300ms", "--warmup", "100ms", "--out", out, "--quiet"}
	}
	if r, table, err := sweepRun(t, context.Background(), args("1@1/256m 2@1/256m")...); ended(r, err) != results.StatusPassed {
		t.Fatalf("%v\n%s", err, table)
	}
	first := readSweep(t, out)
	// Mark the second shape as cut short, as an interrupted sweep leaves it.
	first.Configs[1].State = "INTERRUPTED"
	data, _ := json.Marshal(first)
	os.WriteFile(out, data, 0o644)
	os.Remove(filepath.Join(dir, "applied"))
	if r, table, err := sweepRun(t, context.Background(), append(args("1@1/256m 2@1/256m 4@1/256m"), "--resume")...); ended(r, err) != results.StatusPassed {
		t.Fatalf("%v\n%s", err, table)
	}
	applied, _ := os.ReadFile(filepath.Join(dir, "applied"))
	if string(applied) != "2w-1c-256Mi\n4w-1c-256Mi\n" {
		t.Errorf("--resume applied %q, want the interrupted shape and the new one only", applied)
	}
	other := append(args("1@1/256m 2@1/256m 4@1/256m"), "--resume")
	other[slices.Index(other, "--rate")+1] = "40"
	if r, _, err := sweepRun(t, context.Background(), other...); ended(r, err) != "bad input" || !strings.Contains(fmt.Sprint(err), "another plan, launcher, load or mode") {
		t.Errorf("--resume with another --rate: %v; want refused as bad input", err)
	}
	r := readSweep(t, out)
	if len(r.Configs) != 3 || r.Resumed != 1 || r.Configs[0].Throughput != first.Configs[0].Throughput || r.Configs[1].State == "INTERRUPTED" {
		t.Errorf("resumed %d, rows %+v; want the first kept as it was and the others measured", r.Resumed, r.Configs)
	}
}

// standInEngine puts a stand-in for docker first on PATH: it runs the
// image as a local process of the built-in target (target: the command
// that starts it; the image crash:1 exits at once instead), puts it in a
// cgroup named by the container's ID when it can (root, a pids
// hierarchy), as an engine does, and answers inspect, logs and rm. It
// records its calls in dir/calls.
func standInEngine(t *testing.T, dir, target string) {
	t.Helper()
	id := fmt.Sprintf("standin%d", time.Now().UnixNano())
	group := "/sys/fs/cgroup/pids/ceiling-test-" + id
	testkit.RemoveCgroup(t, group)
	// run -d --name N -p 127.0.0.1:PORT:CPORT --cpus C --memory M --memory-swap M -e K... IMAGE ARGS
	os.WriteFile(filepath.Join(dir, "docker"), []byte(`#!/bin/sh
echo "$@" >> '`+dir+`/calls'
case "$1" in
run)
  shift; name=; port=
  while [ $# -gt 0 ]; do
    case "$1" in
    --name) name=$2; shift 2;;
    -p) port=$(echo "$2" | cut -d: -f2); shift 2;;
    --cpus|--memory|--memory-swap) shift 2;;
    -e) eval "echo $2=\$$2" >> '`+dir+`/env'; shift 2;;
    -d) shift;;
    *) break;;
    esac
  done
  if [ "$1" = crash:1 ]; then echo `+id+`; exit 0; fi
  `+target+` --addr 127.0.0.1:$port >/dev/null 2>&1 &
  echo $! > '`+dir+`'/$name.pid
  if mkdir '`+group+`' 2>/dev/null && echo $! > '`+group+`/cgroup.procs'; then touch '`+dir+`/grouped'; fi
  echo `+id+`;;
inspect)
  case "$3" in
  *Running*) if [ -f '`+dir+`'/$4.pid ]; then echo true; else echo false; fi;;
  *) echo "$(cat '`+dir+`'/$4.pid) `+id+`";;
  esac;;
logs) if [ -f '`+dir+`'/$2.pid ]; then echo "the container's output"; else echo "panic: boom"; fi;;
rm) if [ -f '`+dir+`'/$3.pid ]; then kill $(cat '`+dir+`'/$3.pid); fi;;
esac
`), 0o755)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// The docker (or podman) launcher's flow, against a stand-in for docker
// that runs the image as a local process: run -d with the shape's --cpus,
// --memory and -p, inspect for the PID the run watches, logs, rm -f. The
// stand-in puts its process in a cgroup named by the container's ID when
// it can (root, a pids hierarchy), as an engine does: the run then
// watches it; otherwise the sweep must say it did not. The real engine is
// tested in TestSweepDockerReal when the machine runs containers.
func TestSweepContainerLauncher(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in engine is a POSIX shell script watched through procfs")
	}
	dir := t.TempDir()
	standInEngine(t, dir, targetCmd(t))
	out := filepath.Join(dir, "sweep.json")
	r, table, err := sweepRun(t, context.Background(), "--launcher", "docker", "--image", "shop:1.2", "--port", "8080",
		"--configs", "2@0.5/256m", "--env", "WORKERS={{.workers}}", "--env", "API_TOKEN=s3cret",
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", "http://127.0.0.1:{{.port}}/burn?ms=1",
		"--rate", "20", "--step", "1500ms", "--warmup", "100ms", "--out", out, "--html", filepath.Join(dir, "sweep.html"), "--quiet") // the target is read every second
	t.Log(table)
	if got := ended(r, err); got != results.StatusPassed {
		t.Fatalf("the sweep %s (%v), want passed", got, err)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	// (The launcher may also ask whether the container still runs while it
	// waits for it to be ready: not counted.)
	lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(string(calls)), "\n"), func(l string) bool { return strings.Contains(l, "State.Running") })
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "run -d --name ceiling-2w-0.5c-256Mi-") ||
		!strings.Contains(lines[0], " --cpus 0.5 --memory 256m --memory-swap 256m -e API_TOKEN -e WORKERS shop:1.2") ||
		!strings.HasPrefix(lines[1], "inspect") || !strings.HasPrefix(lines[2], "logs") || !strings.HasPrefix(lines[3], "rm -f ceiling-2w") {
		t.Errorf("the engine was called as\n%s", calls)
	}
	if strings.Contains(string(calls), "s3cret") {
		t.Errorf("a secret environment value is on the engine's command line:\n%s", calls)
	}
	if env, _ := os.ReadFile(filepath.Join(dir, "env")); string(env) != "API_TOKEN=s3cret\nWORKERS=2\n" {
		t.Errorf("the container's environment %q, want both variables passed through", env)
	}
	onDisk := readSweep(t, out)
	c := onDisk.Configs[0]
	if _, err := os.Stat(filepath.Join(dir, "grouped")); err == nil {
		if c.State != "HEALTHY" || c.CPUPct == nil || c.RSSMB == nil || *c.RSSMB <= 0 || onDisk.Limits != "docker --cpus and --memory" {
			t.Errorf("row %+v, limits %q; want measured, the container's process watched", c, onDisk.Limits)
		}
	} else if c.State != "HEALTHY" || c.CPUPct != nil || !strings.Contains(onDisk.Limits, "not watched: PID") {
		t.Errorf("row %+v, limits %q; want measured, and said that the PID was not the container's", c, onDisk.Limits)
	}
	for _, f := range []string{out, c.Result} {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), "s3cret") {
			t.Errorf("%s holds the value of --env API_TOKEN", f)
		}
	}
	if page, err := os.ReadFile(filepath.Join(dir, "sweep.html")); err != nil || !strings.Contains(string(page), `class="bar best"`) {
		t.Errorf("--html wrote no page with the best shape's bar (%v)", err)
	}
	if log, _ := os.ReadFile(filepath.Join(filepath.Dir(c.Result), "target.log")); !strings.Contains(string(log), "the container's output") {
		t.Errorf("the container's log was not kept: %q", log)
	}
}

// A container that exits at once is FAILED TO START as soon as the engine
// says so, not after the whole ready timeout, with its output's tail.
func TestSweepContainerExits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in engine is a POSIX shell script")
	}
	dir := t.TempDir()
	standInEngine(t, dir, targetCmd(t))
	out := filepath.Join(dir, "sweep.json")
	start := time.Now()
	r, table, err := sweepRun(t, context.Background(), "--launcher", "docker", "--image", "crash:1", "--port", "8080",
		"--configs", "1@1/256m", "--ready", "http://127.0.0.1:{{.port}}/health", "--ready-timeout", "60s",
		"--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "300ms", "--out", out, "--quiet")
	took := time.Since(start)
	if got := ended(r, err); got != results.StatusCouldNotRun { // its one shape did not start: the sweep measured nothing
		t.Fatalf("the sweep %s (%v), want could not run\n%s", got, err, table)
	}
	c := readSweep(t, out).Configs[0]
	if c.State != FailedToStart || !strings.Contains(c.Error, "the container exited") || !strings.Contains(c.LogTail, "panic: boom") || took > 30*time.Second {
		t.Errorf("after %v: state %q, error %q, log tail %q; want FAILED TO START at once, with the container's output", took, c.State, c.Error, c.LogTail)
	}
}

// A teardown that fails is said, on the shape's row and in the table: its
// target may still be running while the next shape is measured.
func TestSweepTeardownFails(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	r, table, err := sweepRun(t, context.Background(), "--launcher", "command", "--configs", "1@1/256m",
		"--apply", target+` --addr 127.0.0.1:{{.port}} >/dev/null 2>&1 & echo $! > '`+dir+`/pid'`,
		"--teardown", `kill $(cat '`+dir+`/pid'); echo 'Error: uninstall: timed out waiting for the condition'; exit 1`,
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "300ms", "--warmup", "100ms",
		"--out", out, "--quiet")
	if got := ended(r, err); got != results.StatusPassed {
		t.Fatalf("the sweep %s (%v), want passed\n%s", got, err, table)
	}
	c := readSweep(t, out).Configs[0]
	if c.State != "HEALTHY" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "teardown: exit status 1") || !strings.Contains(table, "stopping the target: teardown") {
		t.Errorf("state %q, warnings %q; want measured, and the failed teardown said\n%s", c.State, c.Warnings, table)
	}
}

// Ctrl-C during a shape: its step is cut short, its target torn down, and
// no other shape is started; the sweep is interrupted (exit 130), and
// sweep.json and the table say so.
func TestSweepInterrupted(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C once the first shape's run has opened (its result.json is
	// written once the target answered) and a little of its step has run.
	when(t, filepath.Join(dir, "sweep", "1w-1c-256Mi", "result.json"), 500*time.Millisecond, cancel)
	r, table, err := sweepRun(t, ctx, "--launcher", "command", "--configs", "1@1/256m 2@1/256m",
		"--apply", target+` --addr 127.0.0.1:{{.port}} >/dev/null 2>&1 & echo $! > '`+dir+`/pid'; echo apply {{.id}} >> '`+dir+`/log'`,
		"--teardown", `kill $(cat '`+dir+`/pid'); echo teardown {{.id}} >> '`+dir+`/log'`,
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", "http://127.0.0.1:{{.port}}/", "--rate", "20", "--step", "20s", "--warmup", "100ms",
		"--out", out, "--quiet")
	if got := ended(r, err); got != results.StatusInterrupted {
		t.Fatalf("the sweep %s (%v), want interrupted\n%s", got, err, table)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log")); string(log) != "apply 1w-1c-256Mi\nteardown 1w-1c-256Mi\n" {
		t.Errorf("commands %q, want the first shape applied and torn down, the second never started", log)
	}
	onDisk := readSweep(t, out)
	if !onDisk.Interrupted || len(onDisk.Configs) != 1 || onDisk.Configs[0].State != "INTERRUPTED" || !strings.Contains(table, "interrupted: the shapes after the last row did not run") {
		t.Errorf("interrupted %v, rows %+v; want the cut-short shape only, said\n%s", onDisk.Interrupted, onDisk.Configs, table)
	}
}

// A cpu event under a sweep's cgroup: the target's quota drops for a
// while, its latency shows it, and the quota is put back.
func TestSweepCPUEvent(t *testing.T) {
	long(t)
	probe, err := NewLimits("probe", Config{Workers: 1, CPUs: 1, MemoryMB: 256})
	if err != nil {
		t.Skipf("cgroup limits unavailable here: %v", err)
	}
	probe.Remove()
	target := targetCmd(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(file, []byte(`plan:
  target: http://127.0.0.1:{{.port}}
  load: {rates: [100], step: 6s, warmup: 1s}
  http: {timeout: 5s}
  scenarios: [{request: {url: "/burn?ms=5"}}]
  events: [{name: starve, at: 1s, action: cpu, cpus: 0.1, for: 2s}]
launcher:
  command: "`+target+` --addr 127.0.0.1:{{.port}}"
  ready: http://127.0.0.1:{{.port}}/health
configs: ["1@1/256Mi"]
`), 0o644)
	out := filepath.Join(dir, "sweep.json")
	// Its one shape, starved on purpose, is OVERLOADED: no shape held.
	if r, table, err := sweepRun(t, context.Background(), file, "--out", out, "--quiet"); ended(r, err) != results.StatusFailed || !strings.Contains(table, "FAILED: no shape held its load") {
		t.Fatalf("%v, want failed: no shape held\n%s", err, table)
	}
	r := readResult(t, readSweep(t, out).Configs[0].Result)
	if len(r.Events) != 1 || r.Events[0].Error != "" || r.Events[0].Window == nil {
		t.Fatalf("events %+v: want the CPU limit applied and measured", r.Events)
	}
	w := r.Events[0].Window
	t.Logf("window %+v, recovery %v", w, r.Events[0].RecoveryS)
	if w.P99MS < 200 {
		t.Errorf("window p99 %.1f ms: want a target short of CPU (a tenth of a core for 2 s) to show it", w.P99MS)
	}
}

// touchWhen creates the file trigger once the file exists has existed for
// delay: the moment a shape's run has opened (its result.json is written
// once the target answered), for a target told to fail then.
func touchWhen(t *testing.T, exists, trigger string, delay time.Duration) {
	t.Helper()
	when(t, exists, delay, func() { os.WriteFile(trigger, nil, 0o644) })
}

// when calls do once the file exists has existed for delay (polling, for
// at most a minute, and no longer than the test).
func when(t *testing.T, exists string, delay time.Duration, do func()) {
	t.Helper()
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := os.Stat(exists); err == nil {
				select {
				case <-done:
				case <-time.After(delay):
					do()
				}
				return
			}
		}
	}()
}

// A target that outgrows its shape's memory limit mid-step is OOM-killed:
// the row is TARGET DIED (OOM-killed at the limit), because the shape's
// cgroup counted the kill, with the target's log tail; the step ends at the
// death instead of loading a dead port to its end; and the sweep goes on
// to the next shape. It needs root and a cgroup memory controller.
func TestSweepTargetOOMKilled(t *testing.T) {
	long(t)
	probe, err := NewLimits("probe", Config{Workers: 1, CPUs: 1, MemoryMB: 48})
	if err != nil {
		t.Skipf("cgroup limits unavailable here: %v", err)
	}
	probe.Remove()
	target := targetCmd(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	// The first shape's target takes 96 MiB (its limit is 48) 0.5 s after
	// its run opened; the second's is never told to.
	touchWhen(t, filepath.Join(dir, "sweep", "1w-1c-48Mi", "result.json"), filepath.Join(dir, "1w-1c-48Mi.go"), 500*time.Millisecond)
	start := time.Now()
	r, table, err := sweepRun(t, context.Background(), "--configs", "1@1/48m 1@1/256m",
		"--cmd", hogMB+"=96 "+hogWhen+"='"+dir+"/{{.id}}.go' "+target+" --addr 127.0.0.1:{{.port}}",
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", "http://127.0.0.1:{{.port}}/",
		"--rate", "50", "--step", "3s", "--warmup", "200ms", "--out", out, "--quiet")
	took := time.Since(start)
	t.Logf("after %v:\n%s", took, table)
	// A shape whose target died is a row, and fails the (strict) sweep.
	if got := ended(r, err); got != results.StatusFailed || !strings.Contains(table, "FAILED: shape 1w / 1c / 48Mi: TARGET DIED (OOM-killed at 48 MiB)") {
		t.Fatalf("the sweep %s (%v), want failed, saying the shape's target was OOM-killed\n%s", got, err, table)
	}
	if len(r.Configs) != 2 {
		t.Fatalf("%d rows, want both shapes", len(r.Configs))
	}
	dead, alive := r.Configs[0], r.Configs[1]
	if dead.State != "TARGET DIED" || !strings.Contains(dead.Error, "its cgroup counted 1 OOM kill") || !strings.Contains(dead.LogTail, "Killed") || dead.Best {
		t.Errorf("row %s: state %q, error %q, log tail %q; want TARGET DIED, the cgroup's OOM kill, the log's Killed", dead.Name, dead.State, dead.Error, dead.LogTail)
	}
	if !strings.Contains(table, "TARGET DIED (OOM-killed at 48 MiB)") || !strings.Contains(table, "its log ends:") {
		t.Errorf("the table does not say the target was OOM-killed at 48 MiB, with its log:\n%s", table)
	}
	// The step ended at the death (about 0.3 s into its 3 s window), not
	// at its end.
	res := readResult(t, dead.Result)
	if len(res.Steps) != 1 || res.Steps[0].DurationS > 2.5 || !res.Steps[0].Interrupted {
		t.Errorf("the dead shape's steps: %d, the first %.1fs, partial %v; want one partial step, ended at the death (about 0.3 s into 3 s)", len(res.Steps), res.Steps[0].DurationS, res.Steps[0].Interrupted)
	} else if st := res.Steps[0]; st.Target == nil || !strings.HasPrefix(st.Target.Died, "killed by SIGKILL") {
		t.Errorf("the dead shape's step target %+v: want it died, killed by SIGKILL", st.Target)
	}
	// The sweep went on to the next shape and measured it whole (its
	// verdict is the busy machine's business: HEALTHY when it is idle).
	if st := readResult(t, alive.Result).Steps; alive.State == "TARGET DIED" || len(st) != 1 || st[0].DurationS < 2.9 || alive.Throughput < 35 || alive.Throughput > 65 {
		t.Errorf("row %s: %s at %.1f/s; want the sweep gone on to it, its 3 s step whole, near 50/s", alive.Name, alive.State, alive.Throughput)
	}
}

// A target killed (not by the OOM killer) and one that exits are TARGET
// DIED with how they ended, never "OOM-killed": that is said only when
// the shape's cgroup counted an OOM kill (and without a cgroup, never).
func TestSweepTargetDiedNotOOM(t *testing.T) {
	t.Parallel()
	target := targetCmd(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	for _, id := range []string{"1w-1c-256Mi", "2w-1c-256Mi"} {
		touchWhen(t, filepath.Join(dir, "sweep", id, "result.json"), filepath.Join(dir, id+".go"), 500*time.Millisecond)
	}
	// Workers 1: its server is killed by SIGKILL; workers 2: it is stopped
	// and the command exits with status 7.
	cmd := target + ` --addr 127.0.0.1:{{.port}} & p=$!; ` +
		`while [ ! -f '` + dir + `/{{.id}}.go' ]; do sleep 0.05; done; ` +
		`if [ {{.workers}} = 1 ]; then kill -9 $p; wait $p; else kill $p; wait $p; exit 7; fi`
	r, table, err := sweepRun(t, context.Background(), "--configs", "1@1/256m 2@1/256m", "--cmd", cmd,
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", "http://127.0.0.1:{{.port}}/",
		"--rate", "50", "--step", "4s", "--warmup", "200ms", "--out", out, "--quiet")
	t.Log(table)
	if got := ended(r, err); got != results.StatusFailed || readSweep(t, out).Passed {
		t.Fatalf("the sweep %s (%v), want failed: the shapes' targets died\n%s", got, err, table)
	}
	if len(r.Configs) != 2 {
		t.Fatalf("%d rows, want 2", len(r.Configs))
	}
	for i, want := range []string{"TARGET DIED (killed by SIGKILL (its shell's exit status 137))", "TARGET DIED (exited with status 7)"} {
		c := r.Configs[i]
		if c.State != "TARGET DIED" || strings.Contains(c.Error, "OOM") || !strings.Contains(table, want) {
			t.Errorf("row %s: state %q, error %q; want %s in the table, no OOM", c.Name, c.State, c.Error, want)
		}
		if res := readResult(t, c.Result); len(res.Steps) != 1 || res.Steps[0].DurationS > 3 {
			t.Errorf("row %s: %d steps, the first %.1fs; want one step, ended at the death (0.3-1.5 s into 4 s)", c.Name, len(res.Steps), res.Steps[0].DurationS)
		}
	}
}
