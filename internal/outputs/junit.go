package outputs

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"math"
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
	failSLO         = "slo"           // a step's SLO terms did not hold
	failInvalid     = "invalid"       // a step's figures cannot be trusted and that fails the run
	failThreshold   = "threshold"     // an SLO term failed over the run
	failRun         = "run"           // the run did not pass
	failStep        = "step"          // a step is among the reasons it did not (GENERATOR LIMITED, a dead target, a lost agent, an event)
	errCouldNotRun  = "could_not_run" // the run could not be carried out (a dead target, a lost agent, a required event failed)
	failNoEdge      = "no_edge"       // find found no edge
	errInterrupted  = "interrupted"   // stopped by SIGINT or SIGTERM
	errUnfinished   = "unfinished"    // ceiling was killed mid-run
	skipInterrupted = "interrupted"   // a step cut short, not judged
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
// The report fails exactly when ceiling's exit code does, since both read
// the run's outcome (results.Outcome): the run's case fails with every
// reason the outcome gives (an error when the run was interrupted, left
// unfinished or could not be carried out), and a step's case fails when
// the step is one of those reasons (its SLO failed, its verdict is INVALID
// or GENERATOR LIMITED, its agent was lost, its target died). A verdict
// alone (OVERLOADED at the top of a stairs) fails no step's case, as it
// fails no run: each step's verdict and reasons are in its system-out. In
// a find the steps are probes, some failing by design: only the run's
// case (the edge found or not) is judged.
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
	terms := termsOf(r)
	for i := range r.Steps {
		suite.Cases = append(suite.Cases, stepCase(r, &r.Steps[i], terms))
	}
	if r.Search == nil { // a find's thresholds judged its probes, not the run
		for _, th := range r.Thresholds {
			suite.Cases = append(suite.Cases, thresholdCase(r, th))
		}
	}
	suite.Cases = append(suite.Cases, runCase(r))
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

// runCase is the run's own case, from its outcome: an error when it was
// interrupted, left unfinished or could not be carried out, a failure
// when it failed, each with every reason.
func runCase(r *results.Result) junitCase {
	c := junitCase{Name: "run", Classname: JUnitRun, Time: seconds(runSeconds(r))}
	answer := report.Summary(r)
	if r.Search != nil {
		c.Name, answer = "find", report.FindAnswer(r)
	}
	o := r.Outcome
	var why []string
	for _, rs := range o.Reasons {
		why = append(why, rs.String())
	}
	if len(why) == 0 {
		why = []string{"the run did not pass"}
	}
	problem := &junitProblem{Message: strings.Join(why, "; "), Text: strings.Join(why, "\n")}
	switch {
	case o.Status == results.StatusUnfinished || o.Status == "" && r.Unfinished:
		problem.Type, problem.Message = errUnfinished, "ceiling stopped before the run ended (killed, or a second Ctrl-C): the result is partial and did not pass"
		c.Error = problem
	case o.Status == results.StatusInterrupted || o.Status == "" && r.Interrupted:
		problem.Type, problem.Message = errInterrupted, "the run was interrupted (SIGINT or SIGTERM): only the steps that finished were judged"
		c.Error = problem
	case o.Status == results.StatusCouldNotRun:
		problem.Type = errCouldNotRun
		c.Error = problem
	case !r.Passed && r.Search != nil:
		problem.Type, problem.Message = failNoEdge, cmp.Or(report.FindAnswer(r), "no edge found")
		c.Failure = problem
	case !r.Passed:
		problem.Type = failRun
		c.Failure = problem
	}
	if p := cmp.Or(c.Error, c.Failure); p != nil && answer != "" {
		p.Text = strings.TrimSpace(p.Text + "\n" + answer)
	} else if p == nil {
		c.SystemOut = answer
	}
	return c
}

// stepCase is a step's case: skipped when it was cut short (not judged),
// failed when it is among the reasons the run did not pass; its verdict
// and figures go to its system-out.
func stepCase(r *results.Result, s *results.Step, terms []slo.Term) junitCase {
	c := junitCase{Name: stepName(s), Classname: JUnitSteps, Time: seconds(s.DurationS)}
	details := stepDetails(r, s)
	switch {
	case s.Interrupted && (s.Target == nil || s.Target.Died == ""):
		c.Skipped = &junitProblem{Type: skipInterrupted, Message: "the run was interrupted during this step: its figures are partial and were not judged"}
	case r.Search != nil:
		// A probe of find: the run's case carries the answer.
	default:
		if why, typ := stepFailure(r, s, terms); len(why) > 0 {
			c.Failure = &junitProblem{Type: typ, Message: strings.Join(why, "; "), Text: details}
			return c
		}
	}
	c.SystemOut = details
	return c
}

// stepFailure says why step s fails the run, and the failure's type;
// nothing when it does not. The reasons are the SLO terms that failed in
// it with their values, then what the run's outcome says of the step (its
// verdict INVALID or GENERATOR LIMITED, a lost agent, a dead target).
func stepFailure(r *results.Result, s *results.Step, terms []slo.Term) ([]string, string) {
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
	for _, rs := range r.Outcome.Reasons {
		switch {
		case rs.Step != s.Index+1 || rs.Kind == results.ReasonThreshold:
		case rs.Kind == results.ReasonInvalid:
			typ = cmp.Or(typ, failInvalid)
			if invalid = stepInvalid(r, s.Index); len(invalid) == 0 {
				invalid = []string{s.VerdictReason}
			}
			for _, w := range invalid {
				why = append(why, "INVALID: "+w)
			}
		default:
			typ = cmp.Or(typ, failStep)
			why = append(why, rs.Text)
		}
	}
	if len(why) == 0 {
		return nil, ""
	}
	if s.Verdict != "" && s.Verdict != results.Invalid && len(s.VerdictReasons) > 0 {
		why = append(why, "verdict "+s.Verdict+": "+strings.Join(s.VerdictReasons, ", "))
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
		fmt.Fprintf(&b, "probe: %s\n", map[bool]string{true: "passed", false: "did not pass"}[probePassed(s)])
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

// probePassed says whether a probe of find passed (results.Step.Pass).
func probePassed(s *results.Step) bool {
	ok, _ := s.Pass()
	return ok
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
