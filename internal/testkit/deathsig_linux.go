package testkit

import "syscall"

// parentDeath sets SIGKILL as the parent-death signal: Linux sends it when
// the thread that started the process ends, which in a Go program is when
// the process ends, however it ends (kill -9 too).
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
