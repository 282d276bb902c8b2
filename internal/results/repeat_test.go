package results

import (
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/slo"
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
	return Step{Figures: Figures{
		Model: "open", TargetRate: 100, DurationS: 1, Sent: n, Completed: n, OK: n - 1, Failed: 1,
		Errors: map[string]int64{"timeout": 1}, AchievedRate: achieved, Throughput: achieved - 1, ErrorRate: 1 / float64(n),
		LatencyMS: lat, Histogram: enc, Series: []Point{{T: ms}}, Warnings: []string{"w"},
		Scenarios: []Breakdown{{Name: "a", Completed: n, OK: n - 1, Failed: 1, LatencyMS: lat, Histogram: enc, AvgBodyBytes: 10}},
	}}
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
	checkCombinedFigures(t, s)
	checkCombinedRepeat(t, s)
	one, _ := Combine([]Step{rep(t, 20, 10, 10)}, []bool{true})
	if one.Repeat != nil {
		t.Errorf("one repeat has a spread: %+v", one.Repeat)
	}
}

// checkCombinedFigures checks the step TestCombine's three whole repeats
// combine into: summed counts, medians of the rates and percentiles, the
// largest maximum, merged histograms, the last repeat's points.
func checkCombinedFigures(t *testing.T, s Step) {
	t.Helper()
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
	if len(s.Series) != 1 || len(s.Warnings) != 1 {
		t.Errorf("series %d points, warnings %q; want the last repeat's points, the warning once", len(s.Series), s.Warnings)
	}
}

// checkCombinedRepeat checks the spread of TestCombine's three whole
// repeats, of the step and of its scenario.
func checkCombinedRepeat(t *testing.T, s Step) {
	t.Helper()
	r := s.Repeat
	if r == nil || r.N != 3 || len(r.Histograms) != 3 || r.Passed != 2 || len(r.Values[MetricP50]) != 3 {
		t.Fatalf("repeat = %+v; want 3 repeats, 3 histograms, 2 passed", r)
	}
	if c := r.CoVPct[MetricAchieved]; c < 1.0 || c > 1.02 {
		t.Errorf("CoV of achieved 100, 98, 99 = %v %%, want 1.01", c)
	}
	b := s.Scenarios[0]
	if b.Completed != 300 || b.Repeat == nil || b.Repeat.N != 3 || b.LatencyMS.P50 < 21.9 || b.LatencyMS.P50 > 22.1 {
		t.Errorf("scenario = %+v, want summed counts, median p50 22, 3 repeats", b)
	}
	if tp := b.Repeat.Values[MetricThroughput]; len(tp) != 3 || tp[0] != 99 {
		t.Errorf("scenario throughput values %v, want (ok+limited)/duration per repeat: 99, ...", tp)
	}
}

// Fixes from review: a scenario's throughput over repeats is the median
// rate (its counts are summed); Status4xx folds over repeats; delivery
// latency terms judge what arrived at all, not only by the step's end; a
// scenario's term skips the steps where another ran alone (load.each); a
// step in which no user logged in is INVALID, not OVERLOADED.
func TestReviewFixes(t *testing.T) {
	a, b := rep(t, 20, 100, 100), rep(t, 20, 100, 100)
	a.Status4xx, b.Status4xx = 404, 401
	s, err := Combine([]Step{a, b, rep(t, 20, 100, 100)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := s.FiguresOf("a"); f.Throughput != 99 {
		t.Errorf("scenario throughput over 3 repeats = %v, want the median rate 99", f.Throughput)
	}
	if s.Status4xx != -1 {
		t.Errorf("status_4xx over 404 and 401 = %d, want -1", s.Status4xx)
	}

	zero := int64(0)
	late := Step{Figures: Figures{Completed: 10, Delivery: &Delivery{Expected: 100, Delivered: 100, AtStepEnd: &zero, LatencyMS: metrics.Latency{P99: 2100}}}}
	r := Result{Steps: []Step{late}}
	terms, _ := slo.Parse("delivery_p99<60s")
	r.Evaluate(terms)
	if !r.Thresholds[0].OK {
		t.Errorf("delivery_p99<60s with every id delivered (none by the step's end) failed")
	}

	each := Result{Steps: []Step{
		{Figures: Figures{Index: 0, Scenario: "a", Completed: 10, Scenarios: []Breakdown{{Name: "a", Completed: 10, LatencyMS: metrics.Latency{P99: 5}}}}},
		{Figures: Figures{Index: 1, Scenario: "b", Completed: 10, Scenarios: []Breakdown{{Name: "b", Completed: 10, LatencyMS: metrics.Latency{P99: 900}}}}},
	}}
	terms, _ = slo.Parse("a.p99<500ms")
	each.Evaluate(terms)
	if !each.Thresholds[0].OK || each.Thresholds[0].Value != 5 || len(each.noSamples) != 0 {
		t.Errorf("a.p99<500ms with each: %+v, no-sample findings %q; want it judged on a's step alone", each.Thresholds[0], each.noSamples)
	}

	nobody := Result{Steps: []Step{{Figures: Figures{Logins: &Logins{Count: 12, Failed: 12, ByClass: map[string]int64{"http_4xx": 12}}}}}}
	nobody.Judge(DefaultRules)
	if v := nobody.Steps[0]; v.Verdict != Invalid || !strings.Contains(v.VerdictReason, "no user logged in: all 12 login attempts failed (http_4xx 12)") {
		t.Errorf("no login: verdict %s (%s), want INVALID naming the logins", v.Verdict, v.VerdictReason)
	}
}
