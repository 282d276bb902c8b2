package results

import (
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// rep is one repeat's step at 100/s whose every exchange took ms.
func rep(t *testing.T, ms float64, n int64, achieved float64) Step {
	t.Helper()
	h := metrics.NewHistogram()
	for range n {
		if err := h.RecordValue(int64(ms * 1000)); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	lat := metrics.Summarize(h)
	return Step{
		Model: "open", TargetRate: 100, DurationS: 1, Sent: n, Completed: n, OK: n - 1, Failed: 1,
		Errors: map[string]int64{"timeout": 1}, AchievedRate: achieved, Throughput: achieved - 1, ErrorRate: 1 / float64(n),
		LatencyMS: lat, Histogram: enc, Series: []Point{{T: ms}}, Warnings: []string{"w"},
		Scenarios: []Breakdown{{Name: "a", Completed: n, OK: n - 1, Failed: 1, LatencyMS: lat, Histogram: enc, AvgBodyBytes: 10}},
	}
}

// Repeats combine into medians of their figures, summed counts, merged
// histograms and the spread of each figure; an interrupted repeat is left
// out.
func TestCombine(t *testing.T) {
	partial := rep(t, 500, 10, 5)
	partial.Interrupted = true
	s, err := Combine([]Step{rep(t, 20, 100, 100), rep(t, 30, 100, 98), rep(t, 22, 100, 99), partial}, []bool{true, false, true, true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Completed != 300 || s.Failed != 3 || s.Errors["timeout"] != 3 || s.Interrupted {
		t.Errorf("counts = %d completed, %d failed %v; want 300, 3, 3 timeouts", s.Completed, s.Failed, s.Errors)
	}
	if s.AchievedRate != 99 || s.Throughput != 98 {
		t.Errorf("achieved %v, throughput %v; want the medians 99, 98", s.AchievedRate, s.Throughput)
	}
	if p := s.LatencyMS.P50; p < 21.9 || p > 22.1 {
		t.Errorf("p50 = %v, want the median of 20, 30, 22: 22", p)
	}
	if m := s.LatencyMS.Max; m < 29.9 || m > 30.1 {
		t.Errorf("max = %v, want the largest, 30", m)
	}
	h, err := metrics.Decode(s.Histogram)
	if err != nil || h.TotalCount() != 300 {
		t.Errorf("merged histogram count = %v (%v), want 300", h.TotalCount(), err)
	}
	r := s.Repeat
	if r == nil || r.N != 3 || len(r.Histograms) != 3 || r.Passed != 2 || len(r.Values[MetricP50]) != 3 {
		t.Fatalf("repeat = %+v; want 3 repeats, 3 histograms, 2 passed", r)
	}
	if c := r.CoVPct[MetricAchieved]; c < 1.0 || c > 1.02 {
		t.Errorf("CoV of achieved 100, 98, 99 = %v %%, want 1.01", c)
	}
	if len(s.Series) != 3 || len(s.Warnings) != 1 {
		t.Errorf("series %d points, warnings %q; want every repeat's points, the warning once", len(s.Series), s.Warnings)
	}
	b := s.Scenarios[0]
	if b.Completed != 300 || b.Repeat == nil || b.Repeat.N != 3 || b.LatencyMS.P50 < 21.9 || b.LatencyMS.P50 > 22.1 {
		t.Errorf("scenario = %+v, want summed counts, median p50 22, 3 repeats", b)
	}
	if tp := b.Repeat.Values[MetricThroughput]; len(tp) != 3 || tp[0] != 99 {
		t.Errorf("scenario throughput values %v, want (ok+limited)/duration per repeat: 99, ...", tp)
	}
	one, _ := Combine([]Step{rep(t, 20, 10, 10)}, []bool{true})
	if one.Repeat != nil {
		t.Errorf("one repeat has a spread: %+v", one.Repeat)
	}
}

// A control that moved in one repeat (a static page 10 ms in four repeats
// and 30 ms in one) says the host was busy; one that held, or moved by
// less than a millisecond, does not.
func TestControlMoved(t *testing.T) {
	step := func(p50 ...float64) Step {
		r := &Repeat{N: len(p50), Values: map[string][]float64{MetricP50: p50, MetricP99: p50, MetricThroughput: make([]float64, len(p50))}}
		for i := range p50 {
			r.Values[MetricThroughput][i] = 10
		}
		return Step{Scenarios: []Breakdown{{Name: "static", Repeat: r}}}
	}
	s := step(10, 10.2, 30, 9.9, 10.1)
	if got := s.ControlMoved("static"); !strings.Contains(got, `host busy: the control "static" moved`) || !strings.Contains(got, "p50 30 in repeat 3") {
		t.Errorf("moved control: %q", got)
	}
	for _, held := range []Step{step(10, 10.2, 10.5, 9.9, 10.1), step(0.4, 0.5, 0.9, 0.4, 0.5)} {
		if got := held.ControlMoved("static"); got != "" {
			t.Errorf("a control that held: %q", got)
		}
	}
	if got := s.ControlMoved("other"); got != "" {
		t.Errorf("no such control: %q", got)
	}
}
