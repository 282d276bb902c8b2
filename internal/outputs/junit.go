package outputs

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// The classnames of the JUnit test cases: CI reporters group cases by them.
const (
	// JUnitSteps holds a case per step of the run.
	JUnitSteps = "ceiling.steps"
	// JUnitSLO holds a case per SLO term, judged over the whole run.
	JUnitSLO = "ceiling.slo"
	// JUnitRun holds the one case that carries the run's own verdict: the
	// one ceiling's exit code gives.
	JUnitRun = "ceiling.run"
)

// The types of the JUnit failures, errors and skips, for CI reporters that
// show them.
const (
	failSLO         = "slo"         // a step's SLO terms did not hold
	failInvalid     = "invalid"     // a step's figures cannot be trusted and that fails the run
	failThreshold   = "threshold"   // an SLO term failed over the run
	failRun         = "run"         // the run did not pass
	failNoEdge      = "no_edge"     // find found no edge
	errInterrupted  = "interrupted" // stopped by SIGINT or SIGTERM
	errUnfinished   = "unfinished"  // ceiling was killed mid-run
	skipInterrupted = "interrupted" // a step cut short, not judged
)

// junitSuites is the document: the <testsuites> root.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

// junitSuite is one run.
type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       string           `xml:"time,attr"`
	Timestamp  string           `xml:"timestamp,attr,omitempty"`
	Hostname   string           `xml:"hostname,attr,omitempty"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// junitCase is one test case: at most one of Failure, Error and Skipped.
type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitProblem is a <failure>, <error> or <skipped>: a one-line message,
// its type, and the details as text.
type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes a finished run as a JUnit XML report at path, the
// format GitLab, Jenkins and GitHub test reporters read (Jenkins'
// junit-10.xsd): one test suite for the run with a case per step
// (classname ceiling.steps), a case per SLO term (ceiling.slo, judged over
// the run, as result.json records them) and a case for the run itself
// (ceiling.run).
//
// The report fails exactly when ceiling's exit code does: a step's case
// fails when its SLO failed, its agent was lost, or its figures are INVALID
// in a run that validity findings failed (strict); a term's case when the
// term failed; the run's case when the run did not pass, and it is an error
// when the run was interrupted or left unfinished. A verdict alone
// (OVERLOADED at the top of a stairs) fails nothing, as it fails no run:
// each step's verdict and reasons are in its system-out. In a find the
// steps are probes, some failing by design: only the run's case (the edge
// found or not) is judged.
//
// It writes nothing that result.json does not hold (whose command and
// target are already redacted), and less: no tags, ids or run warnings
// (which quote repeated ids, values that may come from a data file). It
// writes atomically: a temporary file in the same folder, renamed over
// path.
func WriteJUnit(path string, res *results.Result) error {
	data, err := xml.MarshalIndent(junitOf(res), "", "  ")
	if err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	data = append([]byte(xml.Header), append(data, '\n')...)
	if err := results.WriteFile(path, data, results.Public); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}

// junitOf builds the report of r.
func junitOf(r *results.Result) junitSuites {
	target := secret.URL(r.Target) // already redacted; cheap to be sure
	suite := junitSuite{
		Name:      cmp.Or(r.Name, target, "ceiling"),
		Time:      seconds(runSeconds(r)),
		Timestamp: timestamp(r.StartedAt),
		Hostname:  r.Host.Hostname,
	}
	var props []junitProperty
	for _, p := range []junitProperty{{"command", r.Command}, {"target", target}, {"ceiling_version", r.Host.Version}} {
		if p.Value != "" {
			props = append(props, p)
		}
	}
	if len(props) > 0 {
		suite.Properties = &junitProperties{Property: props}
	}
	strict := strictFailed(r)
	terms := termsOf(r)
	for i := range r.Steps {
		suite.Cases = append(suite.Cases, stepCase(r, &r.Steps[i], terms, strict))
	}
	if r.Search == nil { // a find's thresholds judged its probes, not the run
		for _, th := range r.Thresholds {
			suite.Cases = append(suite.Cases, thresholdCase(r, th))
		}
	}
	suite.Cases = append(suite.Cases, runCase(r, strict))
	for _, c := range suite.Cases {
		suite.Tests++
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Error != nil:
			suite.Errors++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	if len(r.Invalid) > 0 {
		suite.SystemOut = "INVALID: " + strings.Join(r.Invalid, "\nINVALID: ")
	}
	return junitSuites{Name: suite.Name, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
}

// runCase is the run's own case: an error when it was interrupted or left
// unfinished, a failure when it did not pass, saying why.
func runCase(r *results.Result, strict bool) junitCase {
	c := junitCase{Name: "run", Classname: JUnitRun, Time: seconds(runSeconds(r))}
	answer := report.Summary(r)
	if r.Search != nil {
		c.Name, answer = "find", report.FindAnswer(r)
	}
	switch {
	case r.Unfinished:
		c.Error = &junitProblem{Type: errUnfinished, Message: "ceiling stopped before the run ended (killed, or a second Ctrl-C): the result is partial and did not pass"}
	case r.Interrupted:
		c.Error = &junitProblem{Type: errInterrupted, Message: "the run was interrupted (SIGINT or SIGTERM): only the steps that finished were judged"}
	case !r.Passed && r.Search != nil:
		c.Failure = &junitProblem{Type: failNoEdge, Message: cmp.Or(report.FindAnswer(r), "no edge found")}
	case !r.Passed:
		why := runReasons(r)
		if strict {
			why = append(why, fmt.Sprintf("the run is strict, and its figures are INVALID (%d validity findings)", len(r.Invalid)))
		}
		if len(why) == 0 {
			why = []string{"the run did not pass"}
		}
		c.Failure = &junitProblem{Type: failRun, Message: strings.Join(why, "; "), Text: strings.Join(why, "\n")}
	}
	if p := cmp.Or(c.Error, c.Failure); p != nil && answer != "" {
		p.Text = strings.TrimSpace(p.Text + "\n" + answer)
	} else if p == nil {
		c.SystemOut = answer
	}
	return c
}

// runReasons lists what failed the run, validity findings aside: its
// failed thresholds, lost agents, INVALID steps and failed required
// events.
func runReasons(r *results.Result) []string {
	var why []string
	for _, th := range r.Thresholds {
		if !th.OK {
			why = append(why, "threshold "+th.Expr+" failed")
		}
	}
	for _, s := range r.Steps {
		switch {
		case s.Lost != "":
			why = append(why, fmt.Sprintf("step %d: %s", s.Index+1, s.Lost))
		case s.Verdict == results.Invalid:
			why = append(why, fmt.Sprintf("step %d is INVALID: %s", s.Index+1, s.VerdictReason))
		}
	}
	for _, e := range r.Events {
		if e.Required && e.Error != "" {
			why = append(why, fmt.Sprintf("required event %s (%s) failed: %s", e.Name, e.Action, e.Error))
		}
	}
	return why
}

// strictFailed reports whether the run's validity findings (Invalid)
// failed it, as a strict run's do. result.json records strictness only for
// a segment, so otherwise it is read from the run's verdict: it did not
// pass, and nothing but its findings explains why (an INVALID step fails
// any run: it explains it).
func strictFailed(r *results.Result) bool {
	switch {
	case len(r.Invalid) == 0:
		return false
	case r.Segment != nil && r.Segment.Strict:
		return true
	}
	return !r.Passed && r.Search == nil && !r.Interrupted && !r.Unfinished && len(runReasons(r)) == 0
}

// stepCase is a step's case: skipped when it was cut short (not judged),
// failed when its SLO failed, its verdict is INVALID, or its figures are
// INVALID in a run that this fails; its verdict and figures go to its
// system-out.
func stepCase(r *results.Result, s *results.Step, terms []slo.Term, strict bool) junitCase {
	c := junitCase{Name: stepName(s), Classname: JUnitSteps, Time: seconds(s.DurationS)}
	details := stepDetails(r, s)
	switch {
	case s.Interrupted:
		c.Skipped = &junitProblem{Type: skipInterrupted, Message: "the run was interrupted during this step: its figures are partial and were not judged"}
	case r.Search != nil:
		// A probe of find: the run's case carries the answer.
	default:
		if why, typ := stepFailure(r, s, terms, strict); len(why) > 0 {
			c.Failure = &junitProblem{Type: typ, Message: strings.Join(why, "; "), Text: details}
			return c
		}
	}
	c.SystemOut = details
	return c
}

// stepFailure says why step s fails the run, and the failure's type;
// nothing when it does not. The reasons are the SLO terms that failed in
// it with their values, its INVALID findings, then its verdict's reasons.
func stepFailure(r *results.Result, s *results.Step, terms []slo.Term, strict bool) ([]string, string) {
	var why []string
	typ := ""
	if s.SLOPassed != nil && !*s.SLOPassed {
		typ = failSLO
		for _, t := range terms {
			if f, ok := termFigures(r, s, t); ok {
				if v, held := t.Eval(f); !held {
					why = append(why, fmt.Sprintf("SLO %s failed: %s", t.Text, termFailure(t, f, v)))
				}
			}
		}
		if len(why) == 0 {
			why = append(why, "the SLO failed")
		}
	}
	var invalid []string
	if s.Lost != "" || s.Verdict == results.Invalid || strict && r.StepInvalid(s.Index) {
		invalid = stepInvalid(r, s.Index)
		if len(invalid) == 0 {
			invalid = []string{cmp.Or(s.Lost, s.VerdictReason)}
		}
		typ = cmp.Or(typ, failInvalid)
		for _, w := range invalid {
			why = append(why, "INVALID: "+w)
		}
	}
	if len(why) == 0 {
		return nil, ""
	}
	var reasons []string
	for _, v := range s.VerdictReasons {
		if !slices.Contains(invalid, v) {
			reasons = append(reasons, v)
		}
	}
	if s.Verdict != "" && (len(reasons) > 0 || len(s.VerdictReasons) == 0) {
		why = append(why, strings.TrimSuffix("verdict "+s.Verdict+": "+strings.Join(reasons, ", "), ": "))
	}
	return why, typ
}

// stepDetails is a step's verdict, figures, findings, notes and warnings,
// a line each.
func stepDetails(r *results.Result, s *results.Step) string {
	var b strings.Builder
	if s.Verdict != "" {
		fmt.Fprintf(&b, "verdict: %s", s.Verdict)
		if len(s.VerdictReasons) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(s.VerdictReasons, "; "))
		}
		b.WriteByte('\n')
	}
	if s.SLOPassed != nil {
		fmt.Fprintf(&b, "slo: %s\n", map[bool]string{true: "passed", false: "failed"}[*s.SLOPassed])
	}
	if r.Search != nil && !s.Interrupted {
		fmt.Fprintf(&b, "probe: %s\n", map[bool]string{true: "passed", false: "did not pass"}[probePassed(r, s)])
	}
	fmt.Fprintf(&b, "sent %d, completed %d, ok %d, failed %d (errors %s), limited %d, achieved %s, p50 %s, p95 %s, p99 %s, max %s\n",
		s.Sent, s.Completed, s.OK, s.Failed, report.Percent(s.ErrorRate), s.Limited, report.Rate(s.AchievedRate),
		report.Millis(s.LatencyMS.P50), report.Millis(s.LatencyMS.P95), report.Millis(s.LatencyMS.P99), report.Millis(s.LatencyMS.Max))
	for _, w := range stepInvalid(r, s.Index) {
		fmt.Fprintf(&b, "INVALID: %s\n", w)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// probePassed judges a step as find does: its SLO held, its verdict is
// neither OVERLOADED nor GENERATOR LIMITED, and its figures are valid.
func probePassed(r *results.Result, s *results.Step) bool {
	return s.Verdict != results.Overloaded && s.Verdict != results.GeneratorLimited &&
		(s.SLOPassed == nil || *s.SLOPassed) && !r.StepInvalid(s.Index)
}

// stepInvalid returns the run's validity findings about the step of that
// index, without their "step N: " prefix.
func stepInvalid(r *results.Result, index int) []string {
	prefix := fmt.Sprintf("step %d: ", index+1)
	var out []string
	for _, w := range r.Invalid {
		if rest, ok := strings.CutPrefix(w, prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// stepName names a step by its number and level: "step 1: 200/s", "step
// 2: 50 VUs", "step 3: 200/s (send)" for a scenario run alone.
func stepName(s *results.Step) string {
	level := report.Rate(s.TargetRate)
	if s.Model == "closed" {
		level = fmt.Sprintf("%d VUs", s.VUs)
	}
	name := fmt.Sprintf("step %d: %s", s.Index+1, level)
	if s.Scenario != "" {
		name += " (" + s.Scenario + ")"
	}
	return name
}

// runSeconds is how long the run took: from its start to its end, or the
// sum of its steps' windows when it has no end.
func runSeconds(r *results.Result) float64 {
	if r.EndedAt != nil && !r.StartedAt.IsZero() {
		return r.EndedAt.Sub(r.StartedAt).Seconds()
	}
	var sum float64
	for _, s := range r.Steps {
		sum += s.DurationS
	}
	return sum
}

// seconds formats a duration in seconds as JUnit's time attribute wants
// it: digits, a point, milliseconds; never negative.
func seconds(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
		s = 0
	}
	return fmt.Sprintf("%.3f", s)
}

// timestamp formats t as JUnit's timestamp attribute: ISO 8601 in UTC
// without a zone (Ant's form, which every reader accepts); empty when t is
// zero.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}
