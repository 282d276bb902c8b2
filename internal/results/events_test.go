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

func terms(t *testing.T, s string) []slo.Term {
	t.Helper()
	ts, err := slo.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func seconds(v float64) *float64 { return &v }

// traced is the exchanges meant to start every 1/rate s from from until
// to (series clock, seconds), each taking lat(t) ms and ending as
// class(t), t being its intended start.
func traced(from, to float64, rate int, lat func(t float64) float64, class func(t float64) string) []Exchange {
	var out []Exchange
	for i := 0; ; i++ {
		t := from + float64(i)/float64(rate)
		if t >= to-1e-9 {
			return out
		}
		out = append(out, Exchange{IntendedUS: toUS(t), LatencyUS: int64(math.Round(lat(t) * 1000)), Class: class(t), Weight: 1})
	}
}

// latency is a constant response time, in ms.
func latency(v float64) func(float64) float64 { return func(float64) float64 { return v } }

// ok is an exchange that succeeded.
func ok(float64) string { return "ok" }

// tracedStep is a step whose window runs from from to to on the series
// clock, with seconds of 100 exchanges of 10 ms (the baseline) and the
// trace of xs, begun at the earliest of them.
func tracedStep(t *testing.T, from, to float64, xs ...[]Exchange) Step {
	t.Helper()
	var all []Exchange
	for _, x := range xs {
		all = append(all, x...)
	}
	tr, err := NewTrace(float64(all[0].IntendedUS)/1e6, all)
	if err != nil {
		t.Fatal(err)
	}
	return Step{Figures: Figures{Model: "open", StartS: from, DurationS: to - from, Series: steady(from, int(to-from), 10), Trace: tr}}
}

// pauseRun is a step whose window runs from 2 s to 22 s on the series
// clock, at 100/s, with a pause of 1 s at 10 s: what was meant to start
// during it waits until it ends (up to 1 s late), what starts in the
// quarter second after it is still slow (60 ms, two timeouts), then the
// target is back to 10 ms.
func pauseRun(t *testing.T) *Result {
	queued := func(at float64) float64 { return (11-at)*1000 + 10 }
	catchUp := func(at float64) string {
		if math.Abs(at-11.1) < 1e-6 || math.Abs(at-11.12) < 1e-6 {
			return "timeout"
		}
		return "ok"
	}
	s := tracedStep(t, 2, 22, traced(9, 10, 100, latency(10), ok), traced(10, 11, 100, queued, ok),
		traced(11, 11.25, 100, latency(60), catchUp), traced(11.25, 22, 100, latency(10), ok))
	return &Result{Steps: []Step{s}, Events: []Event{{Name: "freeze", Action: "pause", Step: 0, AtS: 8, StartS: 10, DurationS: 1}}}
}

// A pause measured against the SLO's p99 and errors terms: recovered from
// the first exchange after its end that met them, with the second after
// it (its hold) meeting them too: a quarter second after the pause.
func TestCostEventsPause(t *testing.T) {
	r := pauseRun(t)
	r.CostEvents(terms(t, "p99<50ms, errors<1%, p50<1ms"))
	e := r.Events[0]
	if e.RecoveryS == nil || *e.RecoveryS != 0.25 || e.Recovery != "" {
		t.Fatalf("recovery = %v %q, want 0.25 s (60 ms until 11.25 s, then 10 ms)", e.RecoveryS, e.Recovery)
	}
	// The window: what was meant to start from the pause to the recovery
	// (the 100 of the pause, the 25 after), and nothing before it (the
	// last exchange before it ended as the pause began).
	want := &EventWindow{FromS: 10, ToS: 11.25, Completed: 125, Failed: 2, Errors: map[string]int64{"timeout": 2},
		ErrorRate: 2.0 / 125, P50MS: 390, P99MS: 1000, MaxMS: 1010}
	got := *e.Window
	got.P50MS, got.P99MS, got.MaxMS = math.Round(got.P50MS/10)*10, math.Round(got.P99MS/10)*10, math.Round(got.MaxMS/10)*10 // HDR's 3 significant digits
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("window mismatch (-want +got):\n%s", diff)
	}
}

