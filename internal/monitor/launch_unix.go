//go:build unix

package monitor

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// shellCommand runs command through /bin/sh -c in a process group of its
// own, which Stop signals as a whole.
//
// The shell stays, as the group's keeper: it runs the command in the
// background and waits for it, and on Linux it gets SIGUSR2 when ceiling
// dies, however it dies (kill -9 too), on which it kills its whole group.
// A parent-death signal reaches only the process it is set on: on a shell
// that forked (`server; echo done`, `a & b & wait`), the server would
// outlive ceiling. The command's exit status is the shell's (a signal n
// as 128+n, as shells report it).
func shellCommand(command string) *exec.Cmd {
	keeper := "trap 'kill -KILL 0' USR2\n{ " + command + "\n} &\nwait $!"
	cmd := exec.Command("/bin/sh", "-c", keeper)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd.SysProcAttr, syscall.SIGUSR2)
	return cmd
}

// argvCommand runs a program directly, in a process group of its own, as
// shellCommand runs the shell; on Linux it is killed if ceiling dies.
func argvCommand(argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd.SysProcAttr, syscall.SIGKILL)
	return cmd
}

// kill sends SIGKILL to the target's process group.
func (t *Target) kill() {
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
}

func (t *Target) stop() error {
	pgid := t.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop target: %w", err)
	}
	deadline := time.NewTimer(t.grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	// Wait for the shell, then for the rest of its group.
	done := t.done
	for !t.Exited() || groupAlive(pgid) {
		select {
		case <-deadline.C:
			err := syscall.Kill(-pgid, syscall.SIGKILL)
			<-t.done
			if err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop target: %w", err)
			}
			return nil
		case <-done:
			done = nil // from now on, poll for the rest of the group
		case <-tick.C:
		}
	}
	return nil
}

// groupAlive reports whether a process of the group pgid is still running.
// Zombies do not count: a member orphaned by the shell's exit waits for
// PID 1 to reap it, which can take a while. Without /proc (macOS, the BSDs)
// zombies cannot be told apart and count as running, until reaped.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	all, err := procfs.AllProcs()
	if err != nil {
		return true
	}
	for _, p := range all {
		if st, err := p.Stat(); err == nil && st.PGRP == pgid && !gone(st) {
			return true
		}
	}
	return false
}
