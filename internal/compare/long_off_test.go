//go:build !long

package compare_test

// longTests is false: the quick set (see long).
const longTests = false
