//go:build long

package load

// longTests is true: built with -tags long (engines runs every variant).
const longTests = true
