//go:build race

package results

// raceOn: the race detector's sync.Pool drops a share of what is put back,
// so buffers a pool keeps are made again now and then.
const raceOn = true
