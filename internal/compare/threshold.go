package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// Threshold is a hard limit on a delta, e.g. "p99:+10%": fail when B's
// p99 is more than 10 % above A's. The sign is the metric's bad direction
// (+ for latencies and errors, − for throughput), so the limit reads as
// what it forbids.
type Threshold struct {
	Metric string
	// Pct is the limit in percent, at least 0.
	Pct float64
}

// String writes t as it is parsed.
func (t Threshold) String() string {
	sign := "+"
	if !upIsWorse(t.Metric) {
		sign = "-"
	}
	return t.Metric + ":" + sign + num(t.Pct) + "%"
}

// crossed reports whether c went the bad way by more than the limit (any
// bad move from 0).
func (t Threshold) crossed(c *Change) bool {
	return c.Direction == Worse && (c.DeltaPct == nil || math.Abs(*c.DeltaPct) > t.Pct)
}

// ParseOptions returns the Options of compare's flags: --threshold (see
// ParseThresholds), --min-effect (a percentage, 0 or more) and --min-abs
// (a duration, 0 or more), or an error that says what is wrong with them.
func ParseOptions(threshold string, minEffect float64, minAbs time.Duration) (Options, error) {
	ts, err := ParseThresholds(threshold)
	if minEffect < 0 || math.IsNaN(minEffect) || math.IsInf(minEffect, 0) {
		err = errors.Join(err, fmt.Errorf("--min-effect %v: want a percentage of 0 or more, such as 5", minEffect))
	}
	if minAbs < 0 {
		err = errors.Join(err, fmt.Errorf("--min-abs %v: want a duration of 0 or more, such as 1ms", minAbs))
	}
	return Options{Thresholds: ts, MinEffect: minEffect, MinAbs: minAbs}, err
}

// ParseThresholds reads a comma-separated list such as
// "p99:+10%,throughput:-5%". It reports every malformed item at once.
func ParseThresholds(s string) ([]Threshold, error) {
	var ts []Threshold
	var errs []error
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		t, err := parseThreshold(item)
		if err != nil {
			errs = append(errs, fmt.Errorf("--threshold %q: %w", item, err))
			continue
		}
		ts = append(ts, t)
	}
	return ts, errors.Join(errs...)
}

func parseThreshold(item string) (Threshold, error) {
	name, limit, ok := strings.Cut(item, ":")
	if !ok {
		return Threshold{}, errors.New("want METRIC:±N%, e.g. p99:+10% or throughput:-5%")
	}
	name = strings.TrimSpace(name)
	if name == "errors" {
		name = results.MetricErrorRate
	}
	t := Threshold{Metric: name}
	bad := "+"
	if !upIsWorse(name) {
		bad = "-"
	}
	if !slices.Contains(Metrics, name) && !slices.Contains(StepMetrics, name) {
		return t, fmt.Errorf("unknown metric %q (want throughput, p50, p95, p99, error_rate, delivered, delivery_p50, delivery_p99, target_cpu or target_rss)", name)
	}
	limit = strings.TrimSpace(limit)
	number, pct := strings.CutSuffix(limit, "%")
	if !pct {
		return t, fmt.Errorf("want a percentage with its sign, e.g. %s:%s10%%", name, bad)
	}
	if number == "" || (number[0] != '+' && number[0] != '-') {
		return t, fmt.Errorf("give the sign of the bad direction: %s:%s%s%% (%s is worse %s)", name, bad, number, name, map[string]string{"+": "up", "-": "down"}[bad])
	}
	if number[:1] != bad {
		return t, fmt.Errorf("%s gets worse going %s: want %s:%s%s%%", name, map[string]string{"+": "up", "-": "down"}[bad], name, bad, number[1:])
	}
	v, err := strconv.ParseFloat(number[1:], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || strings.ContainsAny(number[1:], "+-") {
		return t, fmt.Errorf("want a finite percentage such as %s10%%, not %q", bad, limit)
	}
	t.Pct = v
	return t, nil
}
