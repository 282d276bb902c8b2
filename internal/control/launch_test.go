//go:build linux

package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
}

// launch starts a target and stops it when the test ends.
func launch(t *testing.T, c LaunchConfig) *Target {
	t.Helper()
	tg, err := Launch(context.Background(), c)
	if err != nil {
		t.Fatalf("Launch(%+v) = %v", c, err)
	}
	t.Cleanup(func() { _ = tg.Stop() })
	return tg
}

// watch watches a launched target's process tree, as a run does.
func watch(t *testing.T, pid int) monitor.Source {
	t.Helper()
	src, err := monitor.Process(pid)
	if err != nil {
		t.Fatalf("monitor.Process(%d) = %v", pid, err)
	}
	return src
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLaunchReadyStop(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	log := filepath.Join(t.TempDir(), "target.log")
	start := time.Now()
	tg := launch(t, LaunchConfig{
		Command: shellQuote(testBinary(t)),
		Env:     []string{helperEnv + "=serve", "CONTROL_TEST_ADDR=" + addr, "CONTROL_TEST_DELAY=300ms"},
		Ready:   "http://" + addr + "/", ReadyTimeout: 5 * time.Second,
		Log: log,
	})
	took := time.Since(start)
	t.Logf("ready after %v (the target listens after 300ms)", took)
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("Launch returned after %v, want 300ms–2s", took)
	}
	if tg.Exited() || tg.PID() <= 0 {
		t.Fatalf("after Launch: Exited() = %v, PID() = %d; want running", tg.Exited(), tg.PID())
	}
	src := watch(t, tg.PID())
	if s, err := src.Read(); err != nil || !s.Alive || s.RSSBytes <= 0 {
		t.Errorf("Read() of the target = %+v, %v; want alive with some RSS", s, err)
	}
	stopStart := time.Now()
	if err := tg.Stop(); err != nil {
		t.Errorf("Stop() = %v", err)
	}
	t.Logf("stopped by SIGTERM in %v", time.Since(stopStart))
	if !tg.Exited() || time.Since(stopStart) > time.Second {
		t.Errorf("after Stop: Exited() = %v after %v, want true well within the 5s grace", tg.Exited(), time.Since(stopStart))
	}
	if s, _ := src.Read(); s.Alive {
		t.Errorf("Read() after Stop = %+v, want not alive", s)
	}
	if got := readFile(t, log); !strings.Contains(got, "listening") {
		t.Errorf("log = %q, want the target's output", got)
	}
	if err := tg.Stop(); err != nil {
		t.Errorf("second Stop() = %v", err)
	}
}

func TestLaunchEnvDir(t *testing.T) {
	dir, log := t.TempDir(), filepath.Join(t.TempDir(), "out.log")
	tg := launch(t, LaunchConfig{Command: `echo "$GREETING"; pwd; echo oops >&2`, Env: []string{"GREETING=hello"}, Dir: dir, Log: log})
	<-tg.done
	if got, want := readFile(t, log), "hello\n"+dir+"\noops\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}

func TestLaunchNeverReady(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, log := filepath.Join(dir, "pid"), filepath.Join(dir, "target.log")
	addr := freeAddr(t) // nothing listens there
	start := time.Now()
	_, err := Launch(context.Background(), LaunchConfig{
		Command: "echo $$ > " + shellQuote(pidFile) + "; echo starting; exec sleep 30",
		Ready:   "http://" + addr + "/health", ReadyTimeout: 300 * time.Millisecond,
		Log: log,
	})
	t.Logf("Launch of a target that never answers: %v (after %v)", err, time.Since(start))
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") || !strings.Contains(err.Error(), log) {
		t.Fatalf("Launch = %v, want an error saying it did not answer within 300ms, naming the log", err)
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	if perr != nil {
		t.Fatal(perr)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) = %v after a failed Launch, want ESRCH (the target stopped)", pid, err)
	}
	if got := readFile(t, log); got != "starting\n" {
		t.Errorf("log = %q, want the target's output", got)
	}
}

func TestLaunchExitsBeforeReady(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "target.log")
	_, err := Launch(context.Background(), LaunchConfig{
		Command: "echo boom; exit 3", Ready: "http://" + freeAddr(t) + "/", ReadyTimeout: 5 * time.Second, Log: log,
	})
	t.Logf("Launch of a target that exits: %v", err)
	if err == nil || !strings.Contains(err.Error(), "exited (exit status 3)") || !strings.Contains(err.Error(), log) {
		t.Fatalf("Launch = %v, want an error saying it exited with status 3, naming the log", err)
	}
	if got := readFile(t, log); got != "boom\n" {
		t.Errorf("log = %q, want %q", got, "boom\n")
	}
}

func TestLaunchCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Launch(ctx, LaunchConfig{Command: "exec sleep 30", Ready: "http://" + freeAddr(t) + "/"})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "discarded") {
		t.Errorf("Launch with a cancelled context = %v, want context.Canceled, saying the output was discarded", err)
	}
	if _, err := Launch(context.Background(), LaunchConfig{}); err == nil {
		t.Errorf("Launch of no command = nil error, want one")
	}
}

