package results

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// sec is the second of the series that ends at t: lat gives how many
// exchanges took each latency (ms), failed of them failed (as refused),
// with the second's histogram, as a run that keeps them writes it.
func sec(t float64, failed int64, lat map[float64]int64) Point {
	h := metrics.NewHistogram()
	var n int64
	for ms, k := range lat {
		h.RecordValues(int64(ms*1000), k)
		n += k
	}
	p := Point{T: t, Completed: n, OK: n - failed, Failed: failed, Rate: float64(n),
		P50: metrics.Quantile(h, 0.5), P99: metrics.Quantile(h, 0.99), Max: metrics.Quantile(h, 1)}
	if failed > 0 {
		p.Errors = map[string]int64{"refused": failed}
	}
	if n > 0 {
		p.Histogram, _ = metrics.Encode(h)
	}
	return p
}

// steady is n seconds of 100 exchanges of ms each, ending at from+1 ...
// from+n.
func steady(from float64, n int, ms float64) []Point {
	var out []Point
	for i := 1; i <= n; i++ {
		out = append(out, sec(from+float64(i), 0, map[float64]int64{ms: 100}))
	}
	return out
}

func series(parts ...[]Point) []Point {
	var out []Point
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func terms(t *testing.T, s string) []slo.Term {
	t.Helper()
	ts, err := slo.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func seconds(v float64) *float64 { return &v }

// pauseRun is a step of 20 s (the series clock from 2 s, after a warm-up)
// with a pause of 1 s at 10 s: the second after it holds the requests
// queued through it (up to 1 s late), the next is still slow, then the
// target is back to 10 ms.
func pauseRun() *Result {
	s := Step{Index: 0, Model: "open", Series: series(
		steady(2, 8, 10), // seconds ending 3..10
		[]Point{
			sec(11, 0, map[float64]int64{1000: 50, 500: 50}), // the pause's second
			sec(12, 2, map[float64]int64{400: 100, 10: 100}), // the queue drains: 2 timeouts
		},
		steady(12, 10, 10), // 13..22
	)}
	s.Series[9].Errors = map[string]int64{"timeout": 2} // second 12's failures were timeouts
	return &Result{Steps: []Step{s}, Events: []Event{{Name: "freeze", Action: "pause", Step: 0, AtS: 8, StartS: 10, DurationS: 1}}}
}

// CostEvents measures a pause against the SLO's p99 and errors terms:
// recovered when 3 seconds in a row meet them, from the event's end.
func TestCostEventsPause(t *testing.T) {
	r := pauseRun()
	r.CostEvents(terms(t, "p99<200ms, errors<1%, p50<1ms"))
	e := r.Events[0]
	if e.RecoveryS == nil || *e.RecoveryS != 1 || e.Recovery != "" {
		t.Fatalf("recovery = %v %q, want 1 s (second 12 is over 200 ms; 13, 14, 15 are back)", e.RecoveryS, e.Recovery)
	}
	want := &EventWindow{FromS: 10, ToS: 12, Completed: 300, Failed: 2, Errors: map[string]int64{"timeout": 2},
		ErrorRate: 2.0 / 300, P50MS: 400, P99MS: 1000, MaxMS: 1000}
	got := *e.Window
	got.P50MS, got.P99MS, got.MaxMS = math.Round(got.P50MS), math.Round(got.P99MS), math.Round(got.MaxMS) // HDR's 3 significant digits
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("window mismatch (-want +got):\n%s", diff)
	}
}

// The window's percentiles come from the seconds' merged histograms, not
// from their own percentiles: a second with two slow exchanges in a
// hundred has a p99 of 1 s, but with a fast second beside it they are one
// in a hundred, and the window's p99 is 10 ms. When the histograms are
// missing, the greatest per-second figure stands in (an upper bound).
func TestEventWindowMergesHistograms(t *testing.T) {
	pts := []Point{sec(1, 0, map[float64]int64{10: 98, 1000: 2}), sec(2, 0, map[float64]int64{10: 100})}
	if pts[0].P99 < 1000 {
		t.Fatalf("the first second's p99 = %v, want 1 s", pts[0].P99)
	}
	w := window(pts, 0, 2)
	if math.Round(w.P99MS) != 10 || math.Round(w.MaxMS) != 1000 || w.Completed != 200 {
		t.Errorf("merged p99 = %v, max %v of %d, want 10 ms, 1 s of 200", w.P99MS, w.MaxMS, w.Completed)
	}
	pts[1].Histogram = ""
	w = window(pts, 0, 2)
	if math.Round(w.P99MS) != 1000 {
		t.Errorf("a second without its histogram: p99 %v, want the greatest per second: 1 s", w.P99MS)
	}
	w = window([]Point{{T: 1, Completed: 100, P50: 5, P99: 10, Max: 1000}, {T: 2, Completed: 100, P50: 7, P99: 12, Max: 900}}, 0, 2)
	if w.P50MS != 7 || w.P99MS != 12 || w.MaxMS != 1000 {
		t.Errorf("without histograms: p50 %v p99 %v max %v, want the greatest per second: 7, 12, 1000", w.P50MS, w.P99MS, w.MaxMS)
	}
}

func TestCostEvents(t *testing.T) {
	dead := func(from float64, n int) []Point { // a dead target answers nothing
		var out []Point
		for i := 1; i <= n; i++ {
			out = append(out, Point{T: from + float64(i)})
		}
		return out
	}
	tests := []struct {
		name     string
		slo      string
		series   []Point
		event    Event
		interr   bool
		recovery *float64
		why      string
		toS      float64
	}{{
		name:   "no SLO: 1.5 × the 5 s before",
		series: series(steady(0, 10, 10), steady(10, 2, 100), steady(12, 2, 14), steady(14, 5, 15)),
		// p99 limit 15 ms: 14 ms twice then 15 ms: recovered from second 13
		event: Event{StartS: 10, DurationS: 1}, recovery: seconds(1), toS: 12,
	}, {
		name:   "no SLO: the baseline's p99 is over 5 s, not the step's",
		series: series(steady(0, 4, 100), steady(4, 5, 10), steady(9, 3, 100), steady(12, 5, 10)),
		event:  Event{StartS: 9, DurationS: 0}, recovery: seconds(3), toS: 12,
	}, {
		name: "no SLO: no errors before, so none after",
		series: series(steady(0, 10, 10), []Point{
			sec(11, 5, map[float64]int64{10: 100}), sec(12, 1, map[float64]int64{10: 100}),
		}, steady(12, 5, 10)),
		event: Event{StartS: 10, DurationS: 0.5}, recovery: seconds(1.5), toS: 12,
	}, {
		name: "no SLO: errors before allow 1.5 × their rate",
		series: series([]Point{sec(9, 2, map[float64]int64{10: 100}), sec(10, 2, map[float64]int64{10: 100})}, // 2 %
			[]Point{sec(11, 40, map[float64]int64{10: 100}), sec(12, 4, map[float64]int64{10: 100})}, // 4 % > 3 %
			[]Point{sec(13, 2, map[float64]int64{10: 100}), sec(14, 1, map[float64]int64{10: 100}), sec(15, 0, map[float64]int64{10: 100})}),
		event: Event{StartS: 10, DurationS: 0}, recovery: seconds(2), toS: 12,
	}, {
		name:   "a dead target never recovers",
		slo:    "p99<200ms, errors<1%",
		series: series(steady(0, 10, 10), dead(10, 10)),
		event:  Event{StartS: 10, DurationS: 0}, why: NotRecovered, toS: 20,
	}, {
		name:   "a missing second breaks the run",
		slo:    "p99<200ms, errors<1%",
		series: series(steady(0, 10, 10), steady(10, 2, 10), steady(13, 2, 10), steady(16, 3, 10)),
		event:  Event{StartS: 10, DurationS: 0}, recovery: seconds(6), toS: 16,
	}, {
		name:   "recovery counts from the event's end, a second boundary after it",
		slo:    "p99<200ms, errors<1%",
		series: steady(0, 20, 10),
		event:  Event{StartS: 10.2, DurationS: 1.5}, recovery: seconds(0.3), toS: 12,
	}, {
		name:   "no baseline: the event at the step's start",
		slo:    "p99<200ms",
		series: steady(5, 10, 10),
		event:  Event{StartS: 5, DurationS: 1}, why: NoBaseline, toS: 15,
	}, {
		name:   "the SLO's terms need no baseline",
		slo:    "p99<200ms, errors<=1%",
		series: steady(5, 10, 10),
		event:  Event{StartS: 5, DurationS: 1}, recovery: seconds(0), toS: 6,
	}, {
		name:   "a cut-short step",
		slo:    "p99<200ms, errors<1%",
		series: series(steady(0, 10, 10), steady(10, 2, 900)),
		event:  Event{StartS: 10, DurationS: 0}, interr: true, why: NotRecoveredYet, toS: 12,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Steps: []Step{{Index: 0, Interrupted: tt.interr, Series: tt.series}}, Events: []Event{tt.event}}
			var ts []slo.Term
			if tt.slo != "" {
				ts = terms(t, tt.slo)
			}
			r.CostEvents(ts)
			e := r.Events[0]
			if diff := cmp.Diff(tt.recovery, e.RecoveryS); diff != "" || e.Recovery != tt.why {
				t.Errorf("recovery = %v %q, want %v %q", e.RecoveryS, e.Recovery, tt.recovery, tt.why)
			}
			if e.Window == nil || e.Window.ToS != tt.toS || e.Window.FromS != tt.event.StartS {
				t.Errorf("window = %+v, want from %v to %v", e.Window, tt.event.StartS, tt.toS)
			}
		})
	}
}

