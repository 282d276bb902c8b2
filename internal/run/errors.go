package run

import (
	"fmt"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
)

// badInput returns a failure.InputError.
func badInput(format string, args ...any) error {
	return &failure.InputError{Err: fmt.Errorf(format, args...)}
}

// where names where a plan key was set: its file:line:col, or the flag that
// set it.
func where(p *plan.Plan, path string) string {
	if w := p.Where(path); w != "" {
		return w
	}
	return "--" + path
}

// TargetDiedError says how and when the command target died. It matches
// failure.ErrTargetDied.
type TargetDiedError struct {
	// Exit is how it ended: its exit status, or the signal that killed it.
	Exit control.Exit
	// Step is the index of the step it died in.
	Step int
	// When says when in the step: "1.2s into the window", "during the
	// warm-up", "after the window" (while the step drained).
	When string
}

func (e *TargetDiedError) Error() string {
	return fmt.Sprintf("the target died %s of step %d, %s: the step ended there and the run stopped", e.When, e.Step+1, e.Exit)
}

// Is makes errors.Is(err, failure.ErrTargetDied) true.
func (e *TargetDiedError) Is(target error) bool { return target == failure.ErrTargetDied }
