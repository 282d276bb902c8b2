//go:build unix && !linux

package control

import "syscall"

// parentDeathSignal does nothing: only Linux has a parent-death signal.
func parentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
