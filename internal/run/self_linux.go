package run

import (
	"os"
	"strconv"
	"strings"
)

// selfMemoryMB is ceiling's own resident memory in MB (2^20 bytes), as
// the target's is read, and the part of it no file backs (resident less
// shared pages), from /proc/self/statm.
func selfMemoryMB() (rss, anon float64, ok bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0, false
	}
	resident, err1 := strconv.ParseInt(f[1], 10, 64)
	shared, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	mb := func(pages int64) float64 { return float64(pages*int64(os.Getpagesize())) / (1 << 20) }
	return mb(resident), mb(resident - shared), true
}

// selfThreads is ceiling's number of threads, from /proc/self/status; 0
// when it cannot be read.
func selfThreads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n
		}
	}
	return 0
}
