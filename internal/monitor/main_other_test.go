//go:build !linux

package monitor

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines. The tests that watch real
// processes and cgroups, and the helper targets they start, are Linux's
// (main_test.go).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
