//go:build !windows

package agent

import (
	"errors"
	"syscall"
)

// alive reports whether a process of that pid runs (one of another user
// too: signal 0 is then refused, not unknown).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
