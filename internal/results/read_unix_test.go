//go:build unix

package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readWithin runs Read(path) and fails t if it has not returned within d.
func readWithin(t *testing.T, path string, d time.Duration) (*Result, error) {
	t.Helper()
	type read struct {
		r   *Result
		err error
	}
	done := make(chan read, 1)
	go func() {
		r, err := Read(path)
		done <- read{r, err}
	}()
	select {
	case r := <-done:
		return r.r, r.err
	case <-time.After(d):
		t.Fatalf("Read(%s) had not returned after %v", path, d)
	}
	return nil, nil
}

// A result is read from a pipe (compare base.json <(curl …)) as from a
// file; one that goes on past MaxResultBytes is refused there, naming
// the file and the limit, whether it ends or not.
func TestReadBoundsPipes(t *testing.T) {
	good := filepath.Join(t.TempDir(), "r.json")
	if err := Write(good, &Result{Schema: Schema, Steps: []Step{step(100, 5)}}, Public); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pipe := func() (string, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return fmt.Sprintf("/dev/fd/%d", r.Fd()), w
	}
	path, w := pipe()
	go func(w *os.File) { w.Write(data); w.Close() }(w)
	if r, err := readWithin(t, path, 10*time.Second); err != nil || len(r.Steps) != 1 {
		t.Errorf("Read(a result from a pipe) = %v", err)
	}
	path, w = pipe()
	go func(w *os.File) {
		zeros := make([]byte, 1<<20)
		for range MaxResultBytes>>20 + 2 {
			if _, err := w.Write(zeros); err != nil {
				return
			}
		}
	}(w) // and it stays open
	_, err = readWithin(t, path, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("Read(an endless pipe) = %v, want an error naming it and the limit", err)
	}
}
