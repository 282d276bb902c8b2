package results

import (
	"fmt"
	"strings"
)

// Outcome is a run's one answer: whether it passed and, when it did not,
// every reason why. decide computes it, from every finding of the result,
// each time the run is judged; the table, its footer, result.json, JUnit,
// the job summary, the live page and the exit code all read it, so that no
// two of them can disagree (docs/cli.md maps its status to an exit code).
type Outcome struct {
	// Status is StatusPassed, StatusFailed, StatusCouldNotRun,
	// StatusInterrupted or StatusUnfinished.
	Status string `json:"status"`
	// Strict says validity findings (redirects, bodies of the same page,
	// percentiles the timeout shaped, repeated ids) fail the run: the
	// default; false when the plan (strict: false) or --strict=false
	// opted out, and the findings then only warn.
	Strict bool `json:"strict"`
	// Reasons say why a run that did not pass did not, the gravest first:
	// what stopped it, then what failed it; empty when it passed.
	Reasons []Reason `json:"reasons"`
}

// Reason is one finding that kept a run from passing.
type Reason struct {
	// Kind is one of the Reason… constants.
	Kind string `json:"kind"`
	// Step is the step it is about, from 1 as the table numbers them; 0
	// for the run as a whole.
	Step int `json:"step,omitempty"`
	// Text says it in a sentence.
	Text string `json:"text"`
}

// The statuses of an Outcome.
const (
	// StatusPassed: every step judged, every threshold held, nothing found
	// that makes the figures untrustworthy, and (a run) some step passed
	// or (find) an edge was found.
	StatusPassed = "passed"
	// StatusFailed: the run was carried out, and a finding fails it.
	StatusFailed = "failed"
	// StatusCouldNotRun: the run could not be carried out to its end: the
	// target died, an agent was lost, a required event failed.
	StatusCouldNotRun = "could_not_run"
	// StatusInterrupted: SIGINT or SIGTERM stopped it.
	StatusInterrupted = "interrupted"
	// StatusUnfinished: the file was written before the run ended, and the
	// ceiling that wrote it never wrote it again (killed).
	StatusUnfinished = "unfinished"
)

// The kinds of a Reason, in the order decide lists them.
const (
	ReasonUnfinished  = "unfinished"
	ReasonInterrupted = "interrupted"
	// ReasonTargetDied: the watched command target died on its own (a
	// crash, an exit, the OOM killer), not by ceiling's hand.
	ReasonTargetDied = "target_died"
	// ReasonNotStarted: the target never started (every shape of a sweep
	// failed to).
	ReasonNotStarted = "not_started"
	// ReasonAgentLost: an agent stopped answering during a step.
	ReasonAgentLost = "agent_lost"
	// ReasonEventFailed: a required event's command or action failed.
	ReasonEventFailed = "event_failed"
	// ReasonInvalid: a step is INVALID (a request the target refuses, no
	// login, and in a strict run any validity finding), or a strict run
	// found repeated ids.
	ReasonInvalid = "invalid"
	// ReasonThreshold: an SLO term failed.
	ReasonThreshold = "threshold"
	// ReasonGeneratorLimited: ceiling could not hold a step's load: what
	// that step measured is ceiling's limit, not the target's.
	ReasonGeneratorLimited = "generator_limited"
	// ReasonNotRecovered: the target did not recover from an event within
	// its step.
	ReasonNotRecovered = "not_recovered"
	// ReasonNoStepPassed: a run none of whose judged steps passed (each
	// OVERLOADED, GENERATOR LIMITED or INVALID, or its SLO failed).
	ReasonNoStepPassed = "no_step_passed"
	// ReasonNoEdge: find found no level that passed.
	ReasonNoEdge = "no_edge"
	// ReasonSoakDrift: a soak's figure is DRIFTING toward a known limit
	// (memory, descriptors, the SLO) that its line reaches within the
	// soak's horizon.
	ReasonSoakDrift = "soak_drift"
	// ReasonSoakSLO: a soak's SLO broke in one of its windows.
	ReasonSoakSLO = "soak_slo"
)

