package testkit

import (
	"os/exec"
	"testing"
)

// Group puts cmd, not started yet, in a process group of its own that
// dies with the test: the test's cleanup kills the whole group (the
// children cmd started too), and on Linux the kernel kills cmd when the
// test binary dies, however it dies (see the package comment). The test
// starts and waits for cmd itself (Run, Output, Start and Wait).
//
// The parent-death signal is tied to the thread that started cmd: Go's
// threads live as long as the process, unless a goroutine locked to its
// thread (runtime.LockOSThread) ends without unlocking it; start cmd
// from no such goroutine.
func Group(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	inGroup(cmd)
	tb.Cleanup(func() {
		if cmd.Process != nil {
			killGroup(cmd)
		}
	})
}

// Start starts cmd in a process group of its own, as Group does, and the
// test's cleanup kills the group and waits for cmd. The test may wait for
// cmd itself before it ends, but not from a goroutine that may still wait
// when the cleanup does (use Group and cmd.Start for that). A cmd that
// cannot be started fails the test.
func Start(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	inGroup(cmd)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %v: %v", cmd.Args, err)
	}
	tb.Cleanup(func() {
		killGroup(cmd)
		_ = cmd.Wait()
	})
}
