//go:build long

package sweep

// longTests is true: built with -tags long.
const longTests = true
