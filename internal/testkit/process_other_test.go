//go:build !linux

package testkit

import "testing"

func TestStartedProcessDiesWithTestBinary(t *testing.T) {
	t.Skip("only Linux has a parent-death signal: elsewhere a started process dies in the test's cleanup, not when the test binary is killed")
}