// The window holds the exchanges in flight when the event began (meant to
// start before it, ended after it), and its percentiles are those of its
// exchanges, weighed.
func TestEventWindow(t *testing.T) {
	xs := []Exchange{
		{IntendedUS: 900_000, LatencyUS: 50_000, Class: "ok", Weight: 1},        // ended before: out
		{IntendedUS: 950_000, LatencyUS: 300_000, Class: "reset", Weight: 1},    // in flight: in
		{IntendedUS: 1_100_000, LatencyUS: 10_000, Class: "ok", Weight: 98},     // in
		{IntendedUS: 1_500_000, LatencyUS: 2_000_000, Class: "ok", Weight: 1},   // in
		{IntendedUS: 2_000_000, LatencyUS: 10_000, Class: "refused", Weight: 1}, // meant to start at the end: out
	}
	w := window(xs, 1, 2)
	if w.Completed != 100 || w.Failed != 1 || w.Errors["reset"] != 1 || len(w.Errors) != 1 || w.ErrorRate != 0.01 {
		t.Errorf("window counts = %+v, want 100 exchanges, 1 reset", w)
	}
	if math.Round(w.P50MS) != 10 || math.Round(w.P99MS) != 300 || math.Round(w.MaxMS/10) != 200 {
		t.Errorf("window p50 %v, p99 %v, max %v; want 10, 300, 2000 ms", w.P50MS, w.P99MS, w.MaxMS)
	}
}

