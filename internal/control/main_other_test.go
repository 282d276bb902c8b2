//go:build !linux

package control

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines. The tests that launch real
// targets, and the helper targets they start, are Linux's (main_test.go).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
