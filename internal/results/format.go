package results

import "fmt"

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