func TestCostEvents(t *testing.T) {
	refusedUntil := func(end float64) func(float64) string {
		return func(at float64) string {
			if at < end-1e-9 {
				return "refused"
			}
			return "ok"
		}
	}
	oneSlow := func(at ...float64) func(float64) float64 { // 10 ms, except at those times: 900 ms
		return func(t float64) float64 {
			for _, a := range at {
				if math.Abs(t-a) < 1e-6 {
					return 900
				}
			}
			return 10
		}
	}
	tests := []struct {
		name     string
		slo      string
		step     func(t *testing.T) Step
		events   []Event
		recovery []*float64
		why      []string
		toS      []float64
	}{{
		name:     "a target that never left the limits recovered at once",
		slo:      "p99<50ms, errors<1%",
		step:     func(t *testing.T) Step { return tracedStep(t, 2, 22, traced(9, 22, 100, latency(10), ok)) },
		events:   []Event{{StartS: 10.2, DurationS: 0.15}},
		recovery: []*float64{seconds(0)}, why: []string{""}, toS: []float64{10.35},
	}, {
		name: "no SLO: the limits are 1.5 × the 5 s before, and no errors since there were none",
		step: func(t *testing.T) Step {
			return tracedStep(t, 2, 22, traced(9, 10.5, 100, latency(10), refusedUntil(10.5)), traced(10.5, 10.8, 100, latency(16), ok), traced(10.8, 22, 100, latency(15), ok))
		},
		// p99 limit 15 ms (1.5 × 10): refused until 10.5 s, 16 ms until 10.8 s, then 15 ms
		events:   []Event{{StartS: 10, DurationS: 0.1}},
		recovery: []*float64{seconds(0.7)}, why: []string{""}, toS: []float64{10.8},
	}, {
		name: "an exchange that starts a recovery must itself be within the limits; the hold allows 1 in 100 over",
		slo:  "p99<50ms, errors<1%",
		step: func(t *testing.T) Step {
			return tracedStep(t, 2, 22, traced(9, 22, 100, oneSlow(10, 10.5), ok)) // the first after the event is slow, one in the next 100 too
		},
		events:   []Event{{StartS: 9.5, DurationS: 0.5}},
		recovery: []*float64{seconds(0.01)}, why: []string{""}, toS: []float64{10.01},
	}, {
		name: "two slow in a hundred is over the p99",
		slo:  "p99<50ms, errors<1%",
		step: func(t *testing.T) Step {
			return tracedStep(t, 2, 22, traced(9, 22, 100, oneSlow(10.5, 10.7), ok))
		},
		// from 10 s, the next second holds both; the first second that holds one only starts after 10.5
		events:   []Event{{StartS: 9.5, DurationS: 0.5}},
		recovery: []*float64{seconds(0.51)}, why: []string{""}, toS: []float64{10.51},
	}, {
		name: "two events under a second apart each recover: a hold ends at the next event",
		slo:  "p99<50ms, errors<1%",
		step: func(t *testing.T) Step {
			slow := func(at float64) float64 { // each pause's exchanges wait until it ends
				switch {
				case at >= 10 && at < 10.2:
					return (10.2-at)*1000 + 10
				case at >= 10.6 && at < 10.8:
					return (10.8-at)*1000 + 10
				}
				return 10
			}
			return tracedStep(t, 2, 11.3, traced(9, 11.3, 100, slow, ok))
		},
		events:   []Event{{StartS: 10, DurationS: 0.2}, {StartS: 10.6, DurationS: 0.2}},
		recovery: []*float64{seconds(0), seconds(0)}, why: []string{"", ""}, toS: []float64{10.2, 10.8},
	}, {
		name:     "a dead target never recovers; its window runs to the step's end",
		slo:      "p99<200ms, errors<1%",
		step:     func(t *testing.T) Step { return tracedStep(t, 2, 22, traced(9, 22, 100, latency(1), refusedUntil(30))) },
		events:   []Event{{StartS: 10, DurationS: 0}},
		recovery: []*float64{nil}, why: []string{NotRecovered}, toS: []float64{22},
	}, {
		name:     "back only after the step's window: not recovered",
		slo:      "p99<200ms, errors<1%",
		step:     func(t *testing.T) Step { return tracedStep(t, 2, 12, traced(9, 13, 100, latency(1), refusedUntil(12))) },
		events:   []Event{{StartS: 10, DurationS: 0}},
		recovery: []*float64{nil}, why: []string{NotRecovered}, toS: []float64{12},
	}, {
		name:     "no baseline: the event at the step's start",
		slo:      "p99<200ms",
		step:     func(t *testing.T) Step { return tracedStep(t, 5, 15, traced(5, 15, 100, latency(10), ok)) },
		events:   []Event{{StartS: 5, DurationS: 1}},
		recovery: []*float64{nil}, why: []string{NoBaseline}, toS: []float64{15},
	}, {
		name:     "the SLO's terms need no baseline",
		slo:      "p99<200ms, errors<=1%",
		step:     func(t *testing.T) Step { return tracedStep(t, 5, 15, traced(5, 15, 100, latency(10), ok)) },
		events:   []Event{{StartS: 5, DurationS: 1}},
		recovery: []*float64{seconds(0)}, why: []string{""}, toS: []float64{6},
	}, {
		name: "weights count as the exchanges they stand for",
		slo:  "p99<50ms, errors<1%",
		step: func(t *testing.T) Step {
			xs := traced(9, 22, 25, oneSlow(10.04, 10.52), ok) // kept one in 4 of 100/s
			for i := range xs {
				xs[i].Weight = 4
			}
			return tracedStep(t, 2, 22, xs) // from 10.04: 2 slow (8 of 100) in its second; from 10.08: 1 (4 of 100)
		},
		events:   []Event{{StartS: 10, DurationS: 0}},
		recovery: []*float64{seconds(0.56)}, why: []string{""}, toS: []float64{10.56},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Steps: []Step{tt.step(t)}, Events: tt.events}
			var ts []slo.Term
			if tt.slo != "" {
				ts = terms(t, tt.slo)
			}
			r.CostEvents(ts)
			for i, e := range r.Events {
				if diff := cmp.Diff(tt.recovery[i], e.RecoveryS); diff != "" || e.Recovery != tt.why[i] {
					t.Errorf("event %d: recovery = %v %q, want %v %q", i, e.RecoveryS, e.Recovery, tt.recovery[i], tt.why[i])
				}
				if e.Window == nil || math.Abs(e.Window.ToS-tt.toS[i]) > 1e-6 || e.Window.FromS != e.StartS {
					t.Errorf("event %d: window = %+v, want from %v to %v", i, e.Window, e.StartS, tt.toS[i])
				}
			}
		})
	}
}

