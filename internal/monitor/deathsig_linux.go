package monitor

import "syscall"

// parentDeathSignal asks Linux to SIGKILL the started process when ceiling
// dies, however it dies. The signal survives the shell's exec of the target
// (`exec server ...`); children the shell forks instead are reached only by
// Stop and KillAll, which signal the whole group.
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
