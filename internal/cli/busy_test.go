package cli

import (
	"slices"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/sweep"
)

// A run in a test that is about what a command does with it (its wiring,
// what it prints) may end GENERATOR LIMITED on a busy machine: a
// neighbour's load, or the other tests of this package, whose CPU counts
// as the run's own (they share its process). Such a run exits 1, rightly;
// the tests accept that exit, and only that, and say so.

// starved reports whether r did not pass only because ceiling could not
// hold its load: every reason it gives is that (or that no step passed,
// or that a search found no edge because of it), and each of its steps
// passed or was GENERATOR LIMITED.
func starved(t *testing.T, r *results.Result) bool {
	t.Helper()
	if r == nil || r.Passed || len(r.Steps) == 0 {
		return false
	}
	for _, why := range r.Outcome.Reasons {
		limitedSearch := why.Kind == results.ReasonNoEdge && r.Search != nil && r.Search.Outcome == "generator_limited"
		if why.Kind != results.ReasonGeneratorLimited && why.Kind != results.ReasonNoStepPassed && !limitedSearch {
			return false
		}
	}
	for _, s := range r.Steps {
		if !slices.Contains([]string{results.Healthy, results.Stressed, results.GeneratorLimited}, s.Verdict) {
			return false
		}
	}
	t.Logf("this machine was too busy for the run: %s", r.Outcome.Summary())
	return true
}

// sweepStarved is starved for a sweep: every shape that did not hold its
// load was GENERATOR LIMITED.
func sweepStarved(t *testing.T, r sweep.Result) bool {
	t.Helper()
	limited := false
	for _, c := range r.Configs {
		switch c.State {
		case results.GeneratorLimited:
			limited = true
		case results.Healthy, results.Stressed:
		default:
			return false
		}
	}
	if limited {
		t.Logf("this machine was too busy for the sweep: %s", r.Outcome.Summary())
	}
	return limited && !r.Passed
}
