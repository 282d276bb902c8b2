package cli

import (
	"errors"
	"testing"
)

// The demo's exit code is its search's: a threshold its second act
// (--events, the restart) failed is what the act shows, and does not turn
// a found edge into exit 1; an act that could not run, or was
// interrupted, still ends the demo with its code.
func TestDemoActOutcome(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want ExitCode
	}{
		{"passed", nil, ExitOK},
		{"a threshold failed", &codedError{code: ExitThreshold, err: errors.New("a threshold failed")}, ExitOK},
		{"could not run", cannotRun("demo events: %w", errors.New("port in use")), ExitCannotRun},
		{"interrupted", &codedError{code: ExitInterrupted, err: errors.New("interrupted")}, ExitInterrupted},
	} {
		got := ExitOK
		if err := actOutcome(tt.err); err != nil {
			got, _ = codeOf(err)
		}
		if got != tt.want {
			t.Errorf("%s: actOutcome(%v) exits %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}
