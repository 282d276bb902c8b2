//go:build race

package cli

// raceDetector says the tests run under the race detector.
const raceDetector = true
