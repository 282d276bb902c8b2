//go:build !long

package agent

// longTests is false: the quick set (see long).
const longTests = false
