package results

import (
	"fmt"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/slo"
)

// Evaluate checks every term against every complete step: a threshold
// holds only if it holds in each step, because a stairs run that passes on
// average can still fail at the level that matters. Each Threshold carries
// the worst step's value. It sets each step's SLOPassed and r.Thresholds;
// Judge then decides whether the run passed. A partial step (interrupted,
// or short of a lost agent's share) is not judged. With no complete step
// at all, every threshold fails. It first costs the run's events
// (CostEvents): a recovery term judges them, over the whole run
// (evaluateEvents).
func (r *Result) Evaluate(terms []slo.Term) {
	r.CostEvents(terms)
	r.Thresholds = make([]Threshold, 0, len(terms))
	r.noSamples = r.noSamples[:0]
	var judged []int
	for i := range r.Steps {
		r.Steps[i].SLOPassed = nil
		if r.Steps[i].Interrupted || r.Steps[i].Lost != "" {
			continue // a partial step: its figures are short of its load
		}
		if len(terms) > 0 {
			ok := true
			r.Steps[i].SLOPassed = &ok
		}
		judged = append(judged, i)
	}
	if len(judged) == 0 && r.Soak != nil && r.Unfinished {
		return // a soak under way: its step is judged when it ends, its windows as they do
	}
	for _, t := range terms {
		th := Threshold{Expr: t.Text, OK: len(judged) > 0}
		if t.OfEvents() {
			r.evaluateEvents(t, judged, &th)
			r.Thresholds = append(r.Thresholds, th)
			continue
		}
		first, shownOK, earlier := true, true, 0
		for _, i := range judged {
			if st := r.Steps[i].Scenario; t.Scenario != "" && st != "" && st != t.Scenario {
				continue // load.each: the term's scenario did not run in this step
			}
			f, ok := r.TermFigures(&r.Steps[i], t)
			if !ok {
				earlier++ // a login term, and the step's users logged in during an earlier step
				continue
			}
			if f.Completed == 0 {
				r.noSamples = append(r.noSamples, fmt.Sprintf("step %d: threshold %s evaluated on no samples: it fails, as no evidence is not a pass", r.Steps[i].Index+1, t.Text))
			}
			v, ok := t.Eval(f)
			// The worst step's value, a failing step's before a passing
			// one's: a lower bound under the threshold fails, yet can be
			// below a passing step's exact value.
			if first || (shownOK && !ok) || (shownOK == ok && worse(t.Op, v, th.Value)) {
				th.Value, th.AtLeast, shownOK, first = v, t.LowerBound(f), ok, false
			}
			if !ok {
				th.OK = false
				*r.Steps[i].SLOPassed = false
			}
		}
		if first && earlier > 0 {
			// Every step's users had logged in before it: no login was judged.
			th.OK = false
			r.noSamples = append(r.noSamples, fmt.Sprintf("threshold %s evaluated on no samples: no judged step made a login; it fails, as no evidence is not a pass", t.Text))
		}
		r.Thresholds = append(r.Thresholds, th)
	}
}

// evaluateEvents judges a recovery term on the events of the judged
// steps, together: th gets the worst event's recovery, and fails with an
// event that did not recover, or with none at all (no evidence is not a
// pass: a run-wide finding, not a step's). A step whose events fail it
// fails its SLO; a step without events is not judged by it.
func (r *Result) evaluateEvents(t slo.Term, judged []int, th *Threshold) {
	all := slo.Figures{}
	for _, i := range judged {
		f := r.EventFigures(r.Steps[i].Index)
		if f.Events == 0 {
			continue
		}
		if _, ok := t.Eval(f); !ok {
			*r.Steps[i].SLOPassed = false
		}
		all.Events += f.Events
		all.Unrecovered += f.Unrecovered
		all.RecoveryMS = max(all.RecoveryMS, f.RecoveryMS)
	}
	if all.Events == 0 {
		r.noSamples = append(r.noSamples, fmt.Sprintf("threshold %s evaluated on no samples: no event happened in a finished step; it fails, as no evidence is not a pass", t.Text))
	}
	v, ok := t.Eval(all)
	th.Value, th.OK = v, th.OK && ok
}

// worse reports whether v is further from passing than w under op.
func worse(op string, v, w float64) bool {
	if strings.HasPrefix(op, "<") {
		return v > w
	}
	return v < w
}

// NoteDuplicates records the repeated ids of the run so far, with a warning
// for each source; full says the detector reached its memory bound.
func (r *Result) NoteDuplicates(d []DuplicateID, full bool) {
	r.DuplicateIDs = r.DuplicateIDs[:0]
	kept := r.Warnings[:0]
	for _, w := range r.Warnings {
		if !strings.HasPrefix(w, duplicateWarning) {
			kept = append(kept, w)
		}
	}
	r.Warnings = kept
	for _, x := range d {
		r.DuplicateIDs = append(r.DuplicateIDs, x)
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s repeated %d times (e.g. %q): it comes from data or a literal, and a target that drops or merges repeats makes these figures wrong; use {{uuid}} or {{seq}}",
			duplicateWarning, x.Source, x.Count, x.Example))
	}
	if full {
		r.Warnings = append(r.Warnings, duplicateWarning+": the detector reached its memory bound and stopped remembering new values")
	}
}

const duplicateWarning = "duplicate ids"