// An event whose step is not in the result (or has no series) has no
// window and no recovery; CostEvents recomputes from scratch each time.
func TestCostEventsWithoutSeries(t *testing.T) {
	r := &Result{Steps: []Step{{Index: 0}}, Events: []Event{{Step: 0, Window: &EventWindow{}, RecoveryS: seconds(1)}, {Step: 3}}}
	r.CostEvents(nil)
	for _, e := range r.Events {
		if e.Window != nil || e.RecoveryS != nil || e.Recovery != NoSeries {
			t.Errorf("event of step %d: %+v, want no window, no recovery, %q", e.Step, e, NoSeries)
		}
	}
}

// recovery<5s: the worst event's recovery, judged by Evaluate over the
// whole run, with its own entry in the thresholds; the step of an event
// that fails it fails its SLO, other steps do not; a run without events
// fails it with a run-wide "no samples" finding.
func TestEvaluateRecovery(t *testing.T) {
	two := func() *Result {
		r := pauseRun()
		r.Steps = append(r.Steps, Step{Index: 1, Model: "open", Series: steady(22, 10, 10)})
		for i := range r.Steps {
			s := &r.Steps[i]
			s.Completed, s.OK = 1000, 1000
			s.LatencyMS = metrics.Latency{P99: 20}
		}
		r.Steps[0].Events = []string{"freeze"}
		return r
	}
	r := two()
	r.Evaluate(terms(t, "p99<200ms, recovery<5s"))
	want := []Threshold{{Expr: "p99<200ms", Value: 20, OK: true}, {Expr: "recovery<5s", Value: 1000, OK: true}}
	if diff := cmp.Diff(want, r.Thresholds); diff != "" || !r.Passed {
		t.Errorf("thresholds (-want +got):\n%s; passed %v", diff, r.Passed)
	}

	r = two()
	r.Evaluate(terms(t, "p99<200ms, recovery<500ms"))
	if th := r.Thresholds[1]; th.OK || th.Value != 1000 || r.Passed || *r.Steps[0].SLOPassed || !*r.Steps[1].SLOPassed {
		t.Errorf("recovery<500ms after 1 s: %+v, passed %v, steps %v %v; want it failed in step 1 only", th, r.Passed, *r.Steps[0].SLOPassed, *r.Steps[1].SLOPassed)
	}

	r = two() // the target never comes back
	for i := 9; i < len(r.Steps[0].Series); i++ {
		r.Steps[0].Series[i] = Point{T: r.Steps[0].Series[i].T}
	}
	r.Evaluate(terms(t, "recovery<1h"))
	if th := r.Thresholds[0]; th.OK || th.Value != 11000 || r.Events[0].RecoveryS != nil {
		t.Errorf("no recovery: %+v (recovery %v); want it failed, watched 11 s after the pause", th, r.Events[0].RecoveryS)
	}

	r = two()
	r.Events = nil
	r.Evaluate(terms(t, "recovery<5s"))
	r.Judge(DefaultRules)
	if th := r.Thresholds[0]; th.OK || r.Passed || !*r.Steps[0].SLOPassed {
		t.Errorf("no event: %+v, passed %v, step 1 SLO %v; want the threshold failed, the steps not", th, r.Passed, *r.Steps[0].SLOPassed)
	}
	if len(r.Invalid) != 1 || !strings.Contains(r.Invalid[0], "recovery<5s evaluated on no samples") || r.StepInvalid(0) {
		t.Errorf("no event: invalid %q, want one run-wide no-samples finding", r.Invalid)
	}

	r = two() // an event in an interrupted step is not judged
	r.Steps[0].Interrupted = true
	r.Evaluate(terms(t, "recovery<5s"))
	if th := r.Thresholds[0]; th.OK {
		t.Errorf("the only event in a cut-short step: %+v, want no samples, failed", th)
	}
	if f := r.EventFigures(-1); f.Events != 0 {
		t.Errorf("EventFigures(-1) with the only event in a cut-short step = %+v, want no event", f)
	}
	if f := r.EventFigures(0); f.Events != 1 {
		t.Errorf("EventFigures(0) = %+v, want the step's event", f)
	}
}

