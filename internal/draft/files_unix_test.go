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
	t.Parallel()
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

// A curl command's @file and -T file is read only from the curl file's
// folder or the working directory, never from /proc, /dev or /sys, and
// only when it is a regular file (a FIFO would hang init); the draft says
// which files it read.
func TestCurlFileRules(t *testing.T) {
	tmp := t.TempDir()
	cmds, work := filepath.Join(tmp, "cmds"), filepath.Join(tmp, "work")
	for _, d := range []string{cmds, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cmds, "body.json"), `{"a":1}`)
	write(filepath.Join(work, "inwd.json"), `{"b":2}`)
	write(filepath.Join(tmp, "outside.txt"), "S3CRET-OUTSIDE")
	if err := os.Symlink(filepath.Join(tmp, "outside.txt"), filepath.Join(cmds, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cmds, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("OUTSIDE_DIR", tmp)
	src := func(cmd string) []Source {
		return []Source{{Name: filepath.Join(cmds, "calls.sh"), Text: cmd, Dir: cmds}}
	}
	d, err := FromCurl(context.Background(), src("curl https://h.test/a -d @body.json\ncurl https://h.test/b -T "+filepath.Join(work, "inwd.json")), Options{})
	if err != nil {
		t.Fatalf("files in the curl file's folder and the working directory: %v", err)
	}
	notes := strings.Join(d.Notes, "\n")
	if !strings.Contains(notes, "body.json") || !strings.Contains(notes, "inwd.json") {
		t.Errorf("the notes do not say which files were read:\n%s", notes)
	}
	for cmd, want := range map[string]string{
		"curl https://h.test/ -d @../outside.txt":           "outside the curl file's folder",
		"curl https://h.test/ -d @/etc/passwd":              "/etc/passwd",
		"curl https://h.test/ -d @$OUTSIDE_DIR/outside.txt": "outside the curl file's folder",
		"curl https://h.test/ -d @link.txt":                 "outside the curl file's folder",
		"curl https://h.test/ -T /proc/self/environ":        "/proc",
		"curl https://h.test/ --data-binary @/dev/stdin":    "/dev",
		"curl https://h.test/ --data-urlencode k@fifo":      "not a regular file",
		"curl https://h.test/ -d @fifo":                     "not a regular file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := FromCurl(context.Background(), src(cmd), Options{})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("FromCurl(%q) = %v, want it refused, saying %q", cmd, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("FromCurl(%q) had not returned after 10s", cmd)
		}
	}
	if w, err := os.OpenFile(filepath.Join(cmds, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	// An inline --curl (no curl file) reads from the working directory only.
	if _, err := FromCurl(context.Background(), []Source{{Name: "--curl 1", Text: "curl https://h.test/ -d @inwd.json"}}, Options{}); err != nil {
		t.Errorf("an inline --curl reading the working directory's file: %v", err)
	}
	if _, err := FromCurl(context.Background(), []Source{{Name: "--curl 1", Text: "curl https://h.test/ -d @../cmds/body.json"}}, Options{}); err == nil {
		t.Error("an inline --curl read a file outside the working directory")
	}
}
