//go:build !unix

package control

import "os"

// exitOf says how a process ended: with its exit status. Windows has no
// signals: a process ended by TerminateProcess (Stop, Kill, or a job
// object's memory limit) has the exit code it was given.
func exitOf(state *os.ProcessState, _ bool) Exit {
	if state == nil {
		return Exit{Known: true, Code: -1, Signal: "an unknown cause"}
	}
	return Exit{Known: true, Code: state.ExitCode()}
}