// A term reads a step's figures, or for recovery its events'; a step
// without events has nothing for recovery to judge.
func TestTermFigures(t *testing.T) {
	r := pauseRun()
	r.Steps = append(r.Steps, Step{Index: 1, Completed: 5})
	r.CostEvents(nil)
	rec, p99 := terms(t, "recovery<5s")[0], terms(t, "p99<1s")[0]
	if f, ok := r.TermFigures(&r.Steps[0], rec); !ok || f.Events != 1 || f.Unrecovered != 0 {
		t.Errorf("TermFigures(step 1, recovery) = %+v, %v; want one recovered event", f, ok)
	}
	if _, ok := r.TermFigures(&r.Steps[1], rec); ok {
		t.Errorf("TermFigures(step 2, recovery) = ok, want nothing to judge")
	}
	if f, ok := r.TermFigures(&r.Steps[1], p99); !ok || f.Completed != 5 {
		t.Errorf("TermFigures(step 2, p99) = %+v, %v; want the step's", f, ok)
	}
}

// Merged generators' seconds add their errors by class, and the step
// names each event once.
func TestMergeEventsAndErrors(t *testing.T) {
	a := Step{Model: "open", Events: []string{"freeze"}, Series: []Point{{T: 1, Completed: 10, Failed: 2, Errors: map[string]int64{"refused": 2}}}}
	b := Step{Model: "open", Events: []string{"freeze", "kill"}, Series: []Point{{T: 1, Completed: 10, Failed: 3, Errors: map[string]int64{"refused": 1, "reset": 2}}}}
	m, err := MergeSteps([]Step{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"refused": 3, "reset": 2}, m.Series[0].Errors); diff != "" {
		t.Errorf("merged second's errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"freeze", "kill"}, m.Events); diff != "" {
		t.Errorf("merged events (-want +got):\n%s", diff)
	}
}
