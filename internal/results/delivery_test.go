package results

import (
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
