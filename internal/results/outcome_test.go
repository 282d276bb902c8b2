package results_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/outputs"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// outcomeStep is a finished open-model step at rate, of 2000 exchanges with that
// p99 and failed of them failed (5xx): HEALTHY below 100 ms and 1 %.
func outcomeStep(i int, rate, p99 float64, failed int64) results.Step {
	const n = 2000
	s := results.Step{Figures: results.Figures{Index: i, Model: "open", TargetRate: rate, DurationS: 10, WarmupS: 2,
		Sent: n, Completed: n, OK: n - failed, Failed: failed, Errors: map[string]int64{},
		AchievedRate: rate, Throughput: rate * float64(n-failed) / n, ErrorRate: float64(failed) / n,
		LatencyMS: metrics.Latency{P50: p99 / 4, P90: p99 / 2, P95: p99 * 0.8, P99: p99, P999: p99 * 1.2, Max: p99 * 1.5, Mean: p99 / 3}}}
	if failed > 0 {
		s.Errors["http_5xx"] = failed
	}
	return s
}

// crashedAt makes s a step whose window runs from 2 s to 12 s on the
// series clock, at 100/s of 5 ms answers, with a trace of its exchanges,
// refused from at on: a target that never came back.
func crashedAt(t *testing.T, s results.Step, at float64) results.Step {
	t.Helper()
	var xs []results.Exchange
	for i := range 1000 {
		x := results.Exchange{IntendedUS: int64(2e6 + i*10_000), LatencyUS: 5000, Class: "ok", Weight: 1}
		if float64(x.IntendedUS)/1e6 >= at {
			x.LatencyUS, x.Class = 1000, "refused"
		}
		xs = append(xs, x)
	}
	tr, err := results.NewTrace(2, xs)
	if err != nil {
		t.Fatal(err)
	}
	s.StartS, s.Trace = 0, tr
	for sec := range 10 {
		s.Series = append(s.Series, results.Point{T: float64(3 + sec), Completed: 100, OK: 100, Rate: 100, P50: 5, P99: 5, WindowS: 1})
	}
	return s
}

// soakOf is a soak of 60 windows whose target memory has verdict v,
// projected to its limit within the horizon or not, and whose SLO broke
// in broken windows.
func soakOf(v string, within bool, broken int) *results.Soak {
	t := results.Trend{Figure: "target.rss_mb", Name: "target RSS", Unit: "MB", Windows: 60, Verdict: v, Why: "+14.2 MB/h ± 1.1, R² 0.98"}
	if v == results.Drifting {
		t.Projection = &results.Projection{Limit: results.Limit{Figure: "target.rss_mb", Value: 512, Above: true, Of: "its cgroup's memory limit"},
			AtS: 20 * 3600, InS: 19 * 3600, WithinHorizon: within}
	}
	k := &results.Soak{Schema: results.SoakSchema, ForS: 3600, HeldS: 3600, HorizonS: 3 * 3600, Trends: []results.Trend{t}, SLOWindows: 60, SLOBrokenCount: broken}
	if broken > 0 {
		k.SLOBroken = []results.SLOBreak{{StartS: 600, EndS: 660, Terms: []string{"p99<100ms"}}}
	}
	return k
}

