package control

import "syscall"

// parentDeathSignal asks Linux to send sig to the started process when
// ceiling dies, however it dies: SIGKILL for a program run directly,
// SIGUSR2 for the shell that keeps a command's process group (it then
// kills the group: shellCommand).
func parentDeathSignal(a *syscall.SysProcAttr, sig syscall.Signal) { a.Pdeathsig = sig }
