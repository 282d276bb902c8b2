//go:build !race

package testkit

// race says the binary was built with the race detector.
const race = false
