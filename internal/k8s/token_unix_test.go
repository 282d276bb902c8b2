//go:build unix

package k8s

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// --token-file is read through a limit: a pipe that never ends is
// refused at once, naming the file and the limit.
func TestFlagsTokenFileBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	go func() { w.Write([]byte(strings.Repeat("x", 100<<10))) }() // and it stays open
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	f, args, dash := parse(t, "--image", "ceiling:dev", writeFile(t, "plan.yaml", testPlan), "--agents", "2", "--token-file", path)
	done := make(chan error, 1)
	go func() {
		_, err := f.Options(args, dash)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "64 KiB") {
			t.Errorf("Options(--token-file an endless pipe) = %v, want an error naming it and the limit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Options(--token-file an endless pipe) had not returned after 10s")
	}
}
