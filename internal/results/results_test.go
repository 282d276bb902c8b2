package results

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// step is a step of 100 exchanges that took lat each, at rate.
func step(rate float64, lat float64) Step {
	return Step{Figures: Figures{Model: "open", TargetRate: rate, DurationS: 1, Sent: 100, Completed: 100, OK: 100, AchievedRate: rate,
		LatencyMS: metrics.Latency{P50: lat, P90: lat, P95: lat, P99: lat, P999: lat, Max: lat, Mean: lat}}}
}

func TestEvaluatePerStep(t *testing.T) {
	r := &Result{Steps: []Step{step(100, 5), step(200, 300)}}
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
	r := &Result{Schema: Schema, Command: "ceiling run x", Steps: []Step{step(100, 5)}}
	for range 2 {
		if err := Write(path, r, Public); err != nil {
			t.Fatal(err)
		}
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Steps) != 1 || back.Steps[0].Completed != 100 || back.Command != "ceiling run x" {
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
		r.NoteDuplicates([]DuplicateID{{Source: "vars.clientId", Count: n + 1, Example: "a"}}, false)
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
		s := Step{Figures: Figures{Late: tt.late, Sent: tt.sent, Completed: tt.sent, Generator: &Generator{CPUPct: tt.cpu, CPUs: 2}}}
		r := &Result{Steps: []Step{s}}
		r.Judge(DefaultRules)
		if got := r.Steps[0].GeneratorLimited; got != tt.want || (got && r.Steps[0].Verdict != GeneratorLimited) {
			t.Errorf("late %d of %d, cpu %v%%: limited %v (%s), want %v", tt.late, tt.sent, tt.cpu, got, r.Steps[0].Verdict, tt.want)
		}
	}
}

// A verdict lists every figure past a rule, the deciding one first; a
// healthy step lists none (an empty list, never null in result.json).
func TestVerdictReasons(t *testing.T) {
	tests := []struct {
		name    string
		step    Step
		verdict string
		reasons []string
	}{
		{"healthy", step(100, 5), Healthy, []string{}},
		{"stressed", step(100, 250), Stressed, []string{"p95 250ms ≥ 100ms"}},
		{"overloaded thrice", func() Step {
			s := step(100, 800)
			s.Failed, s.OK, s.ErrorRate, s.AchievedRate = 10, 90, 0.1, 50
			return s
		}(), Overloaded, []string{"errors 10.0% > 1.0%", "p95 800ms > 500ms", "achieved 50/s < 95% of 100/s"}},
		// Exchanges that failed in ceiling itself are not the target's:
		// the step is the generator's, however many failed.
		{"out of descriptors", func() Step {
			s := step(100, 5)
			s.Failed, s.OK, s.ErrorRate, s.Errors = 40, 60, 0.4, map[string]int64{"generator": 40}
			return s
		}(), GeneratorLimited, []string{"ceiling ran out of file descriptors (ulimit -n) or local ports: 40 exchanges failed in ceiling itself, never reaching the target (class generator)"}},
		{"connections held by the open-file limit", func() Step {
			s := step(100, 5)
			s.Late, s.MaxLagMS, s.Generator = 50, 800, &Generator{CPUs: 2, FDLimit: 1024, ConnLimit: 900}
			return s
		}(), GeneratorLimited, []string{"ceiling could not hold the rate: 50.0% of arrivals late (max lag 800ms), its connections held at 900 by its open-file limit of 1024 (ulimit -n; a reserve kept for its files)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Steps: []Step{tt.step}}
			r.Judge(DefaultRules)
			s := r.Steps[0]
			if s.Verdict != tt.verdict || !slices.Equal(s.VerdictReasons, tt.reasons) || s.VerdictReasons == nil {
				t.Errorf("verdict = %s %q, want %s %q", s.Verdict, s.VerdictReasons, tt.verdict, tt.reasons)
			}
		})
	}
}

