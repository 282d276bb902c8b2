//go:build !linux

package run

// soakChild: the soak's targets (a leak held by mmap, a cgroup's limit)
// are started only on Linux, where their tests run.
func soakChild() bool { return false }
