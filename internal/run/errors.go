package run

import (
	"github.com/ceiling-dev/ceiling/internal/plan"

	"errors"
	"fmt"
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
