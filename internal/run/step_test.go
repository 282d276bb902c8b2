package run

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

func loadResult(t *testing.T, rate float64, lat time.Duration, kinds map[transport.Kind]int) *load.Result {
	t.Helper()
	total := metrics.NewTally()
	rec := metrics.NewRecorder(1)
	for k, n := range kinds {
		for range n {
			rec.Shard(0).Record(&metrics.Sample{End: lat, Outcome: transport.Outcome{Kind: k}, Counted: true, InWindow: true})
		}
	}
	rec.Collect(total)
	return &load.Result{
		Step:        load.Step{Index: 0, Rate: rate, Length: time.Second},
		WindowStart: 0, WindowEnd: time.Second,
		Sent: total.Completed(), Started: total.Completed(), Total: total,
	}
}

func TestNewStep(t *testing.T) {
	st, err := newStep(loadResult(t, 100, 20*time.Millisecond, map[transport.Kind]int{transport.OK: 90, transport.Redirect: 10}), nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Completed != 100 || st.OK != 90 || st.Failed != 10 || st.Errors["redirect"] != 10 {
		t.Errorf("counts = %d/%d/%d %v, want 100/90/10 with 10 redirects", st.Completed, st.OK, st.Failed, st.Errors)
	}
	if st.ErrorRate != 0.1 || st.AchievedRate != 100 || st.Throughput != 90 {
		t.Errorf("error rate, achieved, throughput = %v, %v, %v, want 0.1, 100, 90 (every arrival started; failures are not throughput)", st.ErrorRate, st.AchievedRate, st.Throughput)
	}
	if len(st.Warnings) != 1 {
		t.Errorf("warnings = %q, want one about redirects", st.Warnings)
	}
	h, err := metrics.Decode(st.Histogram)
	if err != nil || h.TotalCount() != 100 {
		t.Errorf("decoded histogram count = %v (err %v), want 100", h.TotalCount(), err)
	}
}

// Requests sent twice are counted in result.json (retried) and said under
// the table: a retry is never hidden.
func TestRetriedIsWarned(t *testing.T) {
	for _, retried := range []int64{0, 7} {
		res := loadResult(t, 100, 20*time.Millisecond, map[transport.Kind]int{transport.OK: 100})
		res.Total.Retried = retried
		st, err := newStep(res, nil, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.HasPrefix(w, "7 requests were sent twice (retried)") })
		if st.Retried != retried || warned != (retried > 0) {
			t.Errorf("%d retried: retried %d, warnings %q; want %d, warned %v", retried, st.Retried, st.Warnings, retried, retried > 0)
		}
	}
}

// The open model's start lag is recorded per exchange and summed; a lag
// that is a large part of a fast target's latency is noted, with the
// service time beside it, and a small one is not.
func TestTimerLagNote(t *testing.T) {
	tests := []struct {
		name     string
		lag, svc time.Duration
		want     bool
	}{
		{"fast target, 0.6 ms lag", 600 * time.Microsecond, 200 * time.Microsecond, true},
		{"slow target, 0.6 ms lag", 600 * time.Microsecond, 20 * time.Millisecond, false},
		{"fast target, 20 µs lag", 20 * time.Microsecond, 200 * time.Microsecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := metrics.NewTally()
			rec := metrics.NewRecorder(1)
			for i := range 100 {
				start := time.Duration(i)*time.Millisecond + tt.lag
				rec.Shard(0).Record(&metrics.Sample{Intended: start - tt.lag, Start: start, End: start + tt.svc,
					Outcome: transport.Outcome{Kind: transport.OK}, Counted: true, InWindow: true})
			}
			rec.Collect(total)
			if total.LagSum != 100*tt.lag {
				t.Fatalf("LagSum = %v, want %v", total.LagSum, 100*tt.lag)
			}
			st, err := newStep(&load.Result{Step: load.Step{Rate: 100, Length: time.Second}, WindowEnd: time.Second, Sent: 100, Started: 100, Total: total}, nil, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if want := float64(tt.lag) / float64(time.Millisecond); st.MeanLagMS < 0.99*want || st.MeanLagMS > 1.01*want {
				t.Errorf("MeanLagMS = %v, want %v", st.MeanLagMS, want)
			}
			r := &results.Result{Steps: []results.Step{st, st}}
			r.Judge(results.DefaultRules)
			noted := func(s results.Step) bool {
				return slices.ContainsFunc(s.Notes, func(n string) bool { return strings.HasPrefix(n, "timer lag:") })
			}
			if got := noted(r.Steps[0]); got != tt.want {
				t.Errorf("notes = %q, want a timer-lag note: %v", r.Steps[0].Notes, tt.want)
			}
			if noted(r.Steps[1]) {
				t.Errorf("step 2 notes = %q, want the timer lag noted once, on the first step", r.Steps[1].Notes)
			}
		})
	}
}

