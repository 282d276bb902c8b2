//go:build !unix

package testkit

import (
	"os"
	"os/exec"
)

// inGroup does nothing: these systems have no process groups of the Unix
// kind; the process itself is killed in the test's cleanup.
func inGroup(*exec.Cmd) {}

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// killPid kills the process pid.
func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
