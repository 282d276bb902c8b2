//go:build linux

package control

import (
	"testing"
	"time"
)

// A target that ends on its own says how (its exit status, the signal
// that killed it, or the signal its shell reports with 128+n); one that
// ceiling ended (Stop, Kill) did not die.
func TestTargetDied(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, command string
		end           func(*Target) error // ceiling's own ending, or nil: it ends on its own
		want          string
	}{
		{"exit status", "sleep 0.1; exit 3", nil, "exited with status 3"},
		{"clean exit", "sleep 0.1", nil, "exited with status 0"},
		{"the shell killed", "sleep 0.1; kill -9 $$", nil, "killed by SIGKILL"},
		{"its command killed", "sleep 30 & p=$!; sleep 0.1; kill -9 $p; wait $p", nil, "killed by SIGKILL (its shell's exit status 137)"},
		{"its command terminated", "sleep 30 & p=$!; sleep 0.1; kill $p; wait $p", nil, "killed by SIGTERM (its shell's exit status 143)"},
		{"stopped by ceiling", "sleep 30", (*Target).Stop, ""},
		{"killed by an event", "sleep 30", (*Target).Kill, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := launch(t, LaunchConfig{Command: c.command})
			if e, ok := tg.Died(); ok {
				t.Errorf("Died() of a running target = %v, true; want false", e)
			}
			if c.end != nil {
				time.Sleep(50 * time.Millisecond)
				if err := c.end(tg); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-tg.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the target did not end within 5s")
			}
			if got := died(tg); got != c.want {
				t.Errorf("Died() = %q, want %q", got, c.want)
			}
			if err := tg.Stop(); err != nil {
				t.Errorf("Stop() after the end = %v", err)
			}
			if got := died(tg); got != c.want {
				t.Errorf("Died() after Stop = %q, want %q still", got, c.want)
			}
		})
	}
}

// died is how tg died, "" when it did not.
func died(tg *Target) string {
	if e, ok := tg.Died(); ok {
		return e.String()
	}
	return ""
}