// A step cut short before its event's target recovered says so.
func TestCostEventsCutShort(t *testing.T) {
	s := tracedStep(t, 2, 12, traced(9, 12, 100, latency(900), ok))
	s.Interrupted = true
	r := &Result{Steps: []Step{s}, Events: []Event{{StartS: 10}}}
	r.CostEvents(terms(t, "p99<200ms, errors<1%"))
	if e := r.Events[0]; e.RecoveryS != nil || e.Recovery != NotRecoveredYet {
		t.Errorf("event = %+v, want %q", e, NotRecoveredYet)
	}
}

// An event whose step is not in the result (or kept no trace) has no
// window and no recovery; CostEvents recomputes from scratch each time.
func TestCostEventsWithoutTrace(t *testing.T) {
	r := &Result{Steps: []Step{{Figures: Figures{Index: 0, Series: steady(0, 5, 10)}}}, Events: []Event{{Step: 0, Window: &EventWindow{}, RecoveryS: seconds(1)}, {Step: 3}}}
	r.CostEvents(nil)
	for _, e := range r.Events {
		if e.Window != nil || e.RecoveryS != nil || e.Recovery != NoTrace {
			t.Errorf("event of step %d: %+v, want no window, no recovery, %q", e.Step, e, NoTrace)
		}
	}
}

// recovery<5s: the worst event's recovery, judged by Evaluate over the
// whole run, with its own entry in the thresholds; the step of an event
// that fails it fails its SLO, other steps do not; a run without events
// fails it with a run-wide "no samples" finding.
func TestEvaluateRecovery(t *testing.T) {
	two := func() *Result {
		r := pauseRun(t)
		r.Steps = append(r.Steps, Step{Figures: Figures{Index: 1, Model: "open", Series: steady(22, 10, 10)}})
		for i := range r.Steps {
			s := &r.Steps[i]
			s.Completed, s.OK = 1000, 1000
			s.LatencyMS = metrics.Latency{P99: 20}
		}
		r.Steps[0].Events = []string{"freeze"}
		return r
	}
	r := two()
	r.Evaluate(terms(t, "p99<50ms, recovery<5s"))
	r.Judge(DefaultRules)
	want := []Threshold{{Expr: "p99<50ms", Value: 20, OK: true}, {Expr: "recovery<5s", Value: 250, OK: true}}
	if diff := cmp.Diff(want, r.Thresholds); diff != "" || !r.Passed {
		t.Errorf("thresholds (-want +got):\n%s; passed %v", diff, r.Passed)
	}

	r = two()
	r.Evaluate(terms(t, "p99<50ms, recovery<200ms"))
	r.Judge(DefaultRules)
	if th := r.Thresholds[1]; th.OK || th.Value != 250 || r.Passed || *r.Steps[0].SLOPassed || !*r.Steps[1].SLOPassed {
		t.Errorf("recovery<200ms after 250 ms: %+v, passed %v, steps %v %v; want it failed in step 1 only", th, r.Passed, *r.Steps[0].SLOPassed, *r.Steps[1].SLOPassed)
	}

	r = two() // the target never comes back
	r.Steps[0] = tracedStep(t, 2, 22, traced(9, 10, 100, latency(10), ok), traced(10, 22, 100, latency(1), func(float64) string { return "refused" }))
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
	r := pauseRun(t)
	r.Steps = append(r.Steps, Step{Figures: Figures{Index: 1, Completed: 5}})
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
	a := Step{Figures: Figures{Model: "open", Events: []string{"freeze"}, Series: []Point{{T: 1, Completed: 10, Failed: 2, Errors: map[string]int64{"refused": 2}}}}}
	b := Step{Figures: Figures{Model: "open", Events: []string{"freeze", "kill"}, Series: []Point{{T: 1, Completed: 10, Failed: 3, Errors: map[string]int64{"refused": 1, "reset": 2}}}}}
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
