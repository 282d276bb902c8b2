package cli

import (
	"context"
	"strings"
	"testing"
)

// Bad demo-target flags are bad input (exit 2) with a message naming the
// flag and saying why; nothing is served.
func TestDemoTargetBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--sync", "sometimes", "--store", "file"}, []string{"--sync", `"sometimes"`, "normal", "full"}},
		{[]string{"--sync", "sometimes"}, []string{"--sync", `"sometimes"`}},
		{[]string{"--store", "disk"}, []string{"--store", `"disk"`, "memory or file"}},
		{[]string{"--sync", "full"}, []string{"--sync", "--store file"}},
		{[]string{"--job-lanes", "0"}, []string{"--job-lanes 0", "at least 1"}},
		{[]string{"--flood-burst", "-5"}, []string{"--flood-burst -5"}},
		{[]string{"--flood-rate", "0"}, []string{"--flood-rate 0", "below 0 for no brake"}},
		{[]string{"--flood-rate", "NaN"}, []string{"--flood-rate NaN"}},
		{[]string{"--webhook", "slack.example/hook"}, []string{"--webhook", "http://"}},
		{[]string{"--store", "disk", "--job-lanes", "-1"}, []string{"--store", "--job-lanes"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"demo-target", "--addr", "127.0.0.1:0"}, tt.args...)
			code, _, stderr := ceiling(t, context.Background(), args...)
			if code != ExitBadInput {
				t.Fatalf("exit = %d, want %d; stderr:\n%s", code, ExitBadInput, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q, want it to mention %s", stderr, w)
				}
			}
			if strings.Contains(stderr, "serving on") {
				t.Errorf("stderr = %q: served despite bad flags", stderr)
			}
		})
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
