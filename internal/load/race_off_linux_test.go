//go:build !race && linux

package load

// raceOn says the tests run under the race detector, which slows an
// in-process server past what some timing tests measure.
const raceOn = false