// "login.p99" reads the step's logins, unless a scenario is named login;
// the step's own figures never include them.
func TestFiguresOfLogin(t *testing.T) {
	s := step(100, 5)
	s.Logins = &Logins{Count: 12, OK: 10, Failed: 2, LatencyMS: metrics.Latency{P99: 1000}}
	if f := s.FiguresOf(LoginName); f.Latency.P99 != 1000 || f.Completed != 12 || f.Failed != 2 {
		t.Errorf("FiguresOf(login) = %+v, want the logins'", f)
	}
	if f := s.FiguresOf(""); f.Latency.P99 != 5 || f.Failed != 0 {
		t.Errorf("FiguresOf(\"\") = %+v, want the step's own", f)
	}
	s.Scenarios = []Breakdown{{Name: LoginName, Completed: 3, LatencyMS: metrics.Latency{P99: 7}}}
	if f := s.FiguresOf(LoginName); f.Latency.P99 != 7 {
		t.Errorf("FiguresOf(login) with a scenario named login = %+v, want the scenario's", f)
	}
}

// A step whose users had all logged in during an earlier step made no
// login: a login term does not judge it (neither a pass nor "no samples",
// nor INVALID), and is judged on the steps that made logins. A run in
// which no judged step made one fails the term for want of evidence, and
// so does a step that made none while a user was not logged in.
func TestLoginTermSkipsStepsLoggedInEarlier(t *testing.T) {
	terms, _ := slo.Parse("login.p99<2s")
	made := step(100, 5)
	made.Logins = &Logins{Count: 10, OK: 10, LatencyMS: metrics.Latency{P99: 400}}
	earlier := step(200, 5)
	earlier.Logins = &Logins{LoggedInEarlier: 10}
	stuck := step(200, 5)
	stuck.Logins = &Logins{LoggedInEarlier: 9, NotLoggedIn: 1}

	r := &Result{Steps: []Step{made, earlier}}
	r.Evaluate(terms)
	r.Judge(DefaultRules)
	if th := r.Thresholds[0]; !th.OK || th.Value != 400 || !r.Passed {
		t.Errorf("login.p99<2s over a step of logins and one logged in earlier: %+v, passed %v; want ok at 400 ms", th, r.Passed)
	}
	if len(r.Invalid) != 0 || r.StepInvalid(1) || r.Steps[1].SLOPassed == nil || !*r.Steps[1].SLOPassed {
		t.Errorf("invalid %q, step 2 SLO %v; want no finding and step 2 not failed", r.Invalid, r.Steps[1].SLOPassed)
	}
	if f, judged := r.TermFigures(&r.Steps[1], terms[0]); judged {
		t.Errorf("TermFigures(step 2, login.p99) = %+v, judged; want not judged", f)
	}

	none := &Result{Steps: []Step{earlier}}
	none.Evaluate(terms)
	none.Judge(Rules{})
	if th := none.Thresholds[0]; th.OK || none.Passed || len(none.Invalid) != 1 || !strings.Contains(none.Invalid[0], "no judged step made a login") {
		t.Errorf("no step made a login: %+v, passed %v, invalid %q; want failed for no samples", th, none.Passed, none.Invalid)
	}

	partly := &Result{Steps: []Step{made, stuck}}
	partly.Evaluate(terms)
	if partly.Thresholds[0].OK || *partly.Steps[1].SLOPassed {
		t.Errorf("a step with a user not logged in and no attempt: %+v, step SLO %v; want it judged on no samples", partly.Thresholds[0], *partly.Steps[1].SLOPassed)
	}
}

func TestMedianAndCoV(t *testing.T) {
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 1 2 = %v, want 2", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 1 3 2 = %v, want 2.5", m)
	}
	// 10, 12, 14: mean 12, sample sd 2: CoV 16.67 %.
	if c := CoV([]float64{10, 12, 14}); c < 16.66 || c > 16.67 {
		t.Errorf("CoV = %v, want 16.67", c)
	}
	if c := CoV([]float64{5}); c != 0 {
		t.Errorf("CoV of one value = %v, want 0", c)
	}
}

