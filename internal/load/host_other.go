//go:build !linux

package load

import "time"

// hostCPU cannot read the machine's CPU time here (no /proc/stat): the
// host's load is not measured.
func hostCPU() (busy, steal float64, ok bool) { return 0, 0, false }

// peakRSS is not read here: 0, unknown.
func peakRSS() int64 { return 0 }

// threadCPU is not read here: 0, unknown.
func threadCPU() time.Duration { return 0 }
