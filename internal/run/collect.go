package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
)

// A collector watches something beside the load while steps run (the
// plan's events, the target, the sinks' deliveries, the held sockets, the
// scenarios' own findings) and adds what it saw over a step to that step's
// figures. The session calls it from its own goroutine: begin before each
// step, annotate after it, close once after the last.
type collector interface {
	// begin is called just before st runs.
	begin(ctx context.Context, st load.Step)
	// annotate adds to step what was collected over sp. An error is a
	// reason for the run to stop after this step (failure.ErrEventFailed,
	// failure.ErrTargetDied): the step is still recorded, judged and written.
	annotate(ctx context.Context, step *results.Step, sp span) error
	// close releases what the collector holds.
	close()
}

// span is where a step ran: its load, its counted window on the wall clock
// and the run's clock's origin, which series times count from.
type span struct {
	st   load.Step
	win  Window
	base time.Time
}

// collecting lines up the session's collectors, in the order they annotate
// a step (which is the order of its warnings).
func (s *Session) collecting() []collector {
	var cs []collector
	if len(s.p.Events) > 0 {
		s.events = &eventsCollector{s: s}
		cs = append(cs, s.events)
	}
	if s.watch != nil {
		cs = append(cs, &targetCollector{s: s})
	}
	if s.sinks != nil {
		cs = append(cs, &deliveryCollector{s: s})
	}
	cs = append(cs, &socketCollector{set: s.set, wanted: heldSockets(s.p)}, &diagnostics{set: s.set})
	if s.p.Load.Soak != nil {
		// Last: it reads what the others found (the target's death).
		s.soaking = &soakCollector{s: s}
		cs = append(cs, s.soaking)
	}
	return cs
}

// annotate lets every collector add what it saw over sp to step, and
// returns the reasons they give for the run to stop after it.
func (s *Session) annotate(ctx context.Context, step *results.Step, sp span) []error {
	var stops []error
	for _, c := range s.collectors {
		if err := c.annotate(ctx, step, sp); err != nil {
			stops = append(stops, err)
		}
	}
	return stops
}

// eventsCollector fires the plan's events of each step (events.go) and
// records what they did, on the step and in the result.
type eventsCollector struct {
	s       *Session
	running *stepEvents // the step's, nil between steps
}

func (c *eventsCollector) begin(ctx context.Context, st load.Step) {
	c.running = c.s.startEvents(ctx, st, time.Now(), c.s.runner.Base())
}

// annotate waits for the step's events (those that have not fired do not)
// and notes them; a required one that failed stops the run.
func (c *eventsCollector) annotate(_ context.Context, step *results.Step, _ span) error {
	if c.running == nil {
		return nil
	}
	done, failed := c.running.wait()
	c.running = nil
	c.s.noteEvents(step, done)
	return failed
}

func (c *eventsCollector) close() {
	if c.running != nil {
		c.running.wait()
	}
}

// targetCollector adds the watched target's figures over the step's
// window, and stops the run when the command target died.
type targetCollector struct{ s *Session }

func (c *targetCollector) begin(context.Context, load.Step) {}

func (c *targetCollector) annotate(ctx context.Context, step *results.Step, sp span) error {
	w := c.s.watch
	var warnings []string
	step.Target, warnings = w.figures(sp.win.Start, sp.win.End)
	step.Warnings = append(step.Warnings, warnings...)
	if g := step.Generator; g != nil && g.HostOtherPct != nil && step.Target.SourceSamples > 0 {
		other := max(*g.HostOtherPct-step.Target.CPUPct, 0) // the target's CPU is not another process's
		g.HostOtherPct = &other
	}
	w.annotate(step.Series, sp.base)
	if exit, at, ok := w.dead(); ok && !c.s.eventful(sp.st) {
		return c.s.targetDied(step, exit, at, sp.win, ctx.Err() == nil)
	}
	if step.Target.Exited {
		step.Warnings = append(step.Warnings, "the target exited: the figures after its exit measure a dead target"+w.logHint())
	}
	return nil
}

