//go:build unix

package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// init waiting on a FIFO that no one writes to stops at the first
// SIGTERM, and says it was interrupted (exit 130), as a run does.
func TestInitStopsOnFirstSignal(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "session.har")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err) // a temporary folder on unix takes a FIFO
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "init", "--har", fifo) // acting as ceiling (TestMain)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	testkit.Group(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Once init has the FIFO open for reading, a writer can open it
	// without blocking: init then waits on a FIFO whose writer writes
	// nothing (held open until the test ends). Its signals were caught
	// before it ran.
	var w *os.File
	for deadline := time.Now().Add(10 * time.Second); w == nil; time.Sleep(10 * time.Millisecond) {
		if w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer w.Close()
		} else if time.Now().After(deadline) {
			t.Fatalf("init did not open the FIFO within 10s: %v\n%s", err, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != int(ExitInterrupted) {
			t.Errorf("init after one SIGTERM: %v, want exit %d\n%s", err, ExitInterrupted, stderr.String())
		}
		if strings.Contains(stderr.String(), "ceiling: ") {
			t.Errorf("init after one SIGTERM said an error:\n%s", stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("init still ran 10s after one SIGTERM\n%s", stderr.String())
	}
}
