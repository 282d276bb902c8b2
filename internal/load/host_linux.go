//go:build linux

package load

import (
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// hostCPU returns the CPU time every process of the machine has used so
// far (user, nice, system, interrupts), and the time the hypervisor took
// from this machine's virtual CPUs (steal), in seconds summed over its
// CPUs, from /proc/stat; ok is false when it cannot be read.
func hostCPU() (busy, steal float64, ok bool) {
	st, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, false
	}
	s, err := st.Stat()
	if err != nil {
		return 0, 0, false
	}
	c := s.CPUTotal
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ, c.Steal, true
}

// peakRSS returns the most resident memory this process has held
// (VmHWM), in bytes; 0 when it cannot be read.
func peakRSS() int64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return int64(st.VmHWM)
}

// threadCPU returns the CPU time the calling OS thread has used (the
// caller locked its goroutine to it); 0 when it cannot be read.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is RUSAGE_THREAD (Linux): the calling thread's usage.
const rusageThread = 1
