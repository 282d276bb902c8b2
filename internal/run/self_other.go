//go:build !linux

package run

// selfMemoryMB is unknown here: only Linux's /proc gives ceiling's
// resident memory as the target's is read. A soak then follows ceiling's
// Go heap alone.
func selfMemoryMB() (rss, anon float64, ok bool) { return 0, 0, false }

// selfThreads is unknown here (0).
func selfThreads() int { return 0 }
