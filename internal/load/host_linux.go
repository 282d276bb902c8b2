//go:build linux

package load

import "github.com/prometheus/procfs"

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
