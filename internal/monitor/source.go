package monitor

import (
	"errors"
	"runtime"
	"time"
)

// Sample is one reading of a Source.
type Sample struct {
	// At is when the reading was taken.
	At time.Time
	// CPU is the cumulative CPU time (user + system) of the watched process
	// tree or cgroup. Only differences between readings mean anything: the
	// origin is arbitrary.
	CPU time.Duration
	// RSSBytes is the resident memory of the tree, or the cgroup's memory
	// use (which includes its page cache).
	RSSBytes int64
	// Threads is the number of threads in the tree; 0 when unknown (cgroup).
	Threads int
	// FDs is the number of open file descriptors in the tree; 0 when unknown.
	FDs int
	// Alive is false once the process (the tree's root) has exited or the
	// cgroup has been removed. A dead source keeps reporting its last CPU.
	Alive bool
	// Restarts counts, since the source was made, the times the tree's
	// main process (see process) ended while the tree's root lived on: a
	// server that a supervisor in the tree started again. Cumulative, as
	// CPU is; always 0 for a cgroup.
	Restarts int
}

// Source is something whose CPU and memory can be read: a process tree
// (Process) or a cgroup (Cgroup). A Source is read by one goroutine at a
// time.
type Source interface {
	// Read takes one reading. A target that has gone away is not an error:
	// the Sample says Alive false.
	Read() (Sample, error)
}

// mib is the unit of the MB figures: 2^20 bytes, as top and ps count.
const mib = 1 << 20

// linuxOnly returns nil on Linux and elsewhere an error saying that what
// (such as "watching a cgroup") needs Linux: Process and Cgroup read /proc
// and /sys/fs/cgroup, which only Linux has. The error matches
// errors.ErrUnsupported, so that a caller can carry on without the figures.
func linuxOnly(what string) error {
	if runtime.GOOS == "linux" {
		return nil
	}
	return linuxOnlyError(what)
}

// linuxOnlyError is linuxOnly's error: what needs Linux.
type linuxOnlyError string

func (e linuxOnlyError) Error() string { return string(e) + " is supported on Linux only" }

// Is makes errors.Is(err, errors.ErrUnsupported) true.
func (e linuxOnlyError) Is(target error) bool { return target == errors.ErrUnsupported }
