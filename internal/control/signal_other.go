//go:build !unix

package control

import (
	"errors"
	"syscall"
)

// Pause needs POSIX signals: not on this system.
func (t *Target) Pause() error { return errors.ErrUnsupported }

// Resume needs POSIX signals: not on this system.
func (t *Target) Resume() error { return errors.ErrUnsupported }

// Kill kills the target's shell at once (Windows cannot reach the rest of
// its group) and waits for it.
func (t *Target) Kill() error {
	t.ending.Store(true)
	t.kill()
	<-t.done
	t.stopOnce.Do(func() { t.life.remove(t) })
	return nil
}

// SignalTree needs POSIX signals and /proc: not on this system.
func SignalTree(int, syscall.Signal) error { return errors.ErrUnsupported }

// PauseTree needs POSIX signals: not on this system.
func PauseTree(int) error { return errors.ErrUnsupported }

// ResumeTree needs POSIX signals: not on this system.
func ResumeTree(int) error { return errors.ErrUnsupported }

// KillTree needs POSIX signals: not on this system.
func KillTree(int) error { return errors.ErrUnsupported }