// Passed reports whether the outcome is a pass.
func (o Outcome) Passed() bool { return o.Status == StatusPassed }

// Summary is the reasons in one line, "; " between them; "passed" when
// there are none.
func (o Outcome) Summary() string {
	if len(o.Reasons) == 0 {
		return o.Status
	}
	parts := make([]string, len(o.Reasons))
	for i, r := range o.Reasons {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// String is the reason with its step: "step 2: p99 3.9 s > 200 ms".
func (r Reason) String() string {
	if r.Step > 0 && !strings.HasPrefix(r.Text, fmt.Sprintf("step %d", r.Step)) {
		return fmt.Sprintf("step %d: %s", r.Step, r.Text)
	}
	return r.Text
}

// decide sets r.Outcome and r.Passed from every finding of the judged
// result: the one place where a run's pass is decided. A run passes when
// it finished, nothing stopped it (a target that died, a lost agent, a
// required event that failed), no step is INVALID or GENERATOR LIMITED, no
// threshold failed, every event's target recovered, a soak's figures
// drift toward no known limit within its horizon and its SLO held in
// every window, a strict run found nothing that makes its figures
// untrustworthy, and some judged step passed (a run) or an edge was found
// (find). In a find the steps are
// probes, some failing by design: their verdicts, thresholds and events
// judge the probes (Step.Passed), and the run passes on its edge.
func (r *Result) decide(strict bool) {
	o := Outcome{Strict: strict, Reasons: []Reason{}}
	add := func(kind string, step int, format string, args ...any) {
		o.Reasons = append(o.Reasons, Reason{Kind: kind, Step: step, Text: fmt.Sprintf(format, args...)})
	}
	find := r.Search != nil
	r.stopReasons(add)
	r.stepReasons(find, add)
	r.eventReasons(find, add)
	if !find {
		r.thresholdReasons(add)
	}
	if r.Soak != nil {
		r.Soak.reasons(add)
	}
	if strict {
		r.duplicateReasons(add)
	}
	if find {
		r.edgeReasons(add)
	} else {
		r.noStepPassed(add)
	}
	o.Status = StatusOf(o.Reasons)
	r.Outcome, r.Passed = o, o.Passed()
}

// stopReasons adds a reason for what stopped the run before its end: a
// ceiling that was killed, or a signal.
func (r *Result) stopReasons(add func(kind string, step int, format string, args ...any)) {
	if r.Unfinished {
		add(ReasonUnfinished, 0, "ceiling stopped before the run ended (killed, or a second Ctrl-C): the result is partial")
	}
	if r.Interrupted {
		add(ReasonInterrupted, 0, "the run was interrupted (SIGINT or SIGTERM): only the steps that finished were judged")
	}
}

// stepReasons adds one reason per step that kept the run from passing: a
// lost agent or a dead target, and outside a find (where probes fail by
// design) an INVALID or GENERATOR LIMITED verdict.
func (r *Result) stepReasons(find bool, add func(kind string, step int, format string, args ...any)) {
	for _, s := range r.Steps {
		n := s.Index + 1
		switch {
		case s.Lost != "":
			add(ReasonAgentLost, n, "%s", s.Lost)
		case s.Target != nil && s.Target.Died != "":
			add(ReasonTargetDied, n, "the target died (%s)", s.Target.Died)
		case find:
		case s.Verdict == Invalid:
			add(ReasonInvalid, n, "step %d is INVALID: %s", n, s.VerdictReason)
		case s.Verdict == GeneratorLimited && !s.Interrupted:
			add(ReasonGeneratorLimited, n, "step %d is GENERATOR LIMITED: %s", n, s.VerdictReason)
		}
	}
}

// eventReasons adds a reason per required event that failed and, outside
// a find, per event the target did not recover from.
func (r *Result) eventReasons(find bool, add func(kind string, step int, format string, args ...any)) {
	for _, e := range r.Events {
		switch {
		case e.Required && e.Error != "":
			add(ReasonEventFailed, e.Step+1, "required event %s (%s) failed: %s", e.Name, e.Action, e.Error)
		case !find && e.Recovery == NotRecovered:
			add(ReasonNotRecovered, e.Step+1, "the target did not recover from event %s (%s) before the step ended", e.Name, e.Action)
		}
	}
}

// thresholdReasons adds a reason per threshold that failed.
func (r *Result) thresholdReasons(add func(kind string, step int, format string, args ...any)) {
	for _, th := range r.Thresholds {
		if !th.OK {
			add(ReasonThreshold, 0, "threshold %s failed", th.Expr)
		}
	}
}

// duplicateReasons adds one reason, in a strict run, when ids were
// repeated.
func (r *Result) duplicateReasons(add func(kind string, step int, format string, args ...any)) {
	if len(r.DuplicateIDs) == 0 {
		return
	}
	var what []string
	for _, d := range r.DuplicateIDs {
		what = append(what, fmt.Sprintf("%s repeated %d times", d.Source, d.Count))
	}
	add(ReasonInvalid, 0, "repeated ids (%s): a target that drops or merges repeats makes these figures wrong", strings.Join(what, ", "))
}

// edgeReasons adds a reason when a find that was not interrupted found no
// edge.
func (r *Result) edgeReasons(add func(kind string, step int, format string, args ...any)) {
	if !r.Interrupted && r.Search.Outcome != "edge" && r.Search.Outcome != "no_failure" {
		add(ReasonNoEdge, 0, "%s", noEdge(r.Search.Outcome))
	}
}

// noStepPassed adds a reason for each stairs (the mix, or with load.each
// each scenario alone) of which some step was judged and none passed.
func (r *Result) noStepPassed(add func(kind string, step int, format string, args ...any)) {
	judged, passed := map[string]int{}, map[string]int{}
	var order []string
	for _, s := range r.Steps {
		if s.Passed == nil {
			continue
		}
		if _, ok := judged[s.Scenario]; !ok {
			order = append(order, s.Scenario)
		}
		judged[s.Scenario]++
		if *s.Passed {
			passed[s.Scenario]++
		}
	}
	for _, sc := range order {
		if passed[sc] > 0 {
			continue
		}
		what := "no step passed"
		if sc != "" {
			what = sc + ": no step passed"
		}
		add(ReasonNoStepPassed, 0, "%s (of %d judged)", what, judged[sc])
	}
}

// StatusOf is the status that reasons give: the gravest of theirs,
// StatusPassed for none.
func StatusOf(reasons []Reason) string {
	out := StatusPassed
	rank := map[string]int{StatusPassed: 0, StatusFailed: 1, StatusCouldNotRun: 2, StatusInterrupted: 3, StatusUnfinished: 4}
	for _, r := range reasons {
		s := StatusFailed
		switch r.Kind {
		case ReasonUnfinished:
			s = StatusUnfinished
		case ReasonInterrupted:
			s = StatusInterrupted
		case ReasonTargetDied, ReasonNotStarted, ReasonAgentLost, ReasonEventFailed:
			s = StatusCouldNotRun
		}
		if rank[s] > rank[out] {
			out = s
		}
	}
	return out
}

// noEdge says why a search found no edge, from its outcome.
func noEdge(outcome string) string {
	switch outcome {
	case "start_fails":
		return "find found no edge: its first level did not pass"
	case "generator_limited":
		return "find found no edge: ceiling could not hold the load before the target failed (GENERATOR LIMITED)"
	case "exhausted":
		return "find found no edge within its probes"
	}
	return "find found no edge (" + outcome + ")"
}
