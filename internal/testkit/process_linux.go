package testkit

import (
	"os/exec"
	"syscall"
)

// inGroup sets cmd's own process group, and SIGKILL as its parent-death
// signal: Linux sends it when the thread that started cmd ends, which in
// a Go program is when the process ends, however it ends (kill -9 too).
func inGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// killGroup sends SIGKILL to cmd's process group.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// killPid sends SIGKILL to the process pid.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
