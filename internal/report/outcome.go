package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// OutcomeLine is the run's outcome in one line, as every report ends (or,
// in Markdown, begins) with it: "PASSED", or the status in capitals and
// every reason, "FAILED: step 1 is INVALID; no step passed (1 judged): …".
// It reads results.Outcome, which the exit code reads too. A run that
// opted out of strictness says so, since its findings then only warned.
func OutcomeLine(r *results.Result) string {
	o := r.Outcome
	if o.Status == "" { // a result from before outcomes were written
		return map[bool]string{true: "PASSED", false: "FAILED"}[r.Passed]
	}
	line := strings.ToUpper(strings.ReplaceAll(o.Status, "_", " "))
	if len(o.Reasons) > 0 {
		parts := make([]string, len(o.Reasons))
		for i, rs := range o.Reasons {
			parts[i] = reasonText(rs)
		}
		line += ": " + strings.Join(parts, "; ")
	}
	switch {
	case !o.Strict && len(r.Invalid) > 0:
		line += " (not strict: the INVALID findings above did not fail it)"
	case !o.Strict:
		line += " (not strict: validity findings would only warn)"
	}
	return line
}

// reasonText is a reason as the outcome line says it: a step's verdict,
// whose reasons its row gives, in a few words; any other in full.
func reasonText(rs results.Reason) string {
	switch rs.Kind {
	case results.ReasonInvalid, results.ReasonGeneratorLimited:
		if rs.Step > 0 {
			v := results.Invalid
			if rs.Kind == results.ReasonGeneratorLimited {
				v = results.GeneratorLimited
			}
			return fmt.Sprintf("step %d is %s", rs.Step, v)
		}
	}
	return rs.String()
}

// soFar is r with its outcome as it stands while the run goes on: the
// reason that says the file is unfinished left out, as a run under way
// has not been stopped.
func soFar(r *results.Result) *results.Result {
	c := *r
	c.Outcome.Reasons = slices.DeleteFunc(slices.Clone(r.Outcome.Reasons), func(rs results.Reason) bool { return rs.Kind == results.ReasonUnfinished })
	c.Outcome.Status = results.StatusPassed
	if len(c.Outcome.Reasons) > 0 {
		c.Outcome.Status = results.StatusOf(c.Outcome.Reasons)
	}
	return &c
}
