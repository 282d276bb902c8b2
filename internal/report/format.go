package report

import (
	"fmt"
	"math"
)

// Millis formats a latency in milliseconds with about three significant
// digits: "0.42 ms", "8.6 ms", "42.5 ms", "482 ms", "3.90 s".
func Millis(ms float64) string {
	switch {
	case ms <= 0:
		return "0 ms"
	case ms < 1:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f ms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	case ms < 10000:
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}

// Rate formats a rate per second: "480/s", "12.5/s".
func Rate(r float64) string {
	if r < 100 && r != math.Trunc(r) {
		return fmt.Sprintf("%.1f/s", r)
	}
	return fmt.Sprintf("%.0f/s", r)
}

// Percent formats a fraction in [0, 1] as a percentage: "0%", "0.13%", "87.0%".
func Percent(f float64) string {
	p := 100 * f
	switch {
	case p == 0:
		return "0%"
	case p < 1:
		return fmt.Sprintf("%.2f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}