// TestLaunchExitMidWatch watches a target that exits on its own.
func TestLaunchExitMidWatch(t *testing.T) {
	t.Parallel()
	tg := launch(t, LaunchConfig{Command: "sleep 0.4"})
	w := monitor.NewWatcher(watch(t, tg.PID()), nil, 50*time.Millisecond)
	start := time.Now()
	w.Start()
	select {
	case <-tg.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the target did not exit")
	}
	time.Sleep(150 * time.Millisecond) // a reading or two after the exit
	w.Stop()
	end := time.Now()
	if !tg.Exited() {
		t.Errorf("Exited() = false after the target exited")
	}
	f := w.Window(start, end)
	t.Logf("target exited mid-watch: %d samples, Exited %v", f.Samples, f.Exited)
	if !f.Exited || f.Samples < 5 {
		t.Errorf("Window = %+v, want Exited with ≥ 5 samples", f)
	}
	if early := w.Window(start, start.Add(200*time.Millisecond)); early.Exited {
		t.Errorf("Window of the first 200ms = %+v, want not exited yet", early)
	}
	if err := tg.Stop(); err != nil {
		t.Errorf("Stop() of an exited target = %v, want nil", err)
	}
}

// TestLaunchStopKills stops a target that ignores SIGTERM: SIGKILL after
// the grace.
func TestLaunchStopKills(t *testing.T) {
	t.Parallel()
	tg := launch(t, LaunchConfig{Command: "trap '' TERM; sleep 30 & wait; wait", StopGrace: 300 * time.Millisecond})
	time.Sleep(100 * time.Millisecond) // let the shell set its trap
	start := time.Now()
	if err := tg.Stop(); err != nil {
		t.Errorf("Stop() = %v", err)
	}
	took := time.Since(start)
	t.Logf("a TERM-ignoring target was killed after %v (grace 300ms)", took)
	if !tg.Exited() || took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("Stop() took %v, Exited() = %v; want 300ms–2s and exited", took, tg.Exited())
	}
	if groupAlive(tg.PID()) {
		t.Errorf("the target's process group still has running members after Stop")
	}
}

// A Lifecycle's Abort kills the targets launched with it and not stopped,
// whole process groups, and no other: not one stopped before, nor one of
// another Lifecycle.
func TestLifecycleAbortKillsItsTargets(t *testing.T) {
	var l, other Lifecycle
	running := launch(t, LaunchConfig{Command: "sleep 30 & wait", Lifecycle: &l})
	stopped := launch(t, LaunchConfig{Command: "exec sleep 30", Lifecycle: &l})
	if err := stopped.Stop(); err != nil {
		t.Fatal(err)
	}
	kept := launch(t, LaunchConfig{Command: "exec sleep 30", Lifecycle: &other})
	l.Abort(time.Second)
	select {
	case <-running.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the target outlived its Lifecycle's Abort by 5s")
	}
	if _, died := running.Died(); died {
		t.Error("a target killed by an abort says it died on its own")
	}
	for deadline := time.Now().Add(3 * time.Second); groupAlive(running.PID()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Error("the target's process group still has running members 3s after the abort")
			break
		}
	}
	if kept.Exited() {
		t.Error("another Lifecycle's target was killed")
	}
	l.mu.Lock()
	n := len(l.targets)
	l.mu.Unlock()
	if n != 1 {
		t.Errorf("the Lifecycle keeps %d targets, want 1: the stopped one is forgotten", n)
	}
}

// RunCommand runs a command to its end: an exit status other than 0 is an
// error naming it and the log (never the command, which may hold a
// secret); a command past its timeout is stopped, its process tree with it.
func TestRunCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "out.log")
	if err := RunCommand(context.Background(), LaunchConfig{Command: "echo applied $SHAPE", Env: []string{"SHAPE=2w"}, Log: log}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if out, _ := os.ReadFile(log); string(out) != "applied 2w\n" {
		t.Errorf("log %q, want the command's output with its environment", out)
	}
	err := RunCommand(context.Background(), LaunchConfig{Command: "echo --set password=pw1; exit 3", Log: log}, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), log) || strings.Contains(err.Error(), "pw1") {
		t.Errorf("RunCommand(exit 3) = %v, want the status and the log, not the command", err)
	}
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	err = RunCommand(context.Background(), LaunchConfig{Command: "sleep 30 & echo $! > '" + pidFile + "'; wait", Log: log, StopGrace: time.Second}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") || time.Since(start) > 10*time.Second {
		t.Errorf("RunCommand(sleep 30) = %v after %v, want stopped at its timeout", err, time.Since(start))
	}
	data, _ := os.ReadFile(pidFile)
	if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr != nil || running(pid) {
		t.Errorf("the command's child %q still runs after the timeout (%v)", data, perr)
	}
}