func (c *targetCollector) close() { c.s.watch.stop() }

// deliveryCollector adds the step's deliveries: its own ids (not its
// earlier repeats'), their backlog over its window, what had arrived by its
// end, and how long the step waited for an earlier one's deliveries.
type deliveryCollector struct {
	s      *Session
	before *results.Delivery // the step's deliveries before this repeat of it, nil on its first run
}

func (c *deliveryCollector) begin(_ context.Context, st load.Step) {
	k := c.s.sinks
	c.before = nil
	if st.Index < len(c.s.raw) && len(c.s.raw[st.Index]) > 0 {
		c.before = k.stepFigures(st.Index, time.Time{}, time.Time{})
	}
	k.begin(st.Index)
}

func (c *deliveryCollector) annotate(ctx context.Context, step *results.Step, sp span) error {
	k, s := c.s.sinks, c.s
	if s.await > 0 && !sp.win.End.IsZero() {
		k.ledger.Await(ctx, step.Index, s.await, sp.win.End.Add(min(s.await, k.drain)))
	}
	step.Delivery = k.stepFigures(step.Index, sp.win.Start, sp.win.End)
	n := step.Delivery.Delivered
	if !sp.win.End.IsZero() {
		n = k.ledger.DeliveredBy(step.Index, sp.win.End)
	}
	if d, before := step.Delivery, c.before; before != nil {
		d.Expected, d.Delivered = d.Expected-before.Expected, max(d.Delivered-before.Delivered, 0)
		d.Rejected, d.Duplicates = d.Rejected-before.Rejected, max(d.Duplicates-before.Duplicates, 0)
		d.Lost, d.Undelivered = 0, max(d.Expected-d.Delivered, 0)
		n = max(n-before.Delivered, 0)
	}
	step.Delivery.AtStepEnd = &n
	step.SettleS, s.settled = s.settled.Seconds(), 0
	if s.settleWarning != "" {
		step.Warnings = append(step.Warnings, s.settleWarning)
		s.settleWarning = ""
	}
	return nil
}

func (c *deliveryCollector) close() { c.s.sinks.close() }

// socketCollector adds the held websocket sockets' figures of the step:
// how many were open, opened, dropped, and what went wrong with them.
type socketCollector struct {
	set    *scenario.Set
	wanted int
	counts sockets
}

func (c *socketCollector) begin(context.Context, load.Step) {}

func (c *socketCollector) annotate(_ context.Context, step *results.Step, _ span) error {
	step.WebSocket = c.counts.step(c.set, c.wanted)
	if step.WebSocket != nil && step.Completed == 0 && step.Sent == 0 {
		step.Warnings = slices.DeleteFunc(step.Warnings, func(w string) bool {
			return strings.HasPrefix(w, noExchange) // an idle soak sends nothing
		})
	}
	step.Warnings = append(step.Warnings, socketWarnings(step.WebSocket)...)
	return nil
}

func (c *socketCollector) close() {}

// diagnostics adds what the scenarios found during the step that no
// counter shows: cookies the users' jars did not store, the first failed
// check, requests they refused to send.
type diagnostics struct {
	set     *scenario.Set
	refused int64 // requests the scenarios refused to send, so far
	cookies int64 // cookies the users' jars did not store, so far
}

func (c *diagnostics) begin(context.Context, load.Step) {}

func (c *diagnostics) annotate(_ context.Context, step *results.Step, _ span) error {
	if n := c.set.DroppedCookies(); n > c.cookies {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%d cookies of new names were not stored: a user's jar keeps at most %d names, as a browser's does (the target sets new names without end?)", n-c.cookies, scenario.MaxCookies))
		c.cookies = n
	}
	if ex := c.set.TakeFailedCheck(); ex != "" && step.Errors["check"] > 0 {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%d responses failed a check; the first: %s", step.Errors["check"], ex))
	}
	if n, why := c.set.Refused(); n > c.refused {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%d requests were not sent, their iterations failed as checks: %s", n-c.refused, why))
		c.refused = n
	}
	return nil
}

func (c *diagnostics) close() {}
