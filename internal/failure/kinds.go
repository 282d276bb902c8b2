package failure

import "errors"

// InputError is a problem with what the user gave: the plan, a flag, a
// file. Nothing was sent.
type InputError struct {
	// Err says what is wrong, and where.
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ErrInterrupted is returned by a step, a search, a sweep or a deployment
// that the context ended before it was done; the result holds what was
// measured until then.
var ErrInterrupted = errors.New("interrupted")

// ErrUnreachable is the error of a run whose target did not answer the
// preflight request: nothing was measured.
var ErrUnreachable = errors.New("target unreachable")

// ErrRefused is matched by the error of a search or a sweep whose preflight
// saw the target refuse every scenario's request with a 4xx: nothing would
// be measured but refusals, level after level, so it stopped before the
// first step.
var ErrRefused = errors.New("stopped before the first step: there would be nothing to measure but refusals")

// ErrTargetDied is matched by the error of a step during which the command
// target the run started (monitor.command) ended on its own: the step was
// ended there, its figures kept up to then, and the run stopped after it.
var ErrTargetDied = errors.New("the target died")

// ErrAgentLost is matched by the error of a step during which an agent
// stopped answering: the step is INVALID and the run stops (exit 3), with
// every finished step kept.
var ErrAgentLost = errors.New("agent lost")

// ErrEventFailed is matched by the error of a step during which an event
// marked required failed: the step is kept and the run stops (exit 3).
var ErrEventFailed = errors.New("a required event failed")
