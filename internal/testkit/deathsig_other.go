//go:build unix && !linux

package testkit

import "syscall"

// parentDeath does nothing: these systems have no parent-death signal, and
// the group dies in the test's cleanup, not when the test binary is killed.
func parentDeath(*syscall.SysProcAttr) {}
