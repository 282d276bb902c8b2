//go:build long

package dashboard

// longTests is true: built with -tags long.
const longTests = true
