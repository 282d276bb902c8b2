package slo

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want []Term
	}{
		{"", nil},
		{"p99<200ms", []Term{{Text: "p99<200ms", Metric: "p99", Op: "<", Value: 200}}},
		{" p99 < 1.5s , errors<=1% ", []Term{
			{Text: "p99 < 1.5s", Metric: "p99", Op: "<", Value: 1500},
			{Text: "errors<=1%", Metric: "errors", Op: "<=", Value: 1},
		}},
		{"send.p99<300ms", []Term{{Text: "send.p99<300ms", Scenario: "send", Metric: "p99", Op: "<", Value: 300}}},
		{"rate>=0.95,limited<90%", []Term{
			{Text: "rate>=0.95", Metric: "rate", Op: ">=", Value: 0.95},
			{Text: "limited<90%", Metric: "limited", Op: "<", Value: 90},
		}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q) error %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{"p99", 0, "no comparison"},
		{"p98<1s", 0, "unknown metric"},
		{"p99<200", 4, "duration"},
		{"p99<200ms, errors<1", 18, "percentage"},
		{"p99<1s,,errors<1%", 7, "empty"},
		{"rate>=lots", 6, "fraction"},
		{".p99<1s", 0, "scenario"},
		{"errors<NaN%", 7, "percentage"},
		{"rate>=NaN", 6, "fraction"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", tt.in, err)
			continue
		}
		if se.Offset != tt.offset || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Parse(%q) = offset %d %q, want offset %d containing %q", tt.in, se.Offset, se.Msg, tt.offset, tt.msg)
		}
	}
}

// A metric misspelt gets the one it was likely meant to be, as plan keys
// and flags do; a word far from every metric gets the list.
func TestParseSuggestsMetric(t *testing.T) {
	for in, want := range map[string]string{
		"erors<1%":         `unknown metric "erors" (did you mean "errors"?)`,
		"p99<1s,limted<5%": `unknown metric "limted" (did you mean "limited"?)`,
		"checkout.mxa<1s":  `unknown metric "mxa" (did you mean "max"?)`,
		"latency<1s":       `unknown metric "latency" (want p50`,
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want it to say %s", in, err, want)
		}
	}
}

func TestEval(t *testing.T) {
	f := Figures{Latency: metrics.Latency{P99: 150, P50: 20}, Completed: 1000, Failed: 20, Limited: 100, Achieved: 90, Target: 100}
	tests := []struct {
		slo  string
		want bool
		val  float64
	}{
		{"p99<200ms", true, 150},
		{"p99<100ms", false, 150},
		{"p99<=150ms", true, 150},
		{"errors<1%", false, 2},
		{"errors<5%", true, 2},
		{"limited<=10%", true, 10},
		{"rate>=0.95", false, 0.9},
		{"p50>10ms", true, 20},
	}
	for _, tt := range tests {
		terms, err := Parse(tt.slo)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := terms[0].Eval(f)
		if ok != tt.want || v != tt.val {
			t.Errorf("Eval(%q) = %v, %v, want %v, %v", tt.slo, v, ok, tt.val, tt.want)
		}
	}
}

// No samples is no evidence: every threshold fails.
func TestEvalZeroSamplesFails(t *testing.T) {
	for _, s := range []string{"p99<1h", "errors<100%", "limited<=100%", "rate>=0"} {
		terms, _ := Parse(s)
		if _, ok := terms[0].Eval(Figures{Target: 100}); ok {
			t.Errorf("Eval(%q) on zero samples passed, want fail", s)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99<200ms, errors<1%", "send.p99<=3s", "rate>=0.95", "limited<90%", ",", "p<", "a.b.c.p50>1ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("Parse(%q) error %v with a bad offset", s, err)
			}
			return
		}
		for _, tm := range terms {
			if _, ok := metricKinds[tm.Metric]; !ok || tm.Value < 0 {
				t.Fatalf("Parse(%q) accepted %+v", s, tm)
			}
		}
	})
}

// delivery_p50 and delivery_p99 judge the send → delivery latency, and fail
// with nothing delivered: no evidence is not a pass.
func TestDeliveryLatencyTerms(t *testing.T) {
	terms, err := Parse("delivery_p99<2s, delivery_p50<=100ms")
	if err != nil {
		t.Fatal(err)
	}
	f := Figures{Completed: 10, Expected: 10, Delivered: 10, Arrived: 10, Delivery: metrics.Latency{P50: 80, P99: 4900}}
	if v, ok := terms[0].Eval(f); ok || v != 4900 {
		t.Errorf("delivery_p99<2s with p99 4.9s = %v, %v; want 4900, fail", v, ok)
	}
	if v, ok := terms[1].Eval(f); !ok || v != 80 {
		t.Errorf("delivery_p50<=100ms with p50 80ms = %v, %v; want 80, pass", v, ok)
	}
	f.Arrived = 0
	if _, ok := terms[1].Eval(f); ok {
		t.Errorf("delivery_p50 with nothing delivered passed")
	}
}