// A websocket scenario's default name is its URL: a token in its query is
// not written out.
func TestScenarioNameRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"ws ws://h/widget?site=s1&token=T": "ws ws://h/widget?site=s1&token=<redacted>",
		"send":                             "send",
		"GET /x":                           "GET /x",
	} {
		if got := scenarioName(in); got != want {
			t.Errorf("scenarioName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The closed model has no schedule: exchanges that started well after the
// user was ready (a busy machine) are not counted late, and do not make
// the step GENERATOR LIMITED; docs say nothing is late in it.
func TestClosedModelNothingLate(t *testing.T) {
	total := metrics.NewTally()
	rec := metrics.NewRecorder(1)
	for i := range 100 {
		lag := time.Duration(0)
		if i%3 == 0 {
			lag = 21 * time.Millisecond
		}
		rec.Shard(0).Record(&metrics.Sample{Start: lag, End: lag + 5*time.Millisecond, Outcome: transport.Outcome{Kind: transport.OK}, Counted: true, InWindow: true})
	}
	rec.Collect(total)
	res := &load.Result{Step: load.Step{VUs: 10, Length: time.Second}, WindowEnd: time.Second, Sent: 100, Started: 100, Total: total}
	st, err := newStep(res, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := results.Result{Steps: []results.Step{st}}
	r.Judge(results.DefaultRules)
	if st.Late != 0 || st.MaxLagMS != 0 || r.Steps[0].Verdict == results.GeneratorLimited {
		t.Errorf("closed step: late %d (max %v ms), verdict %s; want none late, not generator-limited", st.Late, st.MaxLagMS, r.Steps[0].Verdict)
	}
}

// A step whose every exchange failed with one 4xx measured a wrong
// request: it is INVALID with the status and what to check, not
// OVERLOADED.
func TestEvery404IsInvalidNotOverloaded(t *testing.T) {
	total := metrics.NewTally()
	rec := metrics.NewRecorder(1)
	for range 50 {
		rec.Shard(0).Record(&metrics.Sample{End: time.Millisecond, Outcome: transport.Outcome{Kind: transport.HTTP4xx, Status: 404}, Counted: true, InWindow: true})
	}
	rec.Collect(total)
	res := &load.Result{Step: load.Step{Rate: 50, Length: time.Second}, WindowEnd: time.Second, Sent: 50, Started: 50, Total: total}
	st, err := newStep(res, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := results.Result{Steps: []results.Step{st}}
	r.Judge(results.DefaultRules)
	got := r.Steps[0]
	if got.Verdict != results.Invalid || !strings.Contains(got.VerdictReason, "every request failed with 404 Not Found: check the URL") {
		t.Errorf("verdict %s (%s); want INVALID, naming 404 and the URL", got.Verdict, got.VerdictReason)
	}
	if len(r.Invalid) == 0 {
		t.Errorf("no INVALID finding")
	}
}

// find's flags become its search; a bad one is a failure.InputError naming it.
func TestSearchFlags(t *testing.T) {
	p := &plan.Plan{Load: plan.Load{Model: plan.Open, Rates: []float64{50}}}
	cfg, err := (&SearchFlags{Start: "100", Max: "800", Precision: "10%"}).Config(p)
	if err != nil || cfg.Start != 100 || cfg.Max != 800 || cfg.Precision != 0.1 {
		t.Errorf("Config = %+v, %v", cfg, err)
	}
	for _, f := range []SearchFlags{{Precision: "5%"}, {Start: "x", Precision: "5%"}, {Start: "100", Max: "50", Precision: "5%"}, {Start: "100", Precision: "0%"}} {
		var bad *failure.InputError
		if _, err := f.Config(p); !errors.As(err, &bad) {
			t.Errorf("Config(%+v) = %v, want a failure.InputError", f, err)
		}
	}
	if cfg, err := (&SearchFlags{Precision: "5%", RateGiven: true}).Config(p); err != nil || cfg.Start != 50 {
		t.Errorf("with --rate: start %v (%v), want the plan's first rate 50", cfg.Start, err)
	}
}

// A closed step in which ceiling used nearly all the CPU it could says
// that its throughput may be ceiling's: of one core on the event loop, of
// every core it could use on goroutines; an open step says so otherwise
// (late or unsent arrivals), and a quieter generator says nothing.
func TestGeneratorBusyIsWarned(t *testing.T) {
	for _, tc := range []struct {
		name  string
		vus   int
		loop  bool
		cpu   float64
		procs int
		want  string
	}{
		{"loop, a whole core", 50, true, 97, 2, "97% of its core"},
		{"loop, most of a core", 50, true, 60, 2, ""},
		{"goroutines, every core", 50, false, 190, 2, "95% of the CPU of the 2 cores"},
		{"goroutines, one of two cores", 50, false, 100, 2, ""},
		{"open model", 0, true, 100, 2, ""},
	} {
		res := loadResult(t, 100, 20*time.Millisecond, map[transport.Kind]int{transport.OK: 100})
		res.Step.VUs, res.Loop, res.GeneratorCPU = tc.vus, tc.loop, tc.cpu
		got := generatorBusy(res, tc.procs)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
