//go:build !linux

package run

// selfRSSMB is unknown here: only Linux's /proc gives ceiling's resident
// memory as the target's is read. A soak then follows ceiling's Go heap
// alone.
func selfRSSMB() (float64, bool) { return 0, false }
