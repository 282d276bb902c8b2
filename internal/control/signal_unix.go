//go:build unix

package control

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/ceiling-dev/ceiling/internal/monitor"
)

// Pause stops the target's whole process group (SIGSTOP), as a frozen
// process or a stop-the-world pause would; Resume continues it (SIGCONT).
func (t *Target) Pause() error { return signalGroup(t.cmd.Process.Pid, syscall.SIGSTOP) }

// Resume continues a paused target.
func (t *Target) Resume() error { return signalGroup(t.cmd.Process.Pid, syscall.SIGCONT) }

// Kill kills the target's process group at once (SIGKILL) and waits for
// its shell; it is then stopped for good (Stop does nothing more).
func (t *Target) Kill() error {
	t.ending.Store(true)
	err := signalGroup(t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
	t.stopOnce.Do(func() { t.life.remove(t) })
	return err
}

func signalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal the target (%v): %w", sig, err)
	}
	return nil
}

// SignalTree sends sig to process pid and every process below it (its
// children, theirs...), read from /proc: a running target ceiling did not
// start (monitor.pid). Processes that exit meanwhile are not an error.
func SignalTree(pid int, sig syscall.Signal) error {
	pids, err := treeOf(pid)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("signal %d (%v): %w", p, sig, err))
		}
	}
	return errors.Join(errs...)
}

// PauseTree stops process pid and those below it (SIGSTOP).
func PauseTree(pid int) error { return SignalTree(pid, syscall.SIGSTOP) }

// ResumeTree continues process pid and those below it (SIGCONT).
func ResumeTree(pid int) error { return SignalTree(pid, syscall.SIGCONT) }

// KillTree kills process pid and those below it (SIGKILL).
func KillTree(pid int) error { return SignalTree(pid, syscall.SIGKILL) }

// treeOf lists process pid and every process below it, from /proc.
func treeOf(pid int) ([]int, error) {
	if err := linuxOnly("signalling a process tree"); err != nil {
		return nil, err
	}
	return monitor.Tree(pid)
}
