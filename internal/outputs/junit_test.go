// The JUnit reports are validated against testdata/junit.xsd: the Jenkins
// xUnit plugin's junit-10.xsd (MIT License, Copyright (c) 2014 Gregory
// Boissinot; its header is kept in the file), unchanged, from
// https://github.com/jenkinsci/xunit-plugin/blob/031e285ef3b60dee7aaf36e9096d7dcd95ffae83/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd
// It is read with xmllint (Debian package libxml2-utils); without it that
// test is skipped.

package outputs

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// The report as a CI reporter reads it: types of the test's own, so that
// the test does not read back through the types that wrote it.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name      string  `xml:"name,attr"`
	Tests     int     `xml:"tests,attr"`
	Failures  int     `xml:"failures,attr"`
	Errors    int     `xml:"errors,attr"`
	Skipped   int     `xml:"skipped,attr"`
	Time      string  `xml:"time,attr"`
	Timestamp string  `xml:"timestamp,attr"`
	Props     []xProp `xml:"properties>property"`
	Cases     []xCase `xml:"testcase"`
	SystemOut string  `xml:"system-out"`
}

type xProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *xProblem `xml:"failure"`
	Error     *xProblem `xml:"error"`
	Skipped   *xProblem `xml:"skipped"`
	SystemOut string    `xml:"system-out"`
}

type xProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

