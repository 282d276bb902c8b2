//go:build unix

package draft

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// draftWithin runs f.Draft(ctx) and fails t if it has not returned
// within d.
func draftWithin(t *testing.T, ctx context.Context, f *Flags, d time.Duration) (*Draft, error) {
	t.Helper()
	type drafted struct {
		d   *Draft
		err error
	}
	done := make(chan drafted, 1)
	go func() {
		d, err := f.Draft(ctx)
		done <- drafted{d, err}
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-time.After(d):
		t.Fatalf("Draft(%+v) had not returned after %v", f, d)
	}
	return nil, nil
}

// A recording in a pipe is read through the limit, however much comes
// and whether or not it ends; a FIFO no one writes holds the draft no
// longer than its context.
func TestDraftSourceBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	go func() {
		zeros := make([]byte, 1<<20)
		for range MaxHARBytes>>20 + 2 {
			if _, err := w.Write(zeros); err != nil {
				return
			}
		}
	}() // and it stays open
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	_, err = draftWithin(t, context.Background(), &Flags{HAR: path}, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("Draft(--har an endless pipe) = %v, want an error naming it and the limit", err)
	}

	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for _, f := range []*Flags{{HAR: fifo}, {OpenAPI: fifo}, {Curl: []string{"@" + fifo}}} {
		if _, err := draftWithin(t, ctx, f, 10*time.Second); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Draft(%+v, a FIFO no one writes) = %v, want the context's end", f, err)
		}
	}
	// Release the openings still waiting for a writer.
	for range 3 {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
}
