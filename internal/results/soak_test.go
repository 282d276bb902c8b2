package results

import (
	"slices"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// window is a window of n answers of ms milliseconds each, failed of
// them failed, from start for d seconds.
func soakWindow(t *testing.T, start, d float64, n, failed int64, ms int64, rss, cpu float64) SoakWindow {
	t.Helper()
	h := metrics.NewHistogram()
	for range n {
		if err := h.RecordValue(ms * 1000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return SoakWindow{StartS: start, EndS: start + d, Seconds: int(d), Completed: n, OK: n - failed, Failed: failed,
		Errors: map[string]int64{"http_5xx": failed}, Histogram: enc, LatencyMS: metrics.Summarize(h),
		Target: &WindowTarget{CPUPct: &cpu, RSSMB: &rss, Metrics: map[string]float64{"queue": cpu}}}
}

// Two windows merge into one whose counts are summed, whose percentiles
// are read from the merged histogram, whose CPU and metrics are weighted
// by time and whose memory is the later one's.
func TestWindowAbsorb(t *testing.T) {
	a := soakWindow(t, 0, 60, 1000, 10, 10, 100, 20)
	b := soakWindow(t, 60, 60, 1000, 0, 30, 120, 40)
	if err := a.Absorb(&b); err != nil {
		t.Fatal(err)
	}
	if a.StartS != 0 || a.EndS != 120 || a.Seconds != 120 || a.Completed != 2000 || a.Failed != 10 || a.Errors["http_5xx"] != 10 {
		t.Errorf("merged counts = %+v", a)
	}
	if a.Throughput != 1990.0/120 || a.ErrorRate != 10.0/2000 {
		t.Errorf("merged throughput %v, error rate %v, want %v, %v", a.Throughput, a.ErrorRate, 1990.0/120, 10.0/2000)
	}
	if a.LatencyMS.P50 < 9.9 || a.LatencyMS.P50 > 10.1 || a.LatencyMS.P99 < 29.9 || a.LatencyMS.P99 > 30.1 {
		t.Errorf("merged latency %+v, want p50 10 ms and p99 30 ms (read from the merged histogram)", a.LatencyMS)
	}
	if *a.Target.CPUPct != 30 || *a.Target.RSSMB != 120 || a.Target.Metrics["queue"] != 30 {
		t.Errorf("merged target %+v, want CPU 30, RSS 120 (the later), queue 30", a.Target)
	}
}

// A soak fails when a DRIFTING figure's line reaches its limit within the
// horizon, or the SLO broke in a window; a drift that reaches its limit
// only beyond the horizon, or a STABLE figure, does not fail it.
func TestSoakReasons(t *testing.T) {
	rss := Limit{Figure: "target.rss_mb", Value: 512, Above: true, Of: "the cgroup's memory limit"}
	drift := func(within bool) Trend {
		return Trend{Figure: "target.rss_mb", Name: "target RSS", Unit: "MB", Verdict: Drifting, Why: "+14.2 MB/h ± 1.1",
			Projection: &Projection{Limit: rss, AtS: 23 * 3600, InS: 15 * 3600, WithinHorizon: within}}
	}
	tests := []struct {
		name  string
		soak  Soak
		kinds []string
	}{
		{"stable", Soak{Trends: []Trend{{Figure: "p99_ms", Verdict: Stable}}}, nil},
		{"drift beyond the horizon", Soak{Trends: []Trend{drift(false)}}, nil},
		{"drift within the horizon", Soak{HorizonS: 24 * 3600, Trends: []Trend{drift(true)}}, []string{ReasonSoakDrift}},
		{"SLO broken in a window", Soak{SLOWindows: 480, SLOBrokenCount: 3, SLOBroken: []SLOBreak{{StartS: 3720, EndS: 3780, Terms: []string{"p99<200ms"}}}}, []string{ReasonSoakSLO}},
	}
	for _, tt := range tests {
		r := &Result{Schema: Schema, Steps: []Step{}, Soak: &tt.soak}
		r.Judge(DefaultRules)
		var kinds []string
		for _, rs := range r.Outcome.Reasons {
			kinds = append(kinds, rs.Kind)
		}
		if !slices.Equal(kinds, tt.kinds) || r.Passed != (len(tt.kinds) == 0) {
			t.Errorf("%s: outcome %+v, want reasons %v", tt.name, r.Outcome, tt.kinds)
		}
		for _, rs := range r.Outcome.Reasons {
			t.Logf("%s: %s", tt.name, rs.Text)
		}
	}
}
