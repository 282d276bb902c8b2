//go:build !race

package results

// raceOn is false: sync.Pool keeps what is put back.
const raceOn = false
