//go:build unix

package run

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// A command target that dies mid-step ends the step there, not at the
// step's end: the step keeps its figures up to the death, marked partial
// and saying how the target ended; the run stops after it (no second step
// against a dead port) with failure.ErrTargetDied, and does not pass.
func TestTargetDiesMidStep(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "result.json")
	p := quickPlan(t, "", 10*time.Second, 0, 50, 50)
	p.Monitor.Command = "sleep 1; exit 3"
	s, err := Open(t.Context(), p, Options{Out: out, Exchanger: newServer(10, time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	res, err := s.Run(t.Context())
	took := time.Since(start)
	var died *TargetDiedError
	if !errors.Is(err, failure.ErrTargetDied) || !errors.As(err, &died) || died.Exit.String() != "exited with status 3" || died.Step != 0 {
		t.Fatalf("Run = %v, want the target's death (exited with status 3) in step 1", err)
	}
	t.Logf("run ended after %v: %v", took, err)
	if took > 5*time.Second {
		t.Errorf("the run took %v: the step went on loading a dead port (it died after 1s of a 10s step)", took)
	}
	if res == nil || len(res.Steps) != 1 {
		t.Fatalf("result = %+v, want the one step run", res)
	}
	checkDiedStep(t, res.Steps[0])
	if res.Passed || res.Interrupted {
		t.Errorf("passed %v, interrupted %v; want a run that does not pass, not interrupted by the user", res.Passed, res.Interrupted)
	}
	if on, err := results.Read(out); err != nil || len(on.Steps) != 1 || on.Passed || !strings.Contains(strings.Join(on.Warnings, "\n"), "the target died") {
		t.Errorf("result.json = %+v (err %v): want the step, not passed, the death in its warnings", on, err)
	}
}

// checkDiedStep checks a step whose target exited with status 3 about 1s
// into it: partial, INVALID, and saying how the target ended.
func checkDiedStep(t *testing.T, st results.Step) {
	t.Helper()
	t.Logf("step: %.2fs, %d completed, warnings %q, notes %q", st.DurationS, st.Completed, st.Warnings, st.Notes)
	if !st.Interrupted || st.DurationS < 0.5 || st.DurationS > 3 || st.Completed < 20 {
		t.Errorf("step: partial %v, %.2fs, %d completed; want a partial step of about 1s with its exchanges until then", st.Interrupted, st.DurationS, st.Completed)
	}
	if st.Verdict != results.Invalid || !strings.Contains(st.VerdictReason, "the target died (exited with status 3)") {
		t.Errorf("verdict %s (%s), want INVALID: a step cut by its target's death measures nothing of its capacity", st.Verdict, st.VerdictReason)
	}
	if st.Target == nil || st.Target.Died != "exited with status 3" || !st.Target.Exited {
		t.Errorf("step target = %+v, want died: exited with status 3", st.Target)
	}
	if w := strings.Join(st.Warnings, "\n"); !strings.Contains(w, "s into the window, exited with status 3: the step ended there") || strings.Contains(w, "interrupted after") {
		t.Errorf("warnings %q: want the death said, not an interruption", st.Warnings)
	}
	if !strings.Contains(strings.Join(st.Notes, "\n"), "the target died (exited with status 3)") {
		t.Errorf("notes %q: want the death", st.Notes)
	}
}

// A target the run ends itself (its end) has not died: the steps run
// whole and the run passes.
func TestTargetStoppedIsNotDied(t *testing.T) {
	t.Parallel()
	p := quickPlan(t, "", 300*time.Millisecond, 0, 50)
	p.Monitor.Command = "sleep 30"
	s, err := Open(t.Context(), p, Options{Exchanger: newServer(10, time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(t.Context())
	s.Close()
	if err != nil || !res.Passed || res.Steps[0].Interrupted || res.Steps[0].Target.Died != "" {
		t.Fatalf("Run = %v, passed %v; want a whole step, passed, no death", err, res.Passed)
	}
	if exit, _, ok := s.watch.dead(); ok {
		t.Errorf("after Close, the target stopped by the run counts as died: %v", exit)
	}
}
