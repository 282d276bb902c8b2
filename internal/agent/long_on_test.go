//go:build long

package agent

// longTests is true: built with -tags long.
const longTests = true
