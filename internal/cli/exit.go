package cli

import (
	"errors"
	"fmt"
)

// ExitCode is the process exit status; each value has one meaning.
type ExitCode int

// The exit codes, as the README and docs/cli.md document them.
const (
	// ExitOK: the run completed and every threshold held.
	ExitOK ExitCode = 0
	// ExitThreshold: the run completed but a threshold failed.
	ExitThreshold ExitCode = 1
	// ExitBadInput: flags, plan or files were wrong; nothing was sent.
	ExitBadInput ExitCode = 2
	// ExitCannotRun: the run could not be carried out (target unreachable
	// before the first step, port in use, result not writable).
	ExitCannotRun ExitCode = 3
	// ExitCouldNotTell: compare --fail-on-regression could not tell: the
	// control moved between the runs (the host was busy), so no change
	// was called significant, nor could one be ruled out.
	ExitCouldNotTell ExitCode = 4
	// ExitInterrupted: stopped by SIGINT or SIGTERM; the partial result is written.
	ExitInterrupted ExitCode = 130
)

// codedError is an error with the exit code it should end the process with.
type codedError struct {
	code ExitCode
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// badInput marks err as a problem with the user's input (exit 2).
func badInput(format string, args ...any) error {
	return &codedError{code: ExitBadInput, err: fmt.Errorf(format, args...)}
}

// cannotRun marks err as a failure to carry out the run (exit 3).
func cannotRun(format string, args ...any) error {
	return &codedError{code: ExitCannotRun, err: fmt.Errorf(format, args...)}
}

// codeOf returns the exit code an error carries. Every error our commands
// return carries one; an error without one comes from cobra itself (an
// unknown command or flag, a wrong number of arguments) and is bad input.
func codeOf(err error) (code ExitCode, ours bool) {
	var c *codedError
	if errors.As(err, &c) {
		return c.code, true
	}
	return ExitBadInput, false
}