var started = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// openStep is a step of the open model at rate, with that p99 and that
// many failures of 2000 exchanges.
func openStep(i int, rate, p99 float64, failed int64) results.Step {
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

// wrongURL is a step in which every request got a 404: INVALID.
func wrongURL(i int, rate float64) results.Step {
	s := openStep(i, rate, 3, 2000)
	s.Errors = map[string]int64{"http_4xx": 2000}
	s.Status4xx = 404
	return s
}

// redirected is a step whose every answer came after following a redirect:
// HEALTHY by its figures, with a validity finding that fails a strict run.
func redirected(i int, rate float64) results.Step {
	s := openStep(i, rate, 3, 0)
	s.Redirected = 2000
	return s
}

// judged judges r as a session does (run.Session.judge): the SLO, the
// verdicts and validity, a strict run's findings, an unfinished run.
func judged(t *testing.T, r *results.Result, expr string, strict bool, search ...*results.Search) *results.Result {
	t.Helper()
	terms, err := slo.Parse(expr)
	if err != nil {
		t.Fatalf("slo.Parse(%q): %v", expr, err)
	}
	r.Schema, r.Command, r.StartedAt = results.Schema, "ceiling run plan.yaml", started
	r.Host = results.Host{Hostname: "ci-runner", OS: "linux", CPUs: 4, Version: "v0.9.0"}
	if !r.Unfinished {
		ended := started.Add(25 * time.Second)
		r.EndedAt = &ended
	}
	if len(search) > 0 {
		r.Search = search[0]
	}
	r.Evaluate(terms)
	rules := results.DefaultRules
	rules.Strict = strict
	r.Judge(rules)
	return r
}

// fixtures are finished runs of every kind the report tells apart.
func fixtures(t *testing.T) map[string]*results.Result {
	interrupted := &results.Result{Name: "checkout", Interrupted: true,
		Steps: []results.Step{openStep(0, 200, 50, 0), openStep(1, 400, 90, 0)}}
	interrupted.Steps[1].Interrupted = true
	find := judged(t, &results.Result{Name: "edge", Steps: []results.Step{openStep(0, 100, 50, 0), openStep(1, 200, 1200, 0)}}, "p99<200ms", true,
		&results.Search{Start: 100, Precision: 0.05, Outcome: "edge", Answer: "edge: 100/s at p99<200ms; 200/s fails: p99 1.20 s"})
	noEdge := judged(t, &results.Result{Name: "edge", Steps: []results.Step{openStep(0, 100, 900, 0)}}, "p99<200ms", true,
		&results.Search{Start: 100, Precision: 0.05, Outcome: "start_fails", Answer: "no edge: the first step, 100/s, fails: p99 900 ms"})
	hostile := &results.Result{Name: `a <b> & "c" 'd' ]]>`, Target: "http://example.test/?q=<x>&y=1",
		Steps: []results.Step{openStep(0, 200, 50, 0)}}
	hostile.Steps[0].Scenario = "send]]><x/>"
	hostile.Steps[0].Warnings = []string{"bad\x00byte\x1b[31m and a\nnewline & <tag>"}
	closed := &results.Result{Name: "users", Steps: []results.Step{openStep(0, 0, 80, 0)}}
	closed.Steps[0].Model, closed.Steps[0].VUs = "closed", 50
	return map[string]*results.Result{
		"pass":              judged(t, &results.Result{Name: "checkout", Steps: []results.Step{openStep(0, 200, 50, 0), openStep(1, 400, 120, 0)}}, "p99<200ms, errors<1%", false),
		"slo fails":         judged(t, &results.Result{Name: "checkout", Steps: []results.Step{openStep(0, 200, 50, 0), openStep(1, 400, 312, 0)}}, "p99<200ms, errors<1%", false),
		"closed":            judged(t, closed, "", false),
		"invalid":           judged(t, &results.Result{Target: "http://127.0.0.1:8080/nope", Steps: []results.Step{wrongURL(0, 200)}}, "", false),
		"redirected":        judged(t, &results.Result{Target: "http://127.0.0.1:8080/dashboard", Steps: []results.Step{redirected(0, 200)}}, "", false),
		"redirected strict": judged(t, &results.Result{Target: "http://127.0.0.1:8080/dashboard", Steps: []results.Step{redirected(0, 200)}}, "", true),
		"interrupted":       judged(t, interrupted, "p99<200ms", false),
		"unfinished":        judged(t, &results.Result{Name: "checkout", Unfinished: true, Steps: []results.Step{openStep(0, 200, 50, 0)}}, "p99<200ms", false),
		"find":              find,
		"find no edge":      noEdge,
		"hostile":           judged(t, hostile, "", false),
	}
}

// writeJUnit writes r's report in a temporary folder and reads it back.
func writeJUnit(t *testing.T, r *results.Result) (xSuites, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(path, r); err != nil {
		t.Fatalf("WriteJUnit: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc xSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("xml.Unmarshal(report) = %v\n%s", err, data)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("report has %d test suites, want 1\n%s", len(doc.Suites), data)
	}
	return doc, path
}

// caseNamed returns the case of that name, failing the test when there is none.
func caseNamed(t *testing.T, s xSuite, name string) xCase {
	t.Helper()
	for _, c := range s.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no test case %q among %v", name, names(s))
	return xCase{}
}

func names(s xSuite) []string {
	var out []string
	for _, c := range s.Cases {
		out = append(out, c.Classname+"/"+c.Name)
	}
	return out
}

func TestWriteJUnitCounts(t *testing.T) {
	all := fixtures(t)
	tests := []struct {
		fixture                          string
		suite                            string
		tests, failures, errors, skipped int
		cases                            []string
	}{
		{"pass", "checkout", 5, 0, 0, 0, []string{"ceiling.steps/step 1: 200/s", "ceiling.steps/step 2: 400/s", "ceiling.slo/slo: p99<200ms", "ceiling.slo/slo: errors<1%", "ceiling.run/run"}},
		{"slo fails", "checkout", 5, 3, 0, 0, []string{"ceiling.steps/step 1: 200/s", "ceiling.steps/step 2: 400/s", "ceiling.slo/slo: p99<200ms", "ceiling.slo/slo: errors<1%", "ceiling.run/run"}},
		{"closed", "users", 2, 0, 0, 0, []string{"ceiling.steps/step 1: 50 VUs", "ceiling.run/run"}},
		{"invalid", "http://127.0.0.1:8080/nope", 2, 2, 0, 0, []string{"ceiling.steps/step 1: 200/s", "ceiling.run/run"}},
		{"redirected", "http://127.0.0.1:8080/dashboard", 2, 0, 0, 0, []string{"ceiling.steps/step 1: 200/s", "ceiling.run/run"}},
		{"redirected strict", "http://127.0.0.1:8080/dashboard", 2, 2, 0, 0, []string{"ceiling.steps/step 1: 200/s", "ceiling.run/run"}},
		{"interrupted", "checkout", 4, 0, 1, 1, []string{"ceiling.steps/step 1: 200/s", "ceiling.steps/step 2: 400/s", "ceiling.slo/slo: p99<200ms", "ceiling.run/run"}},
		{"unfinished", "checkout", 3, 0, 1, 0, []string{"ceiling.steps/step 1: 200/s", "ceiling.slo/slo: p99<200ms", "ceiling.run/run"}},
		{"find", "edge", 3, 0, 0, 0, []string{"ceiling.steps/step 1: 100/s", "ceiling.steps/step 2: 200/s", "ceiling.run/find"}},
		{"find no edge", "edge", 2, 1, 0, 0, []string{"ceiling.steps/step 1: 100/s", "ceiling.run/find"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			doc, _ := writeJUnit(t, all[tt.fixture])
			s := doc.Suites[0]
			got := []int{s.Tests, s.Failures, s.Errors, s.Skipped, doc.Tests, doc.Failures, doc.Errors}
			want := []int{tt.tests, tt.failures, tt.errors, tt.skipped, tt.tests, tt.failures, tt.errors}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("counts (suite tests, failures, errors, skipped; root tests, failures, errors) (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.cases, names(s)); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if s.Name != tt.suite || doc.Name != tt.suite {
				t.Errorf("suite name = %q (root %q), want %q", s.Name, doc.Name, tt.suite)
			}
			if s.Timestamp != "2025-03-04T05:06:07" {
				t.Errorf("timestamp = %q, want 2025-03-04T05:06:07", s.Timestamp)
			}
			if c := caseNamed(t, s, s.Cases[0].Name); c.Time != "10.000" {
				t.Errorf("%s: time = %q, want the step's window, 10.000", c.Name, c.Time)
			}
		})
	}
}

// A JUnit report fails (has failures or errors) exactly when ceiling's
// exit code does: when the result did not pass.
func TestWriteJUnitMatchesExitCode(t *testing.T) {
	for name, r := range fixtures(t) {
		doc, _ := writeJUnit(t, r)
		if failed := doc.Failures+doc.Errors > 0; failed != !r.Passed {
			t.Errorf("%s: report failed = %v (%d failures, %d errors), want %v (passed %v)", name, failed, doc.Failures, doc.Errors, !r.Passed, r.Passed)
		}
	}
}

func TestWriteJUnitSLOFailure(t *testing.T) {
	doc, _ := writeJUnit(t, fixtures(t)["slo fails"])
	s := doc.Suites[0]
	if c := caseNamed(t, s, "step 1: 200/s"); c.Failure != nil || !strings.Contains(c.SystemOut, "verdict: HEALTHY") {
		t.Errorf("step 1: failure %+v, system-out %q; want a pass whose output gives its verdict", c.Failure, c.SystemOut)
	}
	c := caseNamed(t, s, "step 2: 400/s")
	if c.Failure == nil {
		t.Fatalf("step 2 passed, want a failure")
	}
	if want := "SLO p99<200ms failed: p99 312 ms > 200 ms"; !strings.HasPrefix(c.Failure.Message, want) {
		t.Errorf("step 2: failure message = %q, want it to begin %q", c.Failure.Message, want)
	}
	if strings.Contains(c.Failure.Message, "errors<1%") {
		t.Errorf("step 2: failure message = %q names errors<1%%, which held", c.Failure.Message)
	}
	if !strings.Contains(c.Failure.Message, "verdict STRESSED: p95 249.6ms ≥ 100ms") || c.Failure.Type != "slo" {
		t.Errorf("step 2: failure = %+v, want type slo and the verdict's reason", c.Failure)
	}
	th := caseNamed(t, s, "slo: p99<200ms")
	if th.Failure == nil || th.Failure.Message != "p99<200ms failed: step 2 (400/s): p99 312 ms > 200 ms" {
		t.Errorf("slo: p99<200ms: failure = %+v, want the step it failed in and its value", th.Failure)
	}
	if ok := caseNamed(t, s, "slo: errors<1%"); ok.Failure != nil || ok.SystemOut != "held in every judged step; worst: errors 0.00%" {
		t.Errorf("slo: errors<1%%: failure %+v, system-out %q; want a pass with its worst value", ok.Failure, ok.SystemOut)
	}
	if run := caseNamed(t, s, "run"); run.Failure == nil || run.Failure.Message != "threshold p99<200ms failed" {
		t.Errorf("run: failure = %+v, want threshold p99<200ms failed", run.Failure)
	}
}

// An INVALID step (every request refused with a 404) fails its case and
// the run, strict or not, saying why once. A validity finding (answers
// that came after a redirect) makes a strict run's step INVALID, which
// fails step and run; a run that opted out of strictness says the finding
// in a passing case.
func TestWriteJUnitInvalid(t *testing.T) {
	all := fixtures(t)
	const why = "every request failed with 404 Not Found: check the URL and method"
	doc, _ := writeJUnit(t, all["invalid"])
	c := caseNamed(t, doc.Suites[0], "step 1: 200/s")
	if c.Failure == nil || c.Failure.Type != "invalid" || !strings.HasPrefix(c.Failure.Message, "INVALID: "+why) {
		t.Fatalf("INVALID step: failure = %+v, want type invalid, message INVALID: %s", c.Failure, why)
	}
	if strings.Count(c.Failure.Message, why) != 1 {
		t.Errorf("failure message = %q: the verdict's reason repeats the finding", c.Failure.Message)
	}
	if run := caseNamed(t, doc.Suites[0], "run"); run.Failure == nil || !strings.Contains(run.Failure.Message, "step 1 is INVALID: "+why) {
		t.Errorf("run with an INVALID step: failure = %+v, want one that names the step and why", run.Failure)
	}
	const finding = "2000 answers counted as ok came after following a redirect"
	doc, _ = writeJUnit(t, all["redirected"])
	c = caseNamed(t, doc.Suites[0], "step 1: 200/s")
	if c.Failure != nil || !strings.Contains(c.SystemOut, "INVALID: "+finding) || !strings.Contains(c.SystemOut, "verdict: HEALTHY") {
		t.Errorf("a finding in a run that is not strict: failure %+v, system-out %q; want a pass that says the finding", c.Failure, c.SystemOut)
	}
	doc, _ = writeJUnit(t, all["redirected strict"])
	c = caseNamed(t, doc.Suites[0], "step 1: 200/s")
	if c.Failure == nil || c.Failure.Type != "invalid" || !strings.HasPrefix(c.Failure.Message, "INVALID: "+finding) {
		t.Fatalf("a finding in a strict run: failure = %+v, want type invalid, message INVALID: %s", c.Failure, finding)
	}
	if run := caseNamed(t, doc.Suites[0], "run"); run.Failure == nil || !strings.Contains(run.Failure.Message, "step 1 is INVALID: 2000 answers after a redirect") {
		t.Errorf("run of a strict run with findings: failure = %+v, want one that says the step is INVALID and why", run.Failure)
	}
}

func TestWriteJUnitInterrupted(t *testing.T) {
	all := fixtures(t)
	doc, _ := writeJUnit(t, all["interrupted"])
	s := doc.Suites[0]
	if c := caseNamed(t, s, "run"); c.Error == nil || c.Error.Type != "interrupted" || c.Failure != nil {
		t.Errorf("run of an interrupted run: error %+v, failure %+v; want an error of type interrupted", c.Error, c.Failure)
	}
	if c := caseNamed(t, s, "step 2: 400/s"); c.Skipped == nil || c.Failure != nil {
		t.Errorf("step cut short: skipped %+v, failure %+v; want it skipped", c.Skipped, c.Failure)
	}
	if c := caseNamed(t, s, "step 1: 200/s"); c.Failure != nil || c.Skipped != nil {
		t.Errorf("step finished before the interruption: failure %+v, skipped %+v; want a pass", c.Failure, c.Skipped)
	}
	doc, _ = writeJUnit(t, all["unfinished"])
	if c := caseNamed(t, doc.Suites[0], "run"); c.Error == nil || c.Error.Type != "unfinished" {
		t.Errorf("run of an unfinished run: error = %+v, want an error of type unfinished", c.Error)
	}
}

// Everything from the result is text: names, targets and warnings holding
// markup, quotes or bytes XML cannot carry come back as written (those
// bytes replaced).
func TestWriteJUnitEscapes(t *testing.T) {
	r := fixtures(t)["hostile"]
	doc, path := writeJUnit(t, r)
	s := doc.Suites[0]
	if s.Name != r.Name {
		t.Errorf("suite name = %q, want %q", s.Name, r.Name)
	}
	if i := slices.IndexFunc(s.Props, func(p xProp) bool { return p.Name == "target" }); i < 0 || s.Props[i].Value != r.Target {
		t.Errorf("properties = %v, want target %q", s.Props, r.Target)
	}
	if c := s.Cases[0]; c.Name != "step 1: 200/s (send]]><x/>)" || !strings.Contains(c.SystemOut, "warning: bad\uFFFDbyte\uFFFD[31m and a\nnewline & <tag>") {
		t.Errorf("step case: name %q, system-out %q", c.Name, c.SystemOut)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "<x/>") || strings.ContainsRune(string(data), 0) {
		t.Errorf("report holds unescaped markup or a NUL byte:\n%s", data)
	}
}

// Every report validates against the JUnit schema CI reporters read.
func TestWriteJUnitSchema(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not installed (Debian package libxml2-utils): cannot validate against testdata/junit.xsd")
	}
	for name, r := range fixtures(t) {
		_, path := writeJUnit(t, r)
		out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Errorf("%s: xmllint: %v\n%s\n%s", name, err, out, data)
		}
	}
}

func TestWriteJUnitAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fixtures(t)["pass"]
	if err := WriteJUnit(path, r); err != nil {
		t.Fatalf("WriteJUnit over an old report: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "junit.xml" {
		t.Errorf("folder holds %v, want only junit.xml (no temporary file left)", entries)
	}
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "<?xml") {
		t.Errorf("report = %.40q..., want the new XML over the old file", data)
	}
	err = WriteJUnit(filepath.Join(dir, "missing", "junit.xml"), r)
	if err == nil || !strings.Contains(err.Error(), "write junit report") {
		t.Errorf("WriteJUnit into a missing folder = %v, want an error naming the junit report", err)
	}
}

// In a find the steps are probes, some failing by design: only the edge,
// found or not, is judged.
func TestWriteJUnitFind(t *testing.T) {
	all := fixtures(t)
	doc, _ := writeJUnit(t, all["find"])
	s := doc.Suites[0]
	if c := caseNamed(t, s, "step 2: 200/s"); c.Failure != nil || !strings.Contains(c.SystemOut, "probe: did not pass") {
		t.Errorf("probe above the edge: failure %+v, system-out %q; want a pass that says the probe did not", c.Failure, c.SystemOut)
	}
	if c := caseNamed(t, s, "find"); c.Failure != nil || c.SystemOut != all["find"].Search.Answer {
		t.Errorf("find: failure %+v, system-out %q; want a pass with the answer", c.Failure, c.SystemOut)
	}
	doc, _ = writeJUnit(t, all["find no edge"])
	c := caseNamed(t, doc.Suites[0], "find")
	if want := all["find no edge"].Search.Answer; c.Failure == nil || c.Failure.Type != "no_edge" || c.Failure.Message != want {
		t.Errorf("find without an edge: failure = %+v, want type no_edge, message %q", c.Failure, want)
	}
}
