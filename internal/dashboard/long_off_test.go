//go:build !long

package dashboard

// longTests is false: the quick set (see long).
const longTests = false