// A delivery percentile that the ids still missing reach is a lower bound:
// under a "<" threshold it proves nothing and fails (p99 ≥ 13.7 s with 1412
// of 3200 ids missing passed delivery_p99<20s), over it the failure is
// proven, and a ">" term passes on it; a percentile whose upper bound is
// under the threshold passes however many ids are missing above it.
func TestDeliveryLatencyLowerBounds(t *testing.T) {
	inf := math.Inf(1)
	f := Figures{Completed: 3200, Expected: 3200, Delivered: 1788, Arrived: 1788,
		Delivery:      metrics.Latency{P50: 2.2, P99: 13700},
		DeliveryUpper: &metrics.Latency{P50: 2.2, P99: inf, Max: inf, Mean: inf}}
	for _, tc := range []struct {
		term        string
		ok, atLeast bool
	}{
		{"delivery_p99<20s", false, true},
		{"delivery_p99<=20s", false, true},
		{"delivery_p99<10s", false, true},
		{"delivery_p99>10s", true, true},
		{"delivery_p99>20s", false, true},
		{"delivery_p50<10ms", true, false},
		{"delivery_p50<1ms", false, false},
	} {
		terms, err := Parse(tc.term)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := terms[0].Eval(f)
		if ok != tc.ok || terms[0].LowerBound(f) != tc.atLeast {
			t.Errorf("%s = %v, %v (lower bound %v); want %v (lower bound %v)", tc.term, v, ok, terms[0].LowerBound(f), tc.ok, tc.atLeast)
		}
	}
	// Nothing delivered yet, ids waiting: "<" cannot pass, the wait is a lower bound.
	f.Arrived, f.Delivered = 0, 0
	f.DeliveryUpper = &metrics.Latency{P50: inf, P90: inf, P95: inf, P99: inf, P999: inf, Max: inf, Mean: inf}
	terms, _ := Parse("delivery_p50<1h")
	if v, ok := terms[0].Eval(f); ok || v != 2.2 {
		t.Errorf("delivery_p50<1h with nothing delivered = %v, %v; want 2.2, fail", v, ok)
	}
}

// throughput>=N/s is an absolute floor on responses per second ("min
// throughput 50 req/s"), with or without the "/s".
func TestThroughputTerm(t *testing.T) {
	terms, err := Parse("throughput>=50/s, throughput>20")
	if err != nil {
		t.Fatal(err)
	}
	if terms[0].Value != 50 || terms[1].Value != 20 {
		t.Fatalf("values %v, %v; want 50, 20", terms[0].Value, terms[1].Value)
	}
	f := Figures{Completed: 100, Throughput: 42}
	if v, ok := terms[0].Eval(f); ok || v != 42 {
		t.Errorf("throughput>=50/s at 42/s = %v, %v; want 42, fail", v, ok)
	}
	if _, ok := terms[1].Eval(f); !ok {
		t.Errorf("throughput>20 at 42/s failed")
	}
	for _, bad := range []string{"throughput>=fast", "throughput>=-1/s", "throughput>=NaN"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// A rate term has nothing to compare with when there is no target rate:
// it fails rather than passing as "0.000 of target".
func TestRateWithoutTargetFails(t *testing.T) {
	terms, _ := Parse("rate>=0.95")
	if _, ok := terms[0].Eval(Figures{Completed: 10, Achieved: 10}); ok {
		t.Errorf("rate>=0.95 without a target rate passed")
	}
}

// recovery<5s judges the run's events: the worst one's recovery must be
// below the bound; one that did not recover fails it whatever the bound,
// and a run without events has no evidence, so it fails too. It reads no
// exchange: completed exchanges do not matter to it.
func TestRecoveryTerm(t *testing.T) {
	terms, err := Parse("recovery<5s")
	if err != nil {
		t.Fatal(err)
	}
	rec := terms[0]
	if rec.Metric != Recovery || rec.Value != 5000 || !rec.OfEvents() {
		t.Fatalf("Parse(recovery<5s) = %+v, want metric recovery, 5000 ms, of events", rec)
	}
	tests := []struct {
		name string
		f    Figures
		val  float64
		want bool
	}{
		{"recovered in time", Figures{Events: 2, RecoveryMS: 1200}, 1200, true},
		{"recovered late", Figures{Events: 1, RecoveryMS: 7000}, 7000, false},
		{"at the bound", Figures{Events: 1, RecoveryMS: 5000}, 5000, false},
		{"one did not recover", Figures{Events: 2, Unrecovered: 1, RecoveryMS: 3000}, 3000, false},
		{"no event", Figures{Completed: 100}, 0, false},
	}
	for _, tt := range tests {
		v, ok := rec.Eval(tt.f)
		if v != tt.val || ok != tt.want {
			t.Errorf("%s: Eval(recovery<5s) = %v, %v, want %v, %v", tt.name, v, ok, tt.val, tt.want)
		}
	}
	if p99, _ := Parse("p99<1s"); p99[0].OfEvents() {
		t.Errorf("p99<1s.OfEvents() = true, want false")
	}
	if _, err := Parse("send.recovery<5s"); err == nil || !strings.Contains(err.Error(), "not on a scenario") {
		t.Errorf("Parse(send.recovery<5s) = %v, want an error: recovery is the run's", err)
	}
	if _, err := Parse("recovery<soon"); err == nil {
		t.Errorf("Parse(recovery<soon) accepted")
	}
}
