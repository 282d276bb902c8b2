//go:build unix

package control

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitOf says how a process ended. A POSIX shell whose command was killed
// by signal n exits with status 128+n (and prints "Killed"): for a shell
// (shell true), such a status is taken as that signal's.
func exitOf(state *os.ProcessState, shell bool) Exit {
	if state == nil {
		return Exit{Known: true, Code: -1, Signal: "an unknown cause"}
	}
	e := Exit{Known: true, Code: state.ExitCode()}
	ws, ok := state.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		e.Signal = signalName(ws.Signal())
	case shell && e.Code > 128 && e.Code <= 128+64 && unix.SignalName(syscall.Signal(e.Code-128)) != "":
		e.Signal, e.Shell = signalName(syscall.Signal(e.Code-128)), true
	}
	return e
}

// signalName names a signal with its SIG prefix ("SIGKILL"), or by number
// when it has no name.
func signalName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(s))
}
