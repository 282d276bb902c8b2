//go:build !long

package cli

// longTests is false: the quick set (see long).
const longTests = false
