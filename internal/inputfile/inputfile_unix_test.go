//go:build unix

package inputfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A device's size says 0: it is read through the limit all the same.
func TestReadDevice(t *testing.T) {
	start := time.Now()
	_, err := Read(context.Background(), "/dev/zero", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != "/dev/zero" {
		t.Fatalf("Read(/dev/zero) = %v, want a TooLargeError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Read(/dev/zero) took %v", d)
	}
}

// pipe returns a path that reads the pipe's read end (as a shell's
// <(…) does) and its write end.
func pipe(t *testing.T) (string, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return fmt.Sprintf("/dev/fd/%d", r.Fd()), w
}

// A pipe is read to its end; one that goes on past the limit is cut
// there; one that neither ends nor writes stops with its context.
func TestReadPipe(t *testing.T) {
	path, w := pipe(t)
	go func(w *os.File) { w.Write([]byte(`{"ok":true}`)); w.Close() }(w)
	if got, err := Read(context.Background(), path, 1<<10); err != nil || string(got) != `{"ok":true}` {
		t.Errorf("Read(a pipe) = %q, %v", got, err)
	}

	path, w = pipe(t)
	go func(w *os.File) { w.Write(make([]byte, 1<<20)) }(w) // then it stays open
	var tl *TooLargeError
	if _, err := Read(context.Background(), path, 512<<10); !errors.As(err, &tl) {
		t.Errorf("Read(a pipe past the limit) = %v, want a TooLargeError", err)
	}

	path, w = pipe(t)
	w.Write([]byte("a start"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Read(ctx, path, 1<<10); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read(a pipe that stays open) = %v, want its context's end", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Read(a pipe that stays open) returned after %v", d)
	}
}

// A FIFO that no one writes does not hold Read past its context; one
// that is written is read.
func TestReadFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Read(ctx, path, 1<<10); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read(a FIFO without a writer) = %v, want its context's end", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Read(a FIFO without a writer) returned after %v", d)
	}
	// The writer that comes at last releases the waiting open.
	if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		w.Close()
	}
	// A FIFO of its own for the written case: on this one the abandoned
	// open's file may still be open (its goroutine closes it when it gets
	// to run), and a writer that met that reader would write into a pipe
	// about to be dropped, leaving the next Read waiting for ever.
	path = filepath.Join(t.TempDir(), "fifo2")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	go func() {
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			w.Write([]byte("hello"))
			w.Close()
		}
	}()
	if got, err := Read(context.Background(), path, 1<<10); err != nil || string(got) != "hello" {
		t.Errorf("Read(a written FIFO) = %q, %v", got, err)
	}
}
