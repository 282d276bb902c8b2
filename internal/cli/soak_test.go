package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ceiling soak holds the load for --for in windows of --window: the table,
// the soak's section and its answer on stdout, a line a window on stderr,
// result.json with every window, and exit 0 for a steady target. (Two
// users of the closed model: a busy machine delays them, it does not make
// their arrivals late, as it would the open model's.)
func TestSoakCommand(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 5*time.Millisecond)
	dir := t.TempDir()
	out, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "soak.html")
	// Five windows: the fewest a figure's line is fitted through
	// (soak.MinWindows).
	code, stdout, stderr := ceiling(t, context.Background(), "soak", "--url", srv.URL, "--vus", "2", "--for", "5s", "--window", "1s",
		"--warmup", "0s", "--slo", "p99<1s", "--out", out, "--html", page)
	if code != ExitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	r := readResult(t, out)
	if r.Soak == nil || len(r.Soak.Windows) < 5 || len(r.Steps) != 1 || r.Soak.SLOWindows < 5 || !r.Passed {
		t.Fatalf("result: soak %+v, %d steps, passed %v", r.Soak, len(r.Steps), r.Passed)
	}
	for _, want := range []string{"Soak: 2 users held 5 s of 5 s", "p99", "the SLO held in all"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "window 0:00:00–0:00:01") {
		t.Errorf("stderr has no line for the first window:\n%s", stderr)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "Latency over the soak") {
		t.Errorf("report %s: %v, want the soak's plots", page, err)
	}
}

// A soak's input is checked before anything runs, bad input exit 2 (what
// each problem's message is plan's TestValidate).
func TestSoakCommandInput(t *testing.T) {
	t.Parallel()
	code, _, stderr := ceiling(t, context.Background(), "soak", "--url", "http://127.0.0.1:1/", "--rate", "10,20", "--for", "1m")
	if code != ExitBadInput || !strings.Contains(stderr, "a soak holds one level") {
		t.Errorf("a soak of stairs: exit %d, stderr %q; want %d and why", code, stderr, ExitBadInput)
	}
}