// A result file with figures no run writes is refused on read, saying
// where: 1.7e308 as a p99 (an HTML page of gigabytes), as a target rate or
// in a repeat's values (+Inf in compare's JSON), and more repeats than a
// plan may ask for (a rank test of 30,000 a side). What a run writes reads.
func TestReadRefusesHostileFigures(t *testing.T) {
	dir := t.TempDir()
	write := func(r *Result) string {
		path := filepath.Join(dir, "r.json")
		if err := Write(path, r, Public); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := &Result{Schema: Schema, Steps: []Step{step(100, 5)}}
	good.Steps[0].Repeat = &Repeat{N: 5, Values: map[string][]float64{"p50": {1, 2, 3, 4, 5}}}
	if _, err := Read(write(good)); err != nil {
		t.Fatalf("Read(a run's result) = %v", err)
	}
	for name, tt := range map[string]struct {
		edit func(*Result)
		want string
	}{
		"p99":          {func(r *Result) { r.Steps[0].LatencyMS.P99 = 1.7e308 }, "Steps[0].LatencyMS.P99"},
		"target rate":  {func(r *Result) { r.Steps[0].TargetRate = -1.7e308 }, "Steps[0].TargetRate"},
		"repeat value": {func(r *Result) { r.Steps[0].Repeat.Values["p50"][2] = 1.7e308 }, "Steps[0].Repeat.Values.p50[2]"},
		"repeats": {func(r *Result) {
			r.Steps[0].Repeat.Values["p50"] = make([]float64, 30000)
		}, "30000 values, more than a plan may ask for (100)"},
	} {
		r := &Result{Schema: Schema, Steps: []Step{step(100, 5)}}
		r.Steps[0].Repeat = &Repeat{N: 5, Values: map[string][]float64{"p50": {1, 2, 3, 4, 5}}}
		tt.edit(r)
		_, err := Read(write(r))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Read = %v, want refused naming %q", name, err, tt.want)
		}
	}
}

// A step that is INVALID fails the run even without a threshold: every
// request refused with a 401 measured a wrong request, not a capacity. A
// run whose steps are all valid passes without thresholds.
func TestInvalidStepFailsRun(t *testing.T) {
	refused := step(100, 1)
	refused.OK, refused.Failed, refused.ErrorRate = 0, 100, 1
	refused.Errors, refused.Status4xx = map[string]int64{"http_4xx": 100}, 401
	for _, tt := range []struct {
		name  string
		steps []Step
		want  bool
	}{
		{"valid", []Step{step(100, 5), step(200, 5)}, true},
		{"one invalid", []Step{step(100, 5), refused}, false},
	} {
		r := &Result{Steps: tt.steps}
		r.Evaluate(nil)
		r.Judge(DefaultRules)
		if r.Passed != tt.want {
			t.Errorf("%s: Passed = %v (verdicts %s, %s), want %v", tt.name, r.Passed, r.Steps[0].Verdict, r.Steps[len(r.Steps)-1].Verdict, tt.want)
		}
	}
}

// A step in which an event happened says so in its verdict, in
// result.json as in every report: HEALTHY reads STRESSED, a worse verdict
// keeps its word and names the events first; a step without events is
// judged as ever.
func TestJudgeEventVerdict(t *testing.T) {
	overloaded := step(100, 5)
	overloaded.Failed, overloaded.OK, overloaded.ErrorRate = 5, 95, 0.05
	tests := []struct {
		name    string
		s       Step
		events  []string
		verdict string
		reasons []string
	}{
		{"no event", step(100, 5), nil, Healthy, []string{}},
		{"healthy", step(100, 5), []string{"restart"}, Stressed, []string{"event: restart"}},
		{"stressed", step(100, 120), []string{"a", "b"}, Stressed, []string{"events: a, b", "p95 120ms ≥ 100ms"}},
		{"overloaded", overloaded, []string{"kill"}, Overloaded, []string{"event: kill", "errors 5.0% > 1.0%"}},
	}
	for _, tt := range tests {
		tt.s.Events = tt.events
		r := &Result{Steps: []Step{tt.s}}
		r.Evaluate(nil)
		r.Judge(DefaultRules)
		s := r.Steps[0]
		if s.Verdict != tt.verdict || !slices.Equal(s.VerdictReasons, tt.reasons) || s.VerdictReason != strings.Join(tt.reasons, "; ") {
			t.Errorf("%s: verdict %s %q (%q), want %s %q", tt.name, s.Verdict, s.VerdictReasons, s.VerdictReason, tt.verdict, tt.reasons)
		}
	}
}

