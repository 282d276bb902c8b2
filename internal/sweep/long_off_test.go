//go:build !long

package sweep

// longTests is false: the quick set (see long).
const longTests = false
