package control

import "fmt"

// Exit is how a launched target's process ended.
type Exit struct {
	// Known is true once the process has ended and been reaped.
	Known bool
	// Code is its exit status; -1 when a signal ended it (Signal).
	Code int
	// Signal names the signal that ended it ("SIGKILL"), or "" when it
	// exited. When Shell is set, the shell running the command exited
	// with 128+n and the signal is its command's.
	Signal string
	Shell  bool
}

// String says how it ended: "exited with status 1", "killed by SIGKILL",
// "killed by SIGKILL (its shell's exit status 137)".
func (e Exit) String() string {
	switch {
	case !e.Known:
		return "still running"
	case e.Signal != "" && e.Shell:
		return fmt.Sprintf("killed by %s (its shell's exit status %d)", e.Signal, e.Code)
	case e.Signal != "":
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}
