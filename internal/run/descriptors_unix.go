//go:build unix

package run

import (
	"os"
	"syscall"
)

// descriptors returns the most file descriptors this process may hold
// open (its soft RLIMIT_NOFILE, which Go raised to the hard limit at
// start) and how many connections that leaves a step: the limit less the
// descriptors open now and a reserve (descriptorReserve) for what the run
// opens besides its connections (result files, a sink's or the live
// page's accepted connections, /proc reads). Zero for both when the limit is
// unknown or too high to matter.
func descriptors() (limit, conns int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == 0 || lim.Cur > 1<<24 {
		return 0, 0
	}
	limit = int(lim.Cur)
	return limit, max(limit-openDescriptors()-descriptorReserve(limit), 1)
}

// openDescriptors counts the process's open descriptors (64 when the
// system does not list them).
func openDescriptors() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if fds, err := os.ReadDir(dir); err == nil {
			return len(fds)
		}
	}
	return 64
}

// descriptorReserve is how many of its descriptors, out of limit, a run
// keeps from its connections: 64, or a 32nd of the limit when more, for
// its files and a sink's connections, and PageConns for a live page's.
func descriptorReserve(limit int) int { return max(64, limit/32) + PageConns }