// Scenarios whose bodies all have one size are one finding per step (19
// scenarios gave 171 pair-lines a step), and bodies under SameBodyMinBytes
// ("ok", "[]") are not compared: distinct small answers share a size by
// chance.
func TestSameBodiesOneFindingPerGroup(t *testing.T) {
	s := step(100, 5)
	for i := range 19 {
		s.Scenarios = append(s.Scenarios, Breakdown{Name: fmt.Sprintf("s%02d", i), Completed: 10, AvgBodyBytes: 8700})
	}
	s.Scenarios = append(s.Scenarios, Breakdown{Name: "health", Completed: 10, AvgBodyBytes: 3}, Breakdown{Name: "list", Completed: 10, AvgBodyBytes: 3})
	r := &Result{Steps: []Step{s, s}}
	r.Steps[1].Index = 1
	r.Evaluate(nil)
	strict := DefaultRules
	strict.Strict = true
	r.Judge(strict)
	if len(r.Invalid) != 2 || !strings.Contains(r.Invalid[0], "scenarios s00, s01,") || strings.Contains(r.Invalid[0], "health") {
		t.Errorf("invalid %q, want one line per step naming the 19, not the 3-byte answers", r.Invalid)
	}
	if v := r.Steps[0]; v.Verdict != Invalid || len(v.VerdictReasons) != 1 || !strings.HasPrefix(v.VerdictReasons[0], "same-size bodies: s00, s01") {
		t.Errorf("verdict %s %q, want INVALID by same-size bodies", v.Verdict, v.VerdictReasons)
	}
}

// A step that lost an agent measured part of its load: its SLO is not
// judged on the rest (it read "slo: pass" on half the load), it is
// INVALID, and the run could not be carried out.
func TestLostStepNotJudgedBySLO(t *testing.T) {
	s := step(100, 5)
	s.Lost = "agent 10.0.0.2:7070 lost after 3.1 s"
	r := &Result{Steps: []Step{step(50, 5), s}}
	r.Steps[1].Index = 1
	terms, _ := slo.Parse("p99<200ms")
	r.Evaluate(terms)
	r.Judge(DefaultRules)
	if s := r.Steps[1]; s.SLOPassed != nil || s.Verdict != Invalid || r.Outcome.Status != StatusCouldNotRun {
		t.Errorf("lost step: slo %v, verdict %s, outcome %+v; want not judged, INVALID, could_not_run", s.SLOPassed, s.Verdict, r.Outcome)
	}
	if s := r.Steps[0]; s.SLOPassed == nil || !*s.SLOPassed {
		t.Errorf("the whole step before it: slo %v, want judged and passed", s.SLOPassed)
	}
}

