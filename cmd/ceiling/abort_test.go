//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// lockedBuffer is a bytes.Buffer safe to write from the command's copier
// and read from the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitUntil polls cond every 20 ms for up to d.
func waitUntil(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// gone reports whether pid has exited (a zombie waiting to be reaped counts
// as exited).
func gone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z'
}

// runWithTarget starts ceiling on a run of several 1 s steps with a target
// it starts itself (this binary's demo-target), sending its requests to
// url (or to the target when url is empty), and returns it once the first
// step is in result.json, with the target's pid.
func runWithTarget(t *testing.T, out, url string) (*os.Process, int, *lockedBuffer) {
	t.Helper()
	return runWithCommand(t, out, url, testkit.FreePort(t), "exec %s demo-target --addr 127.0.0.1:%d")
}

// runWithCommand is runWithTarget with the target's command given as a
// format of the test binary's path and the port.
func runWithCommand(t *testing.T, out, url string, port int, command string) (*os.Process, int, *lockedBuffer) {
	t.Helper()
	health := fmt.Sprintf("http://127.0.0.1:%d/health", port)
	if url == "" {
		url = health
	}
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	text := fmt.Sprintf(`
load: {rates: [20, 20, 20, 20, 20, 20, 20, 20, 20, 20], step: 1s, warmup: 0s}
scenarios: [{request: {url: %q}}]
monitor: {command: %q, ready: %q}
`, url, fmt.Sprintf(command, os.Args[0], port), health)
	if err := os.WriteFile(plan, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := ceiling(t, "run", plan, "--out", out)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pidLine := regexp.MustCompile(`\(pid (\d+),`)
	var pid int
	started := waitUntil(15*time.Second, func() bool {
		m := pidLine.FindStringSubmatch(stderr.String())
		if m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		data, _ := os.ReadFile(out)
		return pid > 0 && strings.Contains(string(data), `"index": 0`)
	})
	if !started {
		t.Fatalf("no target pid or no finished step within 15s; stderr:\n%s", stderr.String())
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return cmd.Process, pid, stderr
}

// readJSON reads the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// unfinished reads result.json's unfinished and passed.
func unfinished(t *testing.T, path string) (bool, bool) {
	t.Helper()
	var r struct {
		Unfinished bool `json:"unfinished"`
		Passed     bool `json:"passed"`
	}
	readJSON(t, path, &r)
	return r.Unfinished, r.Passed
}

// ceiling killed mid-run (SIGKILL: no chance to clean up) leaves a result
// that says it is unfinished and did not pass, and its target dies with it.
func TestKilledRunLeavesUnfinishedResultAndNoTarget(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	proc, target, _ := runWithTarget(t, out, "")
	proc.Signal(syscall.SIGKILL)
	proc.Wait()
	if u, p := unfinished(t, out); !u || p {
		t.Errorf("result after SIGKILL: unfinished %v, passed %v; want true, false", u, p)
	}
	if !waitUntil(3*time.Second, func() bool { return gone(target) }) {
		t.Errorf("the target (pid %d) outlived ceiling's SIGKILL", target)
	}
}

// A target whose shell forks rather than execs (a command followed by
// another, a server put in the background) dies with ceiling's SIGKILL
// too: the shell keeps the group and kills it when ceiling dies; the
// server's port refuses afterwards.
func TestKilledRunLeavesNoForkedTarget(t *testing.T) {
	t.Parallel()
	for name, command := range map[string]string{
		"sequence":   "%s demo-target --addr 127.0.0.1:%d; echo stopped",
		"background": "%s demo-target --addr 127.0.0.1:%d & wait",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "r.json")
			port := testkit.FreePort(t)
			proc, _, _ := runWithCommand(t, out, "", port, command)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			if c, err := net.Dial("tcp", addr); err != nil {
				t.Fatalf("the target does not serve before the kill: %v", err)
			} else {
				c.Close()
			}
			proc.Signal(syscall.SIGKILL)
			proc.Wait()
			refused := waitUntil(3*time.Second, func() bool {
				c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
				if err == nil {
					c.Close()
				}
				return err != nil
			})
			if !refused {
				t.Errorf("the target still serves on %s 3 s after ceiling's SIGKILL: orphaned", addr)
				killOrphans(t, "--addr "+addr)
			}
		})
	}
}

