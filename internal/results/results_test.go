package results

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/slo"
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
		Sent: total.Completed(), Total: total,
	}
}

func TestNewStep(t *testing.T) {
	st, err := NewStep(loadResult(t, 100, 20*time.Millisecond, map[transport.Kind]int{transport.OK: 90, transport.Redirect: 10}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Completed != 100 || st.OK != 90 || st.Failed != 10 || st.Errors["redirect"] != 10 {
		t.Errorf("counts = %d/%d/%d %v, want 100/90/10 with 10 redirects", st.Completed, st.OK, st.Failed, st.Errors)
	}
	if st.ErrorRate != 0.1 || st.AchievedRate != 90 {
		t.Errorf("error rate, achieved = %v, %v, want 0.1, 90 (failures are not throughput)", st.ErrorRate, st.AchievedRate)
	}
	if len(st.Warnings) != 1 {
		t.Errorf("warnings = %q, want one about redirects", st.Warnings)
	}
	h, err := metrics.Decode(st.Histogram)
	if err != nil || h.TotalCount() != 100 {
		t.Errorf("decoded histogram count = %v (err %v), want 100", h.TotalCount(), err)
	}
}

func TestEvaluatePerStep(t *testing.T) {
	fast, _ := NewStep(loadResult(t, 100, 5*time.Millisecond, map[transport.Kind]int{transport.OK: 100}), nil, nil)
	slow, _ := NewStep(loadResult(t, 200, 300*time.Millisecond, map[transport.Kind]int{transport.OK: 100}), nil, nil)
	r := &Result{Steps: []Step{fast, slow}}
	terms, _ := slo.Parse("p99<200ms, errors<1%")
	r.Evaluate(terms)
	if r.Passed {
		t.Errorf("Passed = true, want false: step 1 has p99 300ms")
	}
	if !*r.Steps[0].SLOPassed || *r.Steps[1].SLOPassed {
		t.Errorf("step SLO = %v, %v, want true, false", *r.Steps[0].SLOPassed, *r.Steps[1].SLOPassed)
	}
	if th := r.Thresholds[0]; th.OK || th.Value < 299 || th.Value > 301 {
		t.Errorf("threshold = %+v, want failed with the worst p99 ≈ 300", th)
	}
	if !r.Thresholds[1].OK {
		t.Errorf("errors<1%% = %+v, want ok", r.Thresholds[1])
	}
	empty := &Result{}
	empty.Evaluate(terms)
	if empty.Passed {
		t.Errorf("a run with no steps passed its thresholds")
	}
}

func TestWriteReadAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	st, _ := NewStep(loadResult(t, 100, 5*time.Millisecond, map[transport.Kind]int{transport.OK: 10}), nil, nil)
	r := &Result{Schema: Schema, Command: "ceiling run x", Steps: []Step{st}}
	for range 2 {
		if err := Write(path, r); err != nil {
			t.Fatal(err)
		}
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Steps) != 1 || back.Steps[0].Completed != 10 || back.Command != "ceiling run x" {
		t.Errorf("Read = %+v, want the written result", back)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d files, want 1 (no temporary files left)", len(entries))
	}
}

// Noting duplicates after every step keeps one warning per source.
func TestNoteDuplicates(t *testing.T) {
	r := &Result{Warnings: []string{"other"}}
	for n := range int64(3) {
		r.NoteDuplicates([]scenario.Duplicate{{Source: "vars.clientId", Count: n + 1, Example: "a"}}, false)
	}
	if len(r.Warnings) != 2 || r.Warnings[0] != "other" || len(r.DuplicateIDs) != 1 || r.DuplicateIDs[0].Count != 3 {
		t.Errorf("warnings %q, duplicates %+v; want the other warning and one for clientId, count 3", r.Warnings, r.DuplicateIDs)
	}
}

// A step is generator-limited when more than 1 % and at least 5 arrivals
// were late, or ceiling's CPUs were saturated; one hiccup is not a limit.
func TestGeneratorLimited(t *testing.T) {
	tests := []struct {
		late, sent int64
		cpu        float64
		want       bool
	}{
		{1, 40, 10, false},
		{5, 400, 10, true},
		{5, 1000, 10, false},
		{0, 1000, 195, true},
		{0, 1000, 150, false},
	}
	for _, tt := range tests {
		s := Step{Late: tt.late, Sent: tt.sent, Completed: tt.sent, Generator: &Generator{CPUPct: tt.cpu, CPUs: 2}}
		r := &Result{Steps: []Step{s}}
		r.Judge(DefaultRules)
		if got := r.Steps[0].GeneratorLimited; got != tt.want || (got && r.Steps[0].Verdict != GeneratorLimited) {
			t.Errorf("late %d of %d, cpu %v%%: limited %v (%s), want %v", tt.late, tt.sent, tt.cpu, got, r.Steps[0].Verdict, tt.want)
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
			st, err := NewStep(&load.Result{Step: load.Step{Rate: 100, Length: time.Second}, WindowEnd: time.Second, Sent: 100, Total: total}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := float64(tt.lag) / float64(time.Millisecond); st.MeanLagMS < 0.99*want || st.MeanLagMS > 1.01*want {
				t.Errorf("MeanLagMS = %v, want %v", st.MeanLagMS, want)
			}
			r := &Result{Steps: []Step{st, st}}
			r.Judge(DefaultRules)
			noted := func(s Step) bool {
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
