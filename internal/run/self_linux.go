package run

import (
	"os"
	"strconv"
	"strings"
)

// selfRSSMB is ceiling's own resident memory in MB (2^20 bytes), from
// /proc/self/statm, as the target's is read.
func selfRSSMB() (float64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(pages*int64(os.Getpagesize())) / (1 << 20), true
}
