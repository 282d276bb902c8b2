package compare

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// withFigures gives step s deliveries (expected ids, those arrived by the
// step's end, their latency) and a watched target (CPU in % of a core,
// RSS in MB).
func withFigures(s results.Step, expected, atEnd int64, p50, p99, cpu, rss float64) results.Step {
	s.Delivery = &results.Delivery{Expected: expected, Delivered: expected, AtStepEnd: &atEnd, LatencyMS: metrics.Latency{P50: p50, P99: p99}}
	s.Target = &results.Target{CPUPct: cpu, RSSMB: rss, Samples: 10, SourceSamples: 10}
	return s
}

// A before/after of a webhook gateway: at the same load the target's CPU
// went from 96 % to 63 % of a core and 8,129 of 11,998 messages
// delivered by the step's end became all of them. compare shows each
// figure with its direction in every format (it compared only
// throughput, latency and errors).
func TestCompareStepFigures(t *testing.T) {
	one := spread{p50: []float64{20}, throughput: []float64{200}, errors: []float64{0}}
	a := result("", withFigures(step(0, 200, one), 11998, 8129, 2100, 9800, 96, 210))
	b := result("", withFigures(step(0, 200, one), 11998, 11998, 55, 120, 63, 180))
	r := Compare(a, b, Options{MinEffect: DefaultMinEffect, MinAbs: DefaultMinAbs})
	for _, tt := range []struct {
		metric string
		a, b   float64
		dir    string
	}{
		{MetricDelivered, 8129.0 / 11998, 1, Better},
		{MetricDeliveryP50, 2100, 55, Better},
		{MetricDeliveryP99, 9800, 120, Better},
		{MetricTargetCPU, 96, 63, Better},
		{MetricTargetRSS, 210, 180, Better},
	} {
		c := find(r, 0, "", tt.metric)
		if c.Metric != tt.metric || c.A != tt.a || c.B != tt.b || c.Direction != tt.dir || c.Significant || c.Test != TestNone {
			t.Errorf("%s: %+v; want A %v, B %v, %s, a delta without a test", tt.metric, c, tt.a, tt.b, tt.dir)
		}
	}
	if r.Comparisons != 10 || !strings.Contains(r.Tally(), "10 comparisons (5 metrics × 1 step + 5 of the steps' deliveries and target)") {
		t.Errorf("%d comparisons, tally %q; want 10: 5 metrics and 5 figures", r.Comparisons, r.Tally())
	}
	out := text(t, r)
	for _, row := range []string{"delivered     67.75 %  100.00 %  +47.6 %", "target_cpu    96.0 %   63.0 %    -34.4 %", "target_rss    210.0 MB  180.0 MB  -14.3 %", "delivery_p99  9.80 s   120 ms    -98.8 %"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(row), " ")) {
			t.Errorf("text lacks %q:\n%s", row, out)
		}
	}
	var md bytes.Buffer
	Markdown(&md, r)
	if !strings.Contains(md.String(), "| 1 (200/s) | (all) | target_cpu | 96.0 % | 63.0 % | -34.4 % | – |  |") {
		t.Errorf("Markdown lacks the CPU row:\n%s", md.String())
	}
	var js bytes.Buffer
	JSON(&js, r)
	var decoded struct {
		Changes []struct {
			Metric    string `json:"metric"`
			Direction string `json:"direction"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, c := range decoded.Changes {
		if slices.Contains(StepMetrics, c.Metric) {
			dirs = append(dirs, c.Metric+" "+c.Direction)
		}
	}
	if want := []string{"delivered better", "delivery_p50 better", "delivery_p99 better", "target_cpu better", "target_rss better"}; !slices.Equal(dirs, want) {
		t.Errorf("JSON step figures %q, want %q:\n%s", dirs, want, js.String())
	}
}

// A figure one side lacks (no sink, no watched target) is not compared,
// and a note says which side had it; latency and the others still are.
func TestCompareStepFiguresOneSided(t *testing.T) {
	one := spread{p50: []float64{20}, throughput: []float64{200}, errors: []float64{0}}
	a := result("", step(0, 200, one), step(1, 400, one))
	b := result("", withFigures(step(0, 200, one), 100, 100, 1, 2, 50, 30), withFigures(step(1, 400, one), 100, 100, 1, 2, 50, 30))
	r := Compare(a, b, Options{MinEffect: DefaultMinEffect})
	if slices.ContainsFunc(r.Changes, func(c Change) bool { return slices.Contains(StepMetrics, c.Metric) }) {
		t.Errorf("changes of figures only B has:\n%s", text(t, r))
	}
	want := []string{"deliveries: measured in B's steps, not in A's: not compared", "the target's CPU and memory: measured in B's steps, not in A's: not compared"}
	if !slices.Equal(r.Notes, want) {
		t.Errorf("notes %q, want %q", r.Notes, want)
	}
}

// With repeats the step's figures are kept once (deliveries summed, the
// target's from the last repeat): they are deltas, never significant, and
// do not change what the rank test decides; the target's CPU of the
// control's own steps does not make the host busy.
func TestCompareStepFiguresWithRepeats(t *testing.T) {
	a := result("", withFigures(step(0, 100, fast), 5000, 5000, 50, 80, 40, 100))
	b := result("", withFigures(step(0, 100, slow), 5000, 2500, 500, 900, 90, 300))
	r := Compare(a, b, Options{MinEffect: DefaultMinEffect, MinAbs: DefaultMinAbs})
	if r.Verdict != Worse || r.Tested != 5 || r.Comparisons != 10 {
		t.Errorf("verdict %s, %d of %d tested; want worse, 5 of 10\n%s", r.Verdict, r.Tested, r.Comparisons, text(t, r))
	}
	for _, m := range StepMetrics {
		if c := find(r, 0, "", m); c.Significant || c.Test != TestNone || c.Direction != Worse {
			t.Errorf("%s: %+v; want worse, not significant, no test", m, c)
		}
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "kept once for all its repeats") }) {
		t.Errorf("notes %q: want one saying why 5 had no noise estimate", r.Notes)
	}
	if !strings.Contains(r.Test, figuresRule) || strings.Contains(r.Test, "use --repeat") {
		t.Errorf("test %q: want the step figures' rule, not advice to repeat runs that were repeated", r.Test)
	}
	alone := func(i int, name string, sp spread, cpu float64) results.Step {
		s := withFigures(step(i, 0, sp, scenarioSpread{name, sp}), 0, 0, 0, 0, cpu, 100)
		s.Delivery = nil
		s.Model, s.VUs, s.TargetRate, s.Scenario = "closed", 2, 0, name
		return s
	}
	a = result("landing", alone(0, "landing", fast, 40), alone(1, "api", fast, 40))
	b = result("landing", alone(0, "landing", fastAgain, 80), alone(1, "api", fastAgain, 80))
	if r := Compare(a, b, Options{MinEffect: DefaultMinEffect, MinAbs: DefaultMinAbs}); r.HostBusy || r.Verdict != Same {
		t.Errorf("the control's target CPU doubled: host busy %v, verdict %s; want the control held, same\n%s", r.HostBusy, r.Verdict, text(t, r))
	}
}

// --threshold takes the step figures, each with its bad direction: more
// CPU, less delivered.
func TestThresholdsOnStepFigures(t *testing.T) {
	ts, err := ParseThresholds("target_cpu:+10%, delivered:-1%, delivery_p99:+50%")
	if err != nil || len(ts) != 3 {
		t.Fatalf("ParseThresholds = %v, %v", ts, err)
	}
	if _, err := ParseThresholds("delivered:+1%"); err == nil || !strings.Contains(err.Error(), "delivered gets worse going down") {
		t.Errorf("delivered:+1%%: error %v, want the sign refused", err)
	}
	one := spread{p50: []float64{20}, throughput: []float64{200}, errors: []float64{0}}
	a := result("", withFigures(step(0, 200, one), 1000, 1000, 50, 80, 40, 100))
	b := result("", withFigures(step(0, 200, one), 1000, 950, 50, 200, 48, 100))
	r := Compare(a, b, Options{MinEffect: DefaultMinEffect, Thresholds: ts})
	if len(r.Crossed) != 3 || !r.Failed(false) {
		t.Errorf("crossed %q; want target_cpu +20 %%, delivered -5 %% and delivery_p99 +150 %%", r.Crossed)
	}
}
