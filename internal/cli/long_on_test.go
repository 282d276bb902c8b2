//go:build long

package cli

// longTests is true: built with -tags long.
const longTests = true
