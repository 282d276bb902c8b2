package cli

import (
	"context"
	"strings"
	"testing"
)

// Bad demo-target flags are bad input (exit 2) with a message naming the
// flag (each problem is package demo's to say); nothing is served.
func TestDemoTargetBadFlags(t *testing.T) {
	t.Parallel()
	code, _, stderr := ceiling(t, context.Background(), "demo-target", "--addr", "127.0.0.1:0", "--store", "disk", "--job-lanes", "-1")
	if code != ExitBadInput || !strings.Contains(stderr, "--store") || !strings.Contains(stderr, "--job-lanes") || strings.Contains(stderr, "serving on") {
		t.Errorf("exit %d, stderr %q; want 2 naming both flags, nothing served", code, stderr)
	}
}

// Good flags serve: one line on stderr, then the command returns when its
// context ends.
func TestDemoTargetServes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, stderr := ceiling(t, ctx, "demo-target", "--addr", "127.0.0.1:0", "--store", "file", "--sync", "full",
		"--data-dir", t.TempDir(), "--webhook", "http://127.0.0.1:1/hook", "--job-lanes", "2", "--flood-rate", "-1", "--flood-burst", "10")
	if code != ExitOK || !strings.HasPrefix(stderr, "ceiling demo-target: serving on http://127.0.0.1:") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit = %d, stderr %q; want 0 and one line: serving on …", code, stderr)
	}
}
