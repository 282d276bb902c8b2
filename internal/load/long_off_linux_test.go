//go:build !long

package load

// longTests is false: the quick set, in which engines runs two of its
// four variants.
const longTests = false
