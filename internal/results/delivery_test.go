package results

import (
	"slices"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/slo"
)

// withDelivery is step(rate, 1 ms) over 1 s, whose target accepted
// expected ids, delivered atEnd of them by the step's end, with a backlog
// of start and end ids at the window's start and end.
func withDelivery(rate float64, expected, atEnd, start, end int64) Step {
	s := step(rate, 1)
	s.Delivery = &Delivery{Expected: expected, Delivered: expected, AtStepEnd: &atEnd, BacklogStart: &start, BacklogEnd: &end}
	return s
}

// A step whose backlog grew through its window accepted faster than it
// delivered: OVERLOADED however fast its acks, even with everything
// delivered after the drain; a backlog that held (the posts in flight at
// each end) is no growth, nor is a few ids' jitter. Deliveries by the
// step's end short of the SLO's delivered>= make it STRESSED at least.
func TestDeliveryVerdicts(t *testing.T) {
	rules := DefaultRules
	rules.MinDelivered = 0.95
	tests := []struct {
		name    string
		step    Step
		verdict string
		reasons []string
	}{
		{"kept up", withDelivery(160, 160, 152, 8, 8), Healthy, []string{}},
		{"jitter", withDelivery(160, 160, 158, 2, 6), Healthy, []string{}},
		{"fell behind", withDelivery(160, 160, 80, 163, 243), Overloaded, []string{"delivery fell behind: backlog 163 → 243 (accepted 160/s, delivered 80.0/s)"}},
		{"short of the SLO", withDelivery(100, 100, 90, 10, 12), Stressed, []string{"delivered 90.0% by the step's end < 95%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Steps: []Step{tt.step}}
			r.Judge(rules)
			s := r.Steps[0]
			if s.Verdict != tt.verdict || !slices.Equal(s.VerdictReasons, tt.reasons) {
				t.Errorf("verdict = %s %q, want %s %q", s.Verdict, s.VerdictReasons, tt.verdict, tt.reasons)
			}
		})
	}
	// Without a delivered>= term, falling short by the step's end is no
	// verdict of its own.
	r := &Result{Steps: []Step{withDelivery(100, 100, 90, 10, 12)}}
	r.Judge(DefaultRules)
	if v := r.Steps[0].Verdict; v != Healthy {
		t.Errorf("verdict without a delivered>= term = %s, want %s", v, Healthy)
	}
}

// Repeats add up their backlogs, so that the step's growth is theirs
// together.
func TestCombineSumsBacklogs(t *testing.T) {
	a, b := withDelivery(100, 100, 100, 1, 31), withDelivery(100, 100, 100, 2, 42)
	c, err := Combine([]Step{a, b}, []bool{true, true})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Delivery; d.BacklogStart == nil || *d.BacklogStart != 3 || *d.BacklogEnd != 73 {
		t.Errorf("combined backlog %v → %v, want 3 → 73", d.BacklogStart, d.BacklogEnd)
	}
}

// A delivery percentile that missing ids reach is a lower bound: the
// threshold fails on it, says so (at_least), and shows the failing step's
// value rather than a passing step's larger exact one.
func TestThresholdAtLeast(t *testing.T) {
	exact := withDelivery(100, 100, 100, 0, 0)
	exact.Delivery.LatencyMS.P99 = 15000
	missing := withDelivery(160, 3200, 1400, 160, 1800)
	missing.Delivery.Delivered = 1788
	missing.Delivery.Undelivered = 1412
	missing.Delivery.LatencyMS.P50, missing.Delivery.LatencyMS.P99 = 8000, 13700
	missing.Delivery.LatencyUpperMS = map[string]float64{"p50": 12500}
	r := &Result{Steps: []Step{exact, missing}}
	terms, _ := slo.Parse("delivery_p99<20s, delivery_p50<20s")
	r.Evaluate(terms)
	if th := r.Thresholds[0]; th.OK || !th.AtLeast || th.Value != 13700 {
		t.Errorf("delivery_p99<20s = %+v, want failed at ≥ 13700", th)
	}
	if th := r.Thresholds[1]; !th.OK || !th.AtLeast || th.Value != 8000 {
		t.Errorf("delivery_p50<20s = %+v, want ok at ≥ 8000: its upper bound 12.5 s is under", th)
	}
	if *r.Steps[0].SLOPassed == false || *r.Steps[1].SLOPassed {
		t.Errorf("steps passed %v, %v; want true, false", *r.Steps[0].SLOPassed, *r.Steps[1].SLOPassed)
	}
	if d := missing.Delivery; !d.AtLeast("p99") || !d.AtLeast("p50") || !d.AtLeast("max") || exact.Delivery.AtLeast("p99") {
		t.Errorf("AtLeast: p99 %v, p50 %v, max %v, exact p99 %v; want true, true, true, false",
			d.AtLeast("p99"), d.AtLeast("p50"), d.AtLeast("max"), exact.Delivery.AtLeast("p99"))
	}
}
