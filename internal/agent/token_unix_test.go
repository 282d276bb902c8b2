//go:build unix

package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// A token file is read through a limit whatever it is: /dev/zero, or a
// pipe that never ends, is refused at once, naming the file and the
// limit; a token in a pipe is read.
func TestReadTokenBounded(t *testing.T) {
	within := func(path string) (string, error) {
		t.Helper()
		type read struct {
			token string
			err   error
		}
		done := make(chan read, 1)
		go func() {
			token, err := ReadToken(context.Background(), path)
			done <- read{token, err}
		}()
		select {
		case r := <-done:
			return r.token, r.err
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadToken(%s) had not returned after 10s", path)
		}
		return "", nil
	}
	if _, err := within("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("ReadToken(/dev/zero) = %v, want an error naming it and the limit", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	go func() { w.Write([]byte(strings.Repeat("x", 100<<10))) }() // and it stays open
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := within(path); err == nil || !strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("ReadToken(an endless pipe) = %v, want an error naming the limit", err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	go func() { w2.Write([]byte("0123456789abcdef0123\n")); w2.Close() }()
	if token, err := within(fmt.Sprintf("/dev/fd/%d", r2.Fd())); err != nil || token != "0123456789abcdef0123" {
		t.Errorf("ReadToken(a pipe) = %q, %v", token, err)
	}
}
