//go:build unix

package testkit

import (
	"os/exec"
	"syscall"
)

// inGroup sets cmd's own process group and, on Linux, its parent-death
// signal (parentDeath).
func inGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	parentDeath(cmd.SysProcAttr)
}

// killGroup sends SIGKILL to cmd's process group.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// killPid sends SIGKILL to the process pid.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
