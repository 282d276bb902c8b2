//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A SIGTERM to `ceiling demo-target` (what a run that started it sends)
// stops it with exit 0, and its log says it stopped on the signal, not
// that it is writing a result nor to interrupt again: it used to print a
// run's "finishing in-flight requests and writing the result (interrupt
// again to abort)" into the target's log.
func TestTerminatedDemoTargetSaysSo(t *testing.T) {
	t.Parallel()
	cmd := ceiling(t, "demo-target", "--addr", "127.0.0.1:0")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !waitUntil(10*time.Second, func() bool { return strings.Contains(stderr.String(), "serving on") }) {
		t.Fatalf("the demo target did not start within 10s; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 0 {
			t.Errorf("exit = %d, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the demo target did not stop within 10s of SIGTERM")
	}
	log := stderr.String()
	if !strings.Contains(log, "ceiling demo-target: terminated, stopping") || strings.Contains(log, "interrupt again") || strings.Contains(log, "result") {
		t.Errorf("the demo target's log after SIGTERM:\n%s\nwant it to say it stopped on the signal, without a result nor an interrupt", log)
	}
}

// Two SIGTERMs back to back, as GNU timeout sends them (to the command,
// then to its process group), stop a run in order, as one does: exit 130,
// the result written and marked interrupted, no abort.
func TestDoubleTerminateAtOnceStopsInOrder(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	proc, _, stderr := runWithTarget(t, out, "")
	proc.Signal(syscall.SIGTERM)
	proc.Signal(syscall.SIGTERM)
	done := make(chan int, 1)
	go func() {
		st, _ := proc.Wait()
		done <- st.ExitCode()
	}()
	select {
	case code := <-done:
		if code != 130 {
			t.Errorf("exit = %d, want 130; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("ceiling did not stop within 20s of two SIGTERMs; stderr:\n%s", stderr.String())
	}
	// stderr reaches the buffer through a copier that the process's Wait
	// does not wait for: its last lines may come after the exit (seen
	// once, with eight tests at a time).
	stopped := waitUntil(2*time.Second, func() bool { return strings.Contains(stderr.String(), "terminated, stopping") })
	if log := stderr.String(); strings.Contains(log, "aborted") || !stopped {
		t.Errorf("stderr after two SIGTERMs at once:\n%s\nwant a stop in order, not an abort", log)
	}
	if u, _ := unfinished(t, out); u || !interrupted(t, out) {
		t.Errorf("result after two SIGTERMs at once: unfinished %v, interrupted %v; want a finished result marked interrupted", u, interrupted(t, out))
	}
}
