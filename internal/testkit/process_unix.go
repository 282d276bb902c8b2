//go:build unix && !linux

package testkit

import (
	"os/exec"
	"syscall"
)

// inGroup sets cmd's own process group. These systems have no
// parent-death signal: the group dies in the test's cleanup, not when the
// test binary is killed.
func inGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// killGroup sends SIGKILL to cmd's process group.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// killPid sends SIGKILL to the process pid.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
