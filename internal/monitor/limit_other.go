//go:build !linux

package monitor

// affinity returns 0, unknown: only Linux lets ceiling read another
// process's CPU affinity here, so CPULimit falls back to the cores.
func affinity(int) int { return 0 }
