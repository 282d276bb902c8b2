package report

import (
	"fmt"
	"github.com/ceiling-dev/ceiling/internal/results"
	"math"
	"strconv"
	"strings"
)

// Millis formats a latency in milliseconds (results.Millis): "0.42 ms",
// "8.6 ms", "482 ms", "3.90 s".
var Millis = results.Millis

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

// sig3 formats v with three significant digits and no exponent: 0.535,
// 5.35, 53.5, 535, 5350.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r := round3(v)
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(r)))))
	return strconv.FormatFloat(r, 'f', decimals, 64)
}

// round3 rounds v to three significant digits, so that 999.7 becomes 1000
// (printed without decimals, or as the next unit), not 999.7.
func round3(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// MetricValue formats a scraped Prometheus value by its name's unit suffix
// (the Prometheus naming convention): a name ending in _seconds (or
// _seconds_total, as a rate) is a duration, "53.5 µs", "8.20 ms", "1.50 s";
// one ending in _bytes (or _bytes_total) a size in SI units, "512 B",
// "8.50 KB", "1.20 MB"; anything else a plain number, whole numbers below
// 100,000 as they are and other values with three significant digits,
// "0.535", "412", "1.23M". name may carry labels: `x_seconds{quantile="0.99"}`.
func MetricValue(name string, v float64) string {
	if i := strings.IndexByte(name, '{'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, "_total")
	a := math.Abs(round3(v))
	switch {
	case v == 0:
		return "0"
	case strings.HasSuffix(name, "_seconds"):
		switch {
		case a < 1e-3:
			return sig3(v*1e6) + " µs"
		case a < 1:
			return sig3(v*1e3) + " ms"
		}
		return sig3(v) + " s"
	case strings.HasSuffix(name, "_bytes"):
		for _, u := range []struct {
			scale float64
			name  string
		}{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
			if a >= u.scale {
				return sig3(v/u.scale) + " " + u.name
			}
		}
		return sig3(v) + " B"
	case a < 1e5 && v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	for _, u := range []struct {
		scale float64
		name  string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e5, "k"}} {
		if a >= u.scale {
			return sig3(v/u.scale) + u.name
		}
	}
	return sig3(v)
}
