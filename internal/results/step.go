package results

import (
	"slices"

	"github.com/ceiling-dev/ceiling/internal/slo"
)

// Point is one second of a step, in series[].
type Point struct {
	// T is the end of the second, in seconds from the run's start.
	T float64 `json:"t_s"`
	// Completed counts counted exchanges that ended in this second.
	Completed int64 `json:"completed"`
	// OK, Failed and Limited split Completed.
	OK      int64 `json:"ok"`
	Failed  int64 `json:"failed"`
	Limited int64 `json:"limited"`
	// Rate is responses finished in the window per second, in this second,
	// over WindowS seconds of the window.
	Rate float64 `json:"rate"`
	// WindowS is how much of the counted window Rate covers, in seconds;
	// 0 (absent) for a second without a rate: outside the window, or
	// covering only a sliver of it, which is not extrapolated to a rate
	// (at the window's start the sliver's responses count in the next
	// second's rate, which then covers a little more than a second).
	WindowS float64 `json:"window_s,omitempty"`
	// P50, P99 and Max are response times of this second, in milliseconds.
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	// TargetCPU and TargetRSS are the monitored target's CPU (% of one
	// core) and RSS (MB) in this second, when it is watched.
	TargetCPU *float64 `json:"target_cpu_pct,omitempty"`
	TargetRSS *float64 `json:"target_rss_mb,omitempty"`
	// Histogram is this second's response times, encoded, kept by a
	// generator whose steps are to be merged (an agent, --segment), so
	// that the merged second's percentiles are exact.
	Histogram string `json:"histogram,omitempty"`
	// Errors counts this second's failures by class (timeout, refused,
	// http_5xx...), kept when the plan has events (their windows sum it).
	Errors map[string]int64 `json:"errors,omitempty"`
}

// LoginName is the name SLO terms read a step's logins under, as if they
// were a scenario ("login.p99<2s", "login.errors<5%").
const LoginName = "login"

// FiguresOf returns the figures of one scenario (by name) for SLO terms
// such as "send.p99<300ms", or the step's when name is empty; LoginName
// reads the logins when no scenario has that name. An unknown scenario has
// no samples, so its terms fail.
func (s *Step) FiguresOf(name string) slo.Figures {
	if name == "" {
		f := s.sloFigures()
		if d := s.Delivery; d != nil {
			f.Expected, f.Delivered, f.Arrived = d.Expected, d.Delivered, d.Delivered
			f.Delivery, f.DeliveryUpper = d.LatencyBounds()
			if d.AtStepEnd != nil {
				f.Delivered = *d.AtStepEnd // delivered>= judges what had arrived by the step's end
			}
		}
		return f
	}
	if s.readsLogins(name) {
		l := s.Logins
		return slo.Figures{Latency: l.LatencyMS, Completed: l.Count, Failed: l.Failed}
	}
	for _, b := range s.Scenarios {
		if b.Name == name {
			f := slo.Figures{Latency: b.LatencyMS, Completed: b.Completed, Failed: b.Failed, Limited: b.Limited}
			switch {
			case b.Repeat != nil: // counts are summed over repeats; the rate is their median
				f.Throughput = Median(b.Repeat.Values[MetricThroughput])
			case s.DurationS > 0:
				f.Throughput = float64(b.OK+b.Limited) / s.DurationS // iterations (ok or limited) per second
			}
			return f
		}
	}
	return slo.Figures{}
}

// readsLogins reports whether terms of scenario name read the step's
// logins: name is LoginName, the step has logins and no scenario of that
// name.
func (s *Step) readsLogins(name string) bool {
	return name == LoginName && s.Logins != nil &&
		!slices.ContainsFunc(s.Scenarios, func(b Breakdown) bool { return b.Name == name })
}

// sloFigures returns what SLO terms are evaluated against for this step.
func (s *Step) sloFigures() slo.Figures {
	return slo.Figures{
		Latency: s.LatencyMS, Completed: s.Completed, Failed: s.Failed, Limited: s.Limited,
		Achieved: s.AchievedRate, Target: s.TargetRate, Throughput: s.Throughput,
	}
}