// Every finding reaches the one outcome, and everything that shows it
// agrees: result.json's passed and outcome, the table's last line, the
// Markdown's outcome line, and JUnit (failing exactly when the run did not
// pass, with an error for a run that could not be carried out or was
// interrupted). One case per verdict and finding kind. (ceiling's exit
// code is the outcome's status, one mapping in package cli.)
func TestOneOutcomeEverywhere(t *testing.T) {
	ok := func(i int, rate float64) results.Step { return outcomeStep(i, rate, 5, 0) }
	overloaded := func(i int, rate float64) results.Step { return outcomeStep(i, rate, 900, 300) }
	redirected := ok(0, 100)
	redirected.Redirected = 2000
	wrong := outcomeStep(0, 100, 3, 2000)
	wrong.Errors, wrong.Status4xx = map[string]int64{"http_4xx": 2000}, 404
	late := ok(0, 100)
	late.Late, late.MaxLagMS = 200, 40
	died := ok(0, 100)
	died.Target = &results.Target{Samples: 10, Exited: true, Died: "killed by SIGKILL"}
	cut := died
	cut.Interrupted = true
	lost := ok(0, 100)
	lost.Lost = "agent 10.0.0.2:7070 stopped answering 3.1s into the step"
	evented := ok(0, 100)
	evented.Events = []string{"deploy"}
	crashed := crashedAt(t, evented, 9)
	stressed := outcomeStep(0, 100, 200, 0)
	interrupted := ok(1, 200)
	interrupted.Interrupted = true

	tests := []struct {
		name   string
		steps  []results.Step
		slo    string
		strict bool
		events []results.Event
		search *results.Search
		soak   *results.Soak
		interr bool
		status string
		kinds  []string
	}{
		{name: "healthy", steps: []results.Step{ok(0, 100)}, strict: true, status: results.StatusPassed},
		{name: "stressed passes", steps: []results.Step{stressed}, strict: true, status: results.StatusPassed},
		{name: "top step overloaded", steps: []results.Step{ok(0, 100), overloaded(1, 200)}, strict: true, status: results.StatusPassed},
		{name: "no step passed", steps: []results.Step{overloaded(0, 100)}, strict: true, status: results.StatusFailed, kinds: []string{results.ReasonNoStepPassed}},
		{name: "INVALID by a trap", steps: []results.Step{redirected}, strict: true, status: results.StatusFailed, kinds: []string{results.ReasonInvalid, results.ReasonNoStepPassed}},
		{name: "a trap, not strict", steps: []results.Step{redirected}, strict: false, status: results.StatusPassed},
		{name: "a wrong request", steps: []results.Step{ok(0, 50), wrong}, strict: false, status: results.StatusFailed, kinds: []string{results.ReasonInvalid}},
		{name: "generator limited", steps: []results.Step{ok(0, 50), late}, strict: true, status: results.StatusFailed, kinds: []string{results.ReasonGeneratorLimited}},
		{name: "SLO failed", steps: []results.Step{ok(0, 100), overloaded(1, 200)}, slo: "p99<100ms", strict: true, status: results.StatusFailed, kinds: []string{results.ReasonThreshold}},
		{name: "target died after its step", steps: []results.Step{died}, strict: true, status: results.StatusCouldNotRun, kinds: []string{results.ReasonTargetDied}},
		{name: "target died mid-step", steps: []results.Step{ok(0, 50), cut}, strict: true, status: results.StatusCouldNotRun, kinds: []string{results.ReasonTargetDied}},
		{name: "agent lost", steps: []results.Step{lost}, slo: "p99<100ms", strict: true, status: results.StatusCouldNotRun, kinds: []string{results.ReasonAgentLost}},
		{name: "an event in a healthy step", steps: []results.Step{evented}, strict: true,
			events: []results.Event{{Name: "deploy", Action: "restart", Step: 0, Recovery: results.NoTrace}}, status: results.StatusPassed},
		{name: "an event not recovered", steps: []results.Step{crashed}, strict: true,
			events: []results.Event{{Name: "deploy", Action: "run", Step: 0, AtS: 7, StartS: 9, DurationS: 0.01}}, status: results.StatusFailed, kinds: []string{results.ReasonNotRecovered}},
		{name: "a required event failed", steps: []results.Step{evented}, strict: true,
			events: []results.Event{{Name: "deploy", Action: "run", Step: 0, Required: true, Error: "the command exited with 3"}}, status: results.StatusCouldNotRun, kinds: []string{results.ReasonEventFailed}},
		{name: "find: an edge", steps: []results.Step{ok(0, 100), overloaded(1, 200)}, slo: "p99<100ms", strict: true,
			search: &results.Search{Start: 100, Precision: 0.05, Outcome: "edge", PassedLevel: 100, FailedLevel: 200}, status: results.StatusPassed},
		{name: "find: no edge", steps: []results.Step{overloaded(0, 100)}, slo: "p99<100ms", strict: true,
			search: &results.Search{Start: 100, Precision: 0.05, Outcome: "start_fails", FailedLevel: 100}, status: results.StatusFailed, kinds: []string{results.ReasonNoEdge}},
		{name: "interrupted", steps: []results.Step{ok(0, 100), interrupted}, strict: true, interr: true, status: results.StatusInterrupted, kinds: []string{results.ReasonInterrupted}},
		{name: "soak: stable", steps: []results.Step{ok(0, 100)}, strict: true, soak: soakOf(results.Stable, false, 0), status: results.StatusPassed},
		{name: "soak: a drift beyond its horizon", steps: []results.Step{ok(0, 100)}, strict: true, soak: soakOf(results.Drifting, false, 0), status: results.StatusPassed},
		{name: "soak: a drift within its horizon", steps: []results.Step{ok(0, 100)}, strict: true, soak: soakOf(results.Drifting, true, 0),
			status: results.StatusFailed, kinds: []string{results.ReasonSoakDrift}},
		{name: "soak: the SLO broken in a window", steps: []results.Step{ok(0, 100)}, strict: true, soak: soakOf(results.Stable, false, 2),
			status: results.StatusFailed, kinds: []string{results.ReasonSoakSLO}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			terms, err := slo.Parse(tt.slo)
			if err != nil {
				t.Fatal(err)
			}
			ended := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
			r := &results.Result{Schema: results.Schema, Command: "ceiling run plan.yaml", StartedAt: ended.Add(-time.Minute), EndedAt: &ended,
				Steps: tt.steps, Events: tt.events, Search: tt.search, Soak: tt.soak, Interrupted: tt.interr}
			r.Evaluate(terms)
			rules := results.DefaultRules
			rules.Strict = tt.strict
			r.Judge(rules)

			passed := tt.status == results.StatusPassed
			if r.Outcome.Status != tt.status || r.Passed != passed {
				t.Errorf("status %s, passed %v; want %s (%+v)", r.Outcome.Status, r.Passed, tt.status, r.Outcome)
			}
			for _, k := range tt.kinds {
				if !slices.ContainsFunc(r.Outcome.Reasons, func(rs results.Reason) bool { return rs.Kind == k }) {
					t.Errorf("outcome %+v has no reason of kind %s", r.Outcome, k)
				}
			}
			if (len(r.Outcome.Reasons) == 0) != passed {
				t.Errorf("passed %v with reasons %+v: a run passes exactly when nothing is against it", passed, r.Outcome.Reasons)
			}

			// result.json says the same.
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				Passed  bool             `json:"passed"`
				Outcome results.Outcome  `json:"outcome"`
				Steps   []map[string]any `json:"steps"`
			}
			if err := json.Unmarshal(data, &back); err != nil || back.Passed != r.Passed || back.Outcome.Status != tt.status {
				t.Errorf("result.json: passed %v, outcome %+v (%v)", back.Passed, back.Outcome, err)
			}
			for i, s := range r.Steps {
				if v, _ := back.Steps[i]["verdict"].(string); v != s.Verdict {
					t.Errorf("step %d: result.json's verdict %q, the table's %q", i+1, v, s.Verdict)
				}
			}

			// The table ends with it, the Markdown begins with it.
			var text, md bytes.Buffer
			if err := report.Text(&text, r); err != nil {
				t.Fatal(err)
			}
			if err := report.Markdown(&md, r); err != nil {
				t.Fatal(err)
			}
			word := strings.ToUpper(strings.ReplaceAll(tt.status, "_", " "))
			lines := strings.Split(strings.TrimSpace(text.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, word) {
				t.Errorf("the table's last line %q, want it to begin %q", last, word)
			}
			if !strings.Contains(md.String(), "**"+word) {
				t.Errorf("the Markdown has no outcome line %q", word)
			}
			if strings.Contains(text.String(), "no step passed") && passed {
				t.Errorf("the table says no step passed, and the run passed:\n%s", text.String())
			}

			// JUnit fails exactly when the run does not pass.
			path := filepath.Join(t.TempDir(), "junit.xml")
			if err := outputs.WriteJUnit(path, r); err != nil {
				t.Fatal(err)
			}
			xmlData, _ := os.ReadFile(path)
			var doc struct {
				Failures int `xml:"failures,attr"`
				Errors   int `xml:"errors,attr"`
			}
			if err := xml.Unmarshal(xmlData, &doc); err != nil {
				t.Fatal(err)
			}
			if failed := doc.Failures+doc.Errors > 0; failed == passed {
				t.Errorf("JUnit: %d failures, %d errors; status %s", doc.Failures, doc.Errors, tt.status)
			}
			if errs := doc.Errors > 0; errs != (tt.status == results.StatusCouldNotRun || tt.status == results.StatusInterrupted) {
				t.Errorf("JUnit: %d errors with status %s: want errors exactly for a run not carried out or interrupted", doc.Errors, tt.status)
			}
		})
	}
}