// A second Ctrl-C aborts at once (exit 130), while the first still waits
// for slow requests in flight, but it kills the target ceiling started.
func TestDoubleInterruptKillsTarget(t *testing.T) {
	t.Parallel()
	// The requests answer at once until the first step is in (the preflight
	// and the step take no longer than they must), then never within the
	// test: the requests in flight at the interrupt outlast its grace.
	slow := testkit.NewTarget(t, testkit.TargetConfig{})
	out := filepath.Join(t.TempDir(), "r.json")
	proc, target, stderr := runWithTarget(t, out, slow.URL)
	slow.SetDelay(time.Minute)
	held := slow.Hits()
	if !waitUntil(5*time.Second, func() bool { return slow.Hits() >= held+3 }) {
		t.Fatalf("no slow request in flight within 5s; stderr:\n%s", stderr.String())
	}
	proc.Signal(syscall.SIGINT)
	if !waitUntil(5*time.Second, func() bool { return strings.Contains(stderr.String(), "ceiling run: stopping") }) {
		t.Fatalf("no note of the first interrupt within 5s; stderr:\n%s", stderr.String())
	}
	// The second a person's, not a copy of the first (sameStop): a copy
	// would stop in order, waiting for the requests in flight.
	time.Sleep(2 * sameStop)
	if gone(proc.Pid) {
		t.Fatalf("ceiling exited at the first interrupt, want it waiting for the requests in flight; stderr:\n%s", stderr.String())
	}
	proc.Signal(syscall.SIGINT)
	done := make(chan int, 1)
	go func() {
		st, _ := proc.Wait()
		done <- st.ExitCode()
	}()
	select {
	case code := <-done:
		// stderr reaches the buffer through a copier that the process's
		// Wait does not wait for: the abort's line may come after the exit.
		aborted := waitUntil(2*time.Second, func() bool { return strings.Contains(stderr.String(), "ceiling run: aborted") })
		if code != 130 || !aborted {
			t.Errorf("exit = %d, want 130 and an abort; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ceiling did not exit within 5s of the second interrupt")
	}
	if !waitUntil(3*time.Second, func() bool { return gone(target) }) {
		t.Errorf("the target (pid %d) outlived ceiling's abort", target)
	}
}

// interrupt starts ceiling with args, sends SIGINT once stderr shows when,
// and returns the exit code, or fails when ceiling takes longer than within
// to exit after it.
func interrupt(t *testing.T, when string, within time.Duration, args ...string) int {
	t.Helper()
	cmd := ceiling(t, args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !waitUntil(15*time.Second, func() bool { return strings.Contains(stderr.String(), when) }) {
		t.Fatalf("stderr never showed %q:\n%s", when, stderr.String())
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan int, 1)
	go func() {
		st, _ := cmd.Process.Wait()
		done <- st.ExitCode()
	}()
	select {
	case code := <-done:
		return code
	case <-time.After(within):
		t.Fatalf("ceiling did not exit within %v of SIGINT; stderr:\n%s", within, stderr.String())
	}
	return 0
}

// interrupted reads result.json's interrupted.
func interrupted(t *testing.T, path string) bool {
	t.Helper()
	var r struct {
		Interrupted bool `json:"interrupted"`
	}
	readJSON(t, path, &r)
	return r.Interrupted
}

// Ctrl-C while held websockets are still opening (a server that never
// answers the handshake) stops at once: exit 130, and a result that says
// the run was interrupted before any step.
func TestInterruptWhileSocketsOpen(t *testing.T) {
	t.Parallel()
	ln := testkit.Listen(t)
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	dir := t.TempDir()
	out, plan := filepath.Join(dir, "r.json"), filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte(fmt.Sprintf(`
target: http://127.0.0.1:9
load: {rates: [10], step: 1s}
http: {timeout: 10s}
scenarios: [{websocket: {url: "ws://%s/", connections: 200, send: '{"id":"{{uuid}}"}', ack: {json: id}}}]
`, ln.Addr())), 0o644)
	if code := interrupt(t, "opening 200 websocket sockets", 3*time.Second, "run", plan, "--out", out); code != 130 {
		t.Errorf("exit = %d, want 130", code)
	}
	if !interrupted(t, out) {
		t.Errorf("result.json does not say the run was interrupted")
	}
}

// Ctrl-C while ceiling waits for late deliveries stops the wait: exit 130,
// and the result says it was interrupted (it is not a pass).
func TestInterruptDuringDrain(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{}) // accepts, never delivers
	dir := t.TempDir()
	out, plan := filepath.Join(dir, "r.json"), filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte(fmt.Sprintf(`
target: %s
load: {rates: [20], step: 500ms, warmup: 0s}
vars: {msgid: "{{uuid}}"}
scenarios: [{request: {method: POST, url: /}, delivery: {sink: hook, id: "{{.msgid}}"}}]
sinks: [{name: hook, listen: "127.0.0.1:%d", id: {json: id}, drain: 30s}]
`, srv.URL, testkit.FreePort(t))), 0o644)
	if code := interrupt(t, "waiting up to", 3*time.Second, "run", plan, "--out", out); code != 130 {
		t.Errorf("exit = %d, want 130", code)
	}
	if !interrupted(t, out) {
		t.Errorf("result.json does not say the run was interrupted")
	}
}