// WaitReady waits for any HTTP answer, and gives up at its timeout.
func TestWaitReady(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	go func() {
		time.Sleep(200 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		t.Cleanup(func() { ln.Close() })
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			c.Close()
		}
	}()
	if err := WaitReady(context.Background(), "http://"+addr+"/health", 10*time.Second); err != nil {
		t.Errorf("WaitReady = %v, want ready once it answers (any status)", err)
	}
	err := WaitReady(context.Background(), "http://"+freeAddr(t)+"/", 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Errorf("WaitReady(nothing there) = %v, want a timeout", err)
	}
}

// running reports whether pid is a live process: a zombie (killed, not yet
// reaped by whoever inherited it) is not.
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// The ready probe does not follow a redirect: the target's 302 is its
// answer, whatever answers where it points (or does not: a dead host).
func TestWaitReadyRedirectIsAnAnswer(t *testing.T) {
	var other atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { other.Add(1) }))
	defer elsewhere.Close()
	for _, to := range []string{elsewhere.URL + "/ok", "http://" + freeAddr(t) + "/dead"} {
		target := httptest.NewServer(http.RedirectHandler(to, http.StatusFound))
		err := WaitReady(context.Background(), target.URL+"/health", 2*time.Second)
		target.Close()
		if err != nil {
			t.Errorf("WaitReady(a 302 to %s) = %v, want ready: the target answered", to, err)
		}
	}
	if n := other.Load(); n != 0 {
		t.Errorf("the host the redirect named was asked %d times, want never", n)
	}
}

// PID is the target's own process, not the shell that keeps it: the
// program itself when the command is one (run alone, exec'd, or with
// variables set before it), and for a compound command the keeper's child,
// an ancestor of the program; Group is the keeper's process group, which
// holds them all.
func TestLaunchPIDIsTheTarget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, command string
		itself        bool
	}{
		{"alone", `"$BIN"`, true},
		{"exec", `exec "$BIN"`, true},
		{"env", `X=1 "$BIN"`, true},
		{"compound", `true; "$BIN"; echo done`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			log := filepath.Join(t.TempDir(), "target.log")
			tg := launch(t, LaunchConfig{
				Command: tt.command,
				Env:     []string{"BIN=" + testBinary(t), helperEnv + "=serve", "CONTROL_TEST_ADDR=" + addr},
				Ready:   "http://" + addr + "/", ReadyTimeout: 10 * time.Second, Log: log,
			})
			var server int
			fmt.Sscanf(readFile(t, log), "pid %d", &server)
			if server <= 0 {
				t.Fatalf("the server did not log its pid: %q", readFile(t, log))
			}
			if tt.itself && tg.PID() != server {
				t.Errorf("PID() = %d, want the server's own %d (the keeper shell is %d)", tg.PID(), server, tg.Group())
			}
			if !tt.itself && (tg.PID() == tg.Group() || !ancestor(tg.PID(), server)) {
				t.Errorf("PID() = %d, want the keeper's child (not the keeper %d), an ancestor of the server %d", tg.PID(), tg.Group(), server)
			}
			if pgid, err := syscall.Getpgid(server); err != nil || pgid != tg.Group() {
				t.Errorf("the server's group = %d (%v), want Group() = %d", pgid, err, tg.Group())
			}
		})
	}
}

// ancestor reports whether a is pid or one of its ancestors (procfs).
func ancestor(a, pid int) bool {
	for pid > 1 {
		if pid == a {
			return true
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		fields := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(fields) < 2 {
			return false
		}
		pid, _ = strconv.Atoi(fields[1])
	}
	return false
}

// A target that dies before it answers, or does not answer in time, is
// named by its ready URL without the URL's password or secret query
// values: these lines end up in CI logs.
func TestLaunchReadyErrorsRedactURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ name, command, ready string }{
		{"exits", "exit 1", "http://alice:S01PW@" + freeAddr(t) + "/x?token=S02"},
		{"never ready", "exec sleep 30", "http://bob:S04PW@" + freeAddr(t) + "/health?access_token=S05"},
	} {
		_, err := Launch(context.Background(), LaunchConfig{Command: c.command, Ready: c.ready,
			ReadyTimeout: 300 * time.Millisecond, Log: filepath.Join(dir, c.name+".log")})
		if err == nil {
			t.Fatalf("%s: Launch = nil, want an error", c.name)
		}
		for _, s := range []string{"S01PW", "S02", "S04PW", "S05"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: Launch = %q, holds the secret %s", c.name, err, s)
			}
		}
		if !strings.Contains(err.Error(), "<redacted>") {
			t.Errorf("%s: Launch = %q, want the URL with <redacted> in place of its secrets", c.name, err)
		}
	}
	err := WaitReady(context.Background(), "http://carol:S06PW@"+freeAddr(t)+"/?token=S07", 200*time.Millisecond)
	if err == nil || strings.Contains(err.Error(), "S06PW") || strings.Contains(err.Error(), "S07") {
		t.Errorf("WaitReady = %v, want an error without the URL's secrets", err)
	}
}
