//go:build long

package compare_test

// longTests is true: built with -tags long.
const longTests = true
