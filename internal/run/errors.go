package run

import (
	"errors"
	"fmt"

	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/plan"
)

// ErrUnreachable is the error of a run whose target did not answer the
// preflight request: nothing was measured.
var ErrUnreachable = errors.New("target unreachable")

// ErrInterrupted is returned by a step or a search that the context ended
// before it was done; the result holds what was measured until then.
var ErrInterrupted = errors.New("interrupted")

// InputError is a problem with what the user gave: the plan, a flag, a
// file. Nothing was sent.
type InputError struct {
	// Err says what is wrong, and where.
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// badInput returns an InputError.
func badInput(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// where names where a plan key was set: its file:line:col, or the flag that
// set it.
func where(p *plan.Plan, path string) string {
	if w := p.Where(path); w != "" {
		return w
	}
	return "--" + path
}

// ErrTargetDied is matched by the error of a step during which the command
// target the run started (monitor.command) ended on its own: the step was
// ended there, its figures kept up to then, and the run stopped after it.
var ErrTargetDied = errors.New("the target died")

// TargetDiedError says how and when the command target died. It matches
// ErrTargetDied.
type TargetDiedError struct {
	// Exit is how it ended: its exit status, or the signal that killed it.
	Exit monitor.Exit
	// Step is the index of the step it died in.
	Step int
	// When says when in the step: "1.2s into the window", "during the
	// warm-up", "after the window" (while the step drained).
	When string
}

func (e *TargetDiedError) Error() string {
	return fmt.Sprintf("the target died %s of step %d, %s: the step ended there and the run stopped", e.When, e.Step+1, e.Exit)
}

// Is makes errors.Is(err, ErrTargetDied) true.
func (e *TargetDiedError) Is(target error) bool { return target == ErrTargetDied }
