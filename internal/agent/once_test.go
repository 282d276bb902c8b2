package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveOnce runs `ceiling agent --once --idle-timeout idle` on loopback
// and returns its address and the channel of Serve's error.
func serveOnce(t *testing.T, idle time.Duration) (string, <-chan error) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuffer{}
	served, ended := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(ended)
		served <- Serve(ctx, ServeFlags{Listen: "127.0.0.1:0", TokenFile: tokenFile, Lease: time.Second, Once: true, Idle: idle}, "test", nil, log)
	}()
	t.Cleanup(func() { cancel(); <-ended })
	var addr string
	for start := time.Now(); addr == ""; time.Sleep(10 * time.Millisecond) {
		if _, after, ok := strings.Cut(log.String(), "on http://"); ok {
			addr, _, _ = strings.Cut(after, "\n")
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the agent did not start: %s", log.String())
		}
	}
	return addr, served
}

// An agent that serves one run (--once) and to which no coordinator comes
// stops after its idle timeout with an error that says so, rather than
// holding its resources until its Job's deadline.
func TestAgentOnceIdleTimeout(t *testing.T) {
	_, served := serveOnce(t, 300*time.Millisecond)
	select {
	case err := <-served:
		if err == nil || !strings.Contains(err.Error(), "no coordinator opened a session within 300ms") {
			t.Errorf("Serve = %v, want an error saying no coordinator came within the idle timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent was still serving 10s after its 300ms idle timeout")
	}
}

// A coordinator that opens a session in time keeps the agent past its idle
// timeout: the agent ends with the session, without an error.
func TestAgentOnceIdleTimeoutMet(t *testing.T) {
	addr, served := serveOnce(t, 500*time.Millisecond)
	c, err := connect(t, quickPlan(t, target(t), ""), token, addr)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // past the idle timeout, the session open
	select {
	case err := <-served:
		t.Fatalf("Serve = %v while a session was open, want it to wait for the session's end", err)
	default:
	}
	c.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v after its session closed, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent was still serving 10s after its session closed")
	}
}