// A pipeline that holds every id for a fixed time keeps up: its backlog
// is flat, moving from instant to instant by chance. The series is a real
// one (a gateway posting each send 1.5 s later, 20 users): its two ends,
// 119 and 130, differ by more than the old margin (1 % of 940 accepted),
// yet its trend is inside its own scatter. Its twin, a queue growing by
// ten through the step with little scatter (lanes at capacity, slightly
// overdriven), fell behind.
func TestFellBehindKnowsItsNoise(t *testing.T) {
	withSamples := func(samples ...int64) Step {
		s := step(94, 5)
		s.DurationS = 10
		first, last := samples[0], samples[len(samples)-1]
		s.Delivery = &Delivery{Expected: 940, Delivered: 940, BacklogStart: &first, BacklogEnd: &last, BacklogSamples: samples}
		return s
	}
	flat := withSamples(119, 139, 144, 137, 148, 139, 133, 142, 145, 149, 130)
	if why := flat.FellBehind(); why != "" {
		t.Errorf("a flat, noisy backlog: %q, want kept up", why)
	}
	old := flat
	old.Delivery = &Delivery{Expected: 940, BacklogStart: flat.Delivery.BacklogStart, BacklogEnd: flat.Delivery.BacklogEnd}
	if old.FellBehind() == "" {
		t.Errorf("the same ends without samples (a result from before them): kept up, want fell behind by the ends' rule (119 → 130 > 9.4)")
	}
	growing := withSamples(5, 6, 6, 7, 8, 8, 9, 10, 10, 11, 12, 12, 13, 14, 14, 15)
	growing.Delivery.Expected = 483
	if why := growing.FellBehind(); !strings.HasPrefix(why, "delivery fell behind: backlog 5 → 15") {
		t.Errorf("a backlog growing by 10 with little scatter: %q, want fell behind", why)
	}
	// A backlog that grew with the rate the target accepted (a closed
	// model whose users sent faster as a busy machine let them, the
	// gateway still holding each id 1.5 s: a real series) kept up when
	// its ids' mean wait stayed flat; the same counts with a wait that
	// grows with them fell behind, and without waits they are judged on
	// the counts alone.
	rising := withSamples(180, 180, 180, 180, 180, 180, 181, 182, 189, 188, 188, 187, 186, 185, 182, 181, 186, 190, 190, 191, 191)
	rising.Delivery.Expected, rising.DurationS = 372, 3
	if rising.FellBehind() == "" {
		t.Errorf("a backlog 180 → 191 without its waits: kept up, want fell behind by the counts")
	}
	waits := func(mean func(i int) float64) []float64 {
		out := make([]float64, len(rising.Delivery.BacklogSamples))
		for i, c := range rising.Delivery.BacklogSamples {
			out[i] = float64(c) * mean(i)
		}
		return out
	}
	rising.Delivery.BacklogWaitS = waits(func(i int) float64 { return 0.75 + 0.01*float64(i%3-1) })
	if why := rising.FellBehind(); why != "" {
		t.Errorf("a backlog 180 → 191 whose ids waited 0.74-0.76 s throughout: %q, want kept up", why)
	}
	slower := rising
	slower.Delivery = &Delivery{}
	*slower.Delivery = *rising.Delivery
	slower.Delivery.BacklogWaitS = waits(func(i int) float64 { return 0.75 + 0.005*float64(i) })
	if why := slower.FellBehind(); why == "" {
		t.Errorf("a backlog 180 → 191 whose ids waited 0.75 → 0.85 s: kept up, want fell behind")
	}
	growing.Delivery.BacklogWaitS = make([]float64, len(growing.Delivery.BacklogSamples))
	for i, c := range growing.Delivery.BacklogSamples {
		growing.Delivery.BacklogWaitS[i] = float64(c) * (0.02 + 0.004*float64(i))
	}
	if why := growing.FellBehind(); why == "" {
		t.Errorf("a queue 5 → 15 whose ids waited 20 → 80 ms: kept up, want fell behind")
	}
	r := &Result{Steps: []Step{flat, growing}}
	r.Steps[1].Index = 1
	r.Evaluate(nil)
	r.Judge(DefaultRules)
	if r.Steps[0].Verdict != Healthy || r.Steps[1].Verdict != Overloaded {
		t.Errorf("verdicts %s, %s; want HEALTHY, OVERLOADED", r.Steps[0].Verdict, r.Steps[1].Verdict)
	}
}
