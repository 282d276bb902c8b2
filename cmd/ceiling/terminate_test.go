//go:build linux

package main

import (
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
