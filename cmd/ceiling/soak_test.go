//go:build linux

package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// A soak killed after some windows (SIGKILL: no chance to write again)
// leaves a result.json that holds every window it finished, says it is
// unfinished and did not pass, and says how far it got.
func TestKilledSoakKeepsItsWindows(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := ceiling(t, "soak", "--url", srv.URL, "--rate", "20", "--for", "1m", "--window", "1s", "--warmup", "0s", "--out", out, "--quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	windows := func() int {
		r, err := results.Read(out)
		if err != nil || r.Soak == nil {
			return 0
		}
		return len(r.Soak.Windows)
	}
	// Two windows: more than the last one kept. A window is in result.json
	// once the next second is counted (a second after its end).
	const some = 2
	seen := 0
	if !waitUntil(20*time.Second, func() bool { seen = windows(); return seen >= some }) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no %d windows in result.json within 20s", some)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	r, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	k := r.Soak
	if !r.Unfinished || r.Passed || r.Outcome.Status != results.StatusUnfinished || len(k.Windows) < seen || k.HeldS != k.Windows[len(k.Windows)-1].EndS || k.HeldS < float64(seen) {
		t.Errorf("after SIGKILL: unfinished %v, passed %v, status %s, %d windows (%d seen before the kill), held %g s; want unfinished, not passed, the windows kept and how far it got",
			r.Unfinished, r.Passed, r.Outcome.Status, len(k.Windows), seen, k.HeldS)
	}
}