// killOrphans kills the processes this test's binary started whose command
// line holds marker: a target a failed test left behind.
func killOrphans(t *testing.T, marker string) {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), os.Args[0]+" demo-target "+marker) {
			t.Logf("killing the orphaned target %d", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// A second Ctrl-C during a sweep removes the shape's cgroup as well as the
// target in it: what the target's own process group and its parent-death
// signal cannot undo is undone by the abort. Without cgroup limits (not
// root, no controllers) there is no group to leave behind: skipped.
func TestDoubleInterruptRemovesSweepCgroup(t *testing.T) {
	t.Parallel()
	// As in TestDoubleInterruptKillsTarget: requests that answer at once
	// until the first step is in, then hold, so that the first interrupt
	// is still waiting for them when the second comes.
	slow := testkit.NewTarget(t, testkit.TargetConfig{})
	dir := t.TempDir()
	cmd := ceiling(t, "sweep", "--configs", "1@1/256m",
		"--cmd", os.Args[0]+" demo-target --addr 127.0.0.1:{{.port}}",
		"--ready", "http://127.0.0.1:{{.port}}/health", "--url", slow.URL,
		"--rate", "20,20,20,20,20,20,20,20,20,20", "--step", "1s", "--warmup", "0s",
		"--out", filepath.Join(dir, "sweep.json"))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The shape's group is named after the ceiling that made it.
	groups := func() []string {
		var found []string
		for _, h := range []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup"} {
			m, _ := filepath.Glob(fmt.Sprintf("%s/ceiling-*-pid%d", h, cmd.Process.Pid))
			found = append(found, m...)
		}
		return found
	}
	t.Cleanup(func() {
		for _, g := range groups() {
			procs, _ := os.ReadFile(filepath.Join(g, "cgroup.procs"))
			for _, p := range strings.Fields(string(procs)) {
				if pid, err := strconv.Atoi(p); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			waitUntil(2*time.Second, func() bool { return os.Remove(g) == nil || os.IsNotExist(os.Remove(g)) })
		}
	})
	running := waitUntil(15*time.Second, func() bool {
		results, _ := filepath.Glob(filepath.Join(dir, "sweep", "*", "result.json"))
		for _, r := range results {
			if data, _ := os.ReadFile(r); strings.Contains(string(data), `"index": 0`) {
				return true
			}
		}
		return false
	})
	if !running {
		t.Fatalf("no shape's first step within 15s; stderr:\n%s", stderr.String())
	}
	made := groups()
	if len(made) == 0 {
		t.Skipf("the shape runs without a cgroup here; stderr:\n%s", stderr.String())
	}
	slow.SetDelay(time.Minute)
	held := slow.Hits()
	if !waitUntil(5*time.Second, func() bool { return slow.Hits() >= held+3 }) {
		t.Fatalf("no slow request in flight within 5s; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	if !waitUntil(5*time.Second, func() bool { return strings.Contains(stderr.String(), "ceiling sweep: stopping") }) {
		t.Fatalf("no note of the first interrupt within 5s; stderr:\n%s", stderr.String())
	}
	time.Sleep(2 * sameStop) // a second interrupt, not a copy of the first
	if gone(cmd.Process.Pid) {
		t.Fatalf("ceiling exited at the first interrupt, want it waiting for the requests in flight; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan int, 1)
	go func() {
		st, _ := cmd.Process.Wait()
		done <- st.ExitCode()
	}()
	select {
	case code := <-done:
		// stderr reaches the buffer through a copier that the process's
		// Wait does not wait for: the abort's line may come after the exit.
		aborted := waitUntil(2*time.Second, func() bool { return strings.Contains(stderr.String(), "ceiling sweep: aborted") })
		if code != 130 || !aborted {
			t.Errorf("exit = %d, want 130 and an abort; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ceiling did not exit within 10s of the second interrupt")
	}
	if left := groups(); len(left) > 0 {
		t.Errorf("the abort left the shape's cgroup behind: %v (made %v)", left, made)
	}
}
