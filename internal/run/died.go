package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// A command target (monitor.command) that ends on its own during a run has
// died: a crash, an exit, the kernel's OOM killer. Its port refuses every
// request from then on, and a step that went on would measure nothing but
// ceiling's own refused connections. So the run follows the target's
// process: when it dies, the step under way ends at once (its figures kept
// up to then and marked), and the run stops after it with a
// TargetDiedError. A target ceiling ends itself (the run's end, an event's
// kill, restart or rolling deploy) has not died. A step with events is the
// plan breaking its target on purpose (a command that kills it, to see
// whether it recovers): there a death is measured as before, not cut.

// follow waits, on a goroutine of its own, for t to end, and closes died
// when it ended on its own. The goroutine ends with t: at the latest when
// stop stops it.
func (w *watch) follow(t *control.Target) {
	go func() {
		<-t.Done()
		if exit, ok := t.Died(); ok {
			w.diedOnce.Do(func() {
				w.exit, w.diedAt = exit, time.Now()
				close(w.died)
			})
		}
	}()
}

// dead says whether the command target has died, how and when.
func (w *watch) dead() (control.Exit, time.Time, bool) {
	if w == nil || w.died == nil {
		return control.Exit{}, time.Time{}, false
	}
	select {
	case <-w.died:
		return w.exit, w.diedAt, true
	default:
		return control.Exit{}, time.Time{}, false
	}
}

// untilDied returns a context that is also cancelled when the command
// target dies, for a step: a step does not go on loading a dead port. The
// caller calls cancel once the step is over.
func (w *watch) untilDied(ctx context.Context) (context.Context, context.CancelFunc) {
	if w == nil || w.died == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-w.died:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// targetDied marks a step during which (or before which) the command
// target died, at, and returns the run's error. cut is true when the step
// was ended by the death (not by a Ctrl-C).
func (s *Session) targetDied(step *results.Step, exit control.Exit, at time.Time, win Window, cut bool) error {
	if step.Target == nil {
		step.Target = &results.Target{}
	}
	step.Target.Exited, step.Target.Died = true, exit.String() // also when it died after the window
	when := fmt.Sprintf("%.1fs into the window", at.Sub(win.Start).Seconds())
	switch {
	case at.Before(win.Start):
		when = "during the warm-up"
	case at.After(win.End):
		when = "after the window"
	}
	err := &TargetDiedError{Exit: exit, Step: step.Index, When: when}
	if cut && step.Interrupted {
		// The load's own "interrupted after" says Ctrl-C; this is why.
		step.Warnings = slices.DeleteFunc(step.Warnings, func(w string) bool { return strings.HasPrefix(w, "interrupted after") })
		step.Warnings = append(step.Warnings, fmt.Sprintf("the target died %s, %s: the step ended there, a partial step left out of the thresholds, and the run stopped%s",
			when, exit, s.watch.logHint()))
	} else {
		step.Warnings = append(step.Warnings, fmt.Sprintf("the target died %s, %s: the run stopped after this step%s", when, exit, s.watch.logHint()))
	}
	s.res.Warnings = append(s.res.Warnings, err.Error())
	return err
}

// eventful reports whether the plan has events in step st.
func (s *Session) eventful(st load.Step) bool {
	return slices.ContainsFunc(s.p.Events, func(ev plan.Event) bool {
		return slices.Contains(ev.EventSteps(s.p.Steps()), st.Index)
	})
}
