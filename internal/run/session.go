package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/slo"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/wsx"
)

// Options say how a session runs and where its result goes. The zero value
// keeps the result in memory and reports nothing while it runs.
type Options struct {
	// Out is the path of result.json, rewritten after every step; empty
	// keeps the result in memory only. A command target's output goes to
	// Out + ".target.log" (nowhere when Out is empty).
	Out string
	// Args is ceiling's command line, without the program's name: result.json
	// keeps it, quoted, as the command that reproduces the run.
	Args []string
	// Version is ceiling's version, for result.json's host.
	Version string
	// OnProgress, if set, is called about once a second while a step runs
	// (on the step's collector goroutine), and once with the step's final
	// figures when it has ended.
	OnProgress func(report.Progress)
	// OnNote, if set, is told what the session is doing when it waits for
	// something other than a step (late deliveries), in a sentence.
	OnNote func(string)
	// OnDrain, if set, is told how the wait for late deliveries after the
	// load stands, about once a second, and once with Done when it ends.
	OnDrain func(report.Draining)
	// Exchanger performs the HTTP exchanges; nil: the plan's (package
	// httpx). The session closes it.
	Exchanger transport.Exchanger
	// Dialer opens websocket sockets; nil: package wsx's.
	Dialer transport.SocketDialer
	// GoTimer waits for open-model arrivals with Go's timers at every rate,
	// not with the precise timer below load.PreciseBelow: for a synctest
	// bubble, whose clock the precise timer cannot see, and for
	// bench/timer.sh, which compares the two.
	GoTimer bool
	// Grace is how long in-flight exchanges may finish once ctx is
	// cancelled. Zero: the executor's default, 2s.
	Grace time.Duration
	// Remote, when set, runs every step on agents and merges their
	// figures; the session judges, searches and writes as on one machine.
	// The session closes it.
	Remote Remote
	// Segment runs this machine's share of the load only (an agent's, or
	// --segment): its stripe of the open model's arrivals, its share of
	// the users. Zero: the whole.
	Segment schedule.Segment
	// SecondHistograms keeps each second's histogram in the series, so
	// that steps can be merged second by second (agents, --segment).
	SecondHistograms bool
	// RunID names the run in result.json and in live outputs' labels.
	RunID string
	// OnSecond, if set, is called with each second of a step as it is
	// counted, on the step's collector goroutine (live outputs).
	OnSecond func(Second)
	// OnStep, if set, is called with each step's figures (its repeats
	// combined, with its verdict) once it is written.
	OnStep func(*results.Step)
	// Finishing, if set, is called before the run's last write; what it
	// returns is added to the result's warnings (outputs that lost data).
	Finishing func() []string
	// RefusedStops makes Open return failure.ErrRefused when the preflight saw
	// the target refuse every scenario's request with a 4xx (find and sweep:
	// they would spend minutes measuring refusals). Without it the run goes
	// on, warned at once through OnNote and in the result's warnings; a step
	// whose every request is refused is INVALID, and fails it.
	RefusedStops bool
	// Lifecycle, when set, is told what the run starts and must not leave
	// behind at an abort (a second Ctrl-C): the command target and its
	// event commands, which its Abort kills, and the undoing of a lasting
	// event (a paused target resumed, a CPU limit lifted). nil: the run
	// still stops all of them when it ends, but nothing can abort it.
	Lifecycle *monitor.Lifecycle
}

// Session is one run under way: its transport, compiled scenarios,
// executor, sinks, watched target and result. Steps are run one at a time,
// by the plan (Run) or by a search (Find).
type Session struct {
	p      *plan.Plan
	o      Options
	terms  []slo.Term
	rules  results.Rules
	strict bool // a validity finding fails the run
	// await is how long a step's ids may take to arrive before its
	// delivery figures are taken, when each step is judged as it ends (a
	// search, repeats): the SLO's longest "<" delivery latency bound, so
	// that the ids in flight at the step's end are known to be under it or
	// not. Zero: the figures are taken at once.
	await   time.Duration
	set     *scenario.Set
	ex      transport.Exchanger
	loop    transport.Loop // nil: no event loop (see eventLoop)
	runner  *load.Runner
	res     *results.Result
	sockets sockets
	watch   *watch
	sinks   *sinks
	index   int
	alone   string           // the scenario run alone (load.each), "" for the mix
	raw     [][]results.Step // each step index's repeats, in run order
	passed  [][]bool         // whether each of them passed, judged alone
	died    bool             // the command target died: the run does not pass
	fdLimit int              // the process's open-file limit, 0 when unknown
	conns   int              // the connections it leaves the open model's workers, 0: no cap
	refused int64            // requests the scenarios refused to send, so far
	cookies int64            // cookies the users' jars did not store, so far

	// What a search sets (see Finder).
	found         *bool         // whether an edge was found, which is what passed means
	settled       time.Duration // the wait for earlier deliveries before the next step
	settleWarning string        // put on the next step: the wait ended with ids still missing
}

// Open checks the plan's SLO, compiles its scenarios, starts its sinks and its
// watched target, sends the preflight request, opens the websocket sockets and
// writes an empty result. A bad plan is a failure.InputError; a target that
// does not answer is failure.ErrUnreachable; anything else that stops the run
// from starting (a port in use, a target that will not start, an unwritable
// result) is returned as it is.
func Open(ctx context.Context, p *plan.Plan, o Options) (_ *Session, err error) {
	if o.Remote != nil {
		defer func() {
			if err != nil {
				o.Remote.Close() // the agents' sessions, opened for this run
			}
		}()
	}
	terms, err := Terms(p)
	if err != nil {
		return nil, err
	}
	set, err := scenario.Compile(p)
	if err != nil {
		return nil, &failure.InputError{Err: err}
	}
	names := set.Names()
	if set.HasLogin() && !slices.Contains(names, results.LoginName) {
		names = append(names, results.LoginName) // "login.p99<2s" reads the logins
	}
	for _, t := range terms {
		if t.Scenario != "" && !slices.Contains(names, t.Scenario) {
			return nil, badInput("%s: slo: %q names no scenario (scenarios: %s)", where(p, "slo"), t.Text, strings.Join(names, ", "))
		}
	}
	if err := remoteRefusals(&o, len(p.Sinks) > 0, heldSockets(p), len(p.Events), p.Load.Each); err != nil {
		return nil, err
	}
	if o.Remote != nil {
		return openRemote(ctx, p, o, terms, set)
	}
	switch {
	case len(p.Events) > 0 && p.Repeat > 1:
		return nil, badInput("%s: events with repeats are not supported yet: each repeat would do them again, and the repeats' steps are combined", cmp.Or(p.Where("events"), "events"))
	case len(p.Events) > 0 && !o.Segment.Whole():
		return nil, badInput("%s: events with --segment: every segment's machine would do them (kill the target N times); run the events on one machine", cmp.Or(p.Where("events"), "events"))
	}
	for i, ev := range p.Events {
		if ev.Action == plan.ActionCPU && p.Monitor.Cgroup == "" {
			return nil, badInput("%s: events[%d]: cpu limits the target's cgroup: give monitor.cgroup (ceiling sweep's local launcher sets it)", where(p, fmt.Sprintf("events[%d]", i)), i)
		}
	}
	s := &Session{p: p, o: o, terms: terms, set: set, rules: rulesOf(p), strict: p.Strict != nil && *p.Strict}
	if p.Repeat > 1 {
		s.await = deliveryWait(terms)
	}
	if s.sinks, err = startSinks(p); err != nil {
		return nil, err
	}
	if s.sinks != nil {
		set.SetDeliveries(s.sinks.ledger)
	}
	log := ""
	if o.Out != "" {
		log = o.Out + ".target.log"
	}
	if s.watch, err = startWatch(ctx, p, log, o.Lifecycle); err != nil {
		s.sinks.close()
		return nil, err
	}
	if s.ex = o.Exchanger; s.ex == nil {
		s.ex = exchanger(p)
	}
	dialer := o.Dialer
	if dialer == nil {
		dialer = wsx.New(p.HTTP.Insecure)
		frameLoop(p, set)
	}
	cookie, refused, err := preflight(s.ex, set, p)
	if err == nil && refused != "" && o.RefusedStops {
		err = fmt.Errorf("preflight: %s; %w", refused, failure.ErrRefused)
	}
	if err != nil {
		s.closeTransport()
		return nil, err
	}
	if refused != "" && o.OnNote != nil {
		o.OnNote("preflight: " + refused + "; a step in which every request is refused is INVALID and fails the run")
	}
	if o.Exchanger == nil {
		s.loop = eventLoop(p, cookie)
	}
	s.res = newResult(p, &o)
	s.res.Unfinished = true // until Finish: a run killed mid-way must not read as a pass
	if refused != "" {
		s.res.Warnings = append(s.res.Warnings, "preflight: "+refused)
	}
	if n := heldSockets(p); n > 0 && o.OnNote != nil {
		o.OnNote(fmt.Sprintf("opening %d websocket sockets", n))
	}
	if err := openSockets(ctx, set, p, dialer); err != nil {
		s.closeTransport()
		if ctx.Err() == nil {
			return nil, err
		}
		// Interrupted while the sockets opened: nothing was measured, and
		// the result says so.
		ended := time.Now().Round(0)
		s.res.Interrupted, s.res.Unfinished, s.res.EndedAt = true, false, &ended
		s.res.Warnings = append(s.res.Warnings, "interrupted while the websocket sockets were opening: no step ran")
		s.judge()
		return nil, errors.Join(failure.ErrInterrupted, s.write())
	}
	s.limitConns()
	s.judge()
	if err := s.write(); err != nil {
		s.closeTransport()
		return nil, err
	}
	cfg := loadConfig(p, &o)
	cfg.MaxConns = s.conns
	cfg.Exchanger, cfg.Loop, cfg.Frames, cfg.Scenarios, cfg.OnTick = s.ex, s.loop, set.Frames(), set, ticking(o.OnProgress, s.sinks)
	cfg.OnSecond = s.onSecond()
	s.runner = load.NewRunner(cfg)
	return s, nil
}

// limitConns keeps descriptors for what the run must write and caps the
// connections at what the open-file limit leaves (load.Config.MaxConns):
// past it a connection would fail in ceiling, not at the target. HTTP/2's
// workers share their connections, and are not capped. A closed model
// whose users are more than that is warned: its users past it will fail
// (class generator).
func (s *Session) limitConns() {
	results.Reserve()
	var conns int
	s.fdLimit, conns = descriptors()
	if conns == 0 || s.p.HTTP.HTTP2 {
		return
	}
	s.conns = conns
	if !s.p.Closed() || len(s.p.Load.VUs) == 0 {
		return
	}
	if users := s.o.Segment.Users(slices.Max(s.p.Load.VUs)); users > conns {
		w := fmt.Sprintf("the plan's %d users need a connection each, and ceiling's open-file limit of %d leaves %d (ulimit -n): the users past it fail in ceiling itself (class generator), and their steps are GENERATOR LIMITED", users, s.fdLimit, conns)
		s.res.Warnings = append(s.res.Warnings, w)
		if s.o.OnNote != nil {
			s.o.OnNote(w)
		}
	}
}

func newResult(p *plan.Plan, o *Options) *results.Result {
	target := p.Target
	if target == "" {
		target = p.URL(&p.Scenarios[0])
	}
	name, _ := os.Hostname()
	return &results.Result{
		Schema: results.Schema, Command: reproduce(secret.Names(p.HTTP.SecretHeaders).Args(o.Args)), Name: p.Name, Target: secret.URL(target), Control: p.Control,
		Host:      results.Host{Hostname: name, OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Version: o.Version},
		StartedAt: time.Now().Round(0), Warnings: []string{}, Steps: []results.Step{},
		DuplicateIDs: []results.DuplicateID{}, Invalid: []string{}, Segment: segmentOf(p, o), RunID: o.RunID,
	}
}

// reproduce returns ceiling's command line, quoted for a POSIX shell.
func reproduce(args []string) string {
	parts := []string{"ceiling"}
	for _, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?<>|&;()[]{}#~%") {
			parts = append(parts, a)
			continue
		}
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}

// Run runs the plan's steps in order (see Steps), the whole stairs as many
// times as the plan repeats it, stops after a step that ctx interrupted,
// and finishes the session.
func (s *Session) Run(ctx context.Context) (*results.Result, error) {
	n := max(s.p.Repeat, 1)
	alone := []int{-1} // the weighted mix
	if s.p.Load.Each {
		alone = alone[:0]
		for i := range s.p.Scenarios {
			alone = append(alone, i) // each scenario alone, in plan order
		}
	}
	levels := Steps(s.p)
	defer s.only(-1)
run:
	for rep := range n {
		if rep > 0 {
			s.fresh(ctx, rep, n)
		}
		for k, sc := range alone {
			s.only(sc)
			for j, st := range levels {
				st.Index = k*len(levels) + j
				if _, err := s.step(ctx, st); err != nil {
					if errors.Is(err, failure.ErrInterrupted) {
						break run
					}
					if errors.Is(err, failure.ErrAgentLost) || errors.Is(err, failure.ErrEventFailed) || errors.Is(err, failure.ErrTargetDied) {
						return s.stopAfter(ctx, err)
					}
					return nil, err
				}
			}
		}
	}
	return s.Finish(ctx)
}

// stopAfter finishes a run stopped after a step (an agent lost: the step is
// INVALID; a required event failed; the target died): its steps are written,
// and err (failure.ErrAgentLost, failure.ErrEventFailed,
// failure.ErrTargetDied) says why it stopped.
func (s *Session) stopAfter(ctx context.Context, err error) (*results.Result, error) {
	res, ferr := s.Finish(ctx)
	return res, errors.Join(err, ferr)
}

// only runs scenario i alone from the next step on (-1: the mix).
func (s *Session) only(i int) {
	s.set.Only(i)
	s.alone = ""
	if i >= 0 {
		s.alone = s.set.Names()[i]
	}
}

// fresh starts repeat rep (from 0) of n clean: new virtual users, so new
// connections and logins, after the deliveries of the last one settled.
// Held websocket sockets stay open: they are the run's visitors.
func (s *Session) fresh(ctx context.Context, rep, n int) {
	if s.o.OnNote != nil {
		s.o.OnNote(fmt.Sprintf("repeat %d of %d: new users and connections", rep+1, n))
	}
	if s.o.Remote != nil {
		if err := s.o.Remote.Fresh(ctx); err != nil && s.o.OnNote != nil {
			s.o.OnNote(fmt.Sprintf("repeat %d of %d: %v", rep+1, n, err))
		}
		return
	}
	s.NewUsers()
	if s.sinks != nil {
		s.settled, _ = s.sinks.ledger.Settle(ctx, settleQuiet, s.sinks.drain)
	}
}

// Step runs one step, numbered in the order run whatever st.Index says, adds
// it to the result with the target's, the deliveries' and the sockets' figures
// of its window, judges the run and writes the result. It returns
// failure.ErrInterrupted, with the (partial) step, when ctx was cancelled.
func (s *Session) Step(ctx context.Context, st load.Step) (results.Step, error) {
	st.Index = s.index
	s.index++
	return s.step(ctx, st)
}

// step runs st as step st.Index, or as one more repeat of it.
func (s *Session) step(ctx context.Context, st load.Step) (results.Step, error) {
	var before *results.Delivery // a repeat's deliveries are its own: what earlier repeats of the step had is taken off
	if s.sinks != nil && st.Index < len(s.raw) && len(s.raw[st.Index]) > 0 {
		before = s.sinks.stepFigures(st.Index, time.Time{}, time.Time{})
	}
	if s.sinks != nil {
		s.sinks.begin(st.Index)
	}
	var step results.Step
	var win Window
	var base time.Time
	var lost, stop error // an agent lost, a required event failed: the run stops after this step
	if s.o.Remote != nil {
		var err error
		step, win, err = s.o.Remote.Step(ctx, st)
		switch {
		case errors.Is(err, failure.ErrAgentLost):
			lost = err // recorded, judged INVALID and written; then the run stops
		case err != nil:
			return step, fmt.Errorf("step %d: %w", st.Index+1, err)
		}
		step.Index, base = st.Index, s.o.Remote.Base()
	} else {
		var start time.Duration
		var err error
		var evs *stepEvents
		if len(s.p.Events) > 0 {
			st = s.traced(st)
			evs = s.startEvents(ctx, st, time.Now(), s.runner.Base())
		}
		measure, cancel := ctx, context.CancelFunc(func() {})
		if !s.eventful(st) {
			measure, cancel = s.watch.untilDied(ctx) // a dead target's port is not loaded further
		}
		step, start, err = s.Measure(measure, st)
		cancel()
		step.StartS = start.Seconds()
		if evs != nil {
			var done []results.Event
			done, stop = evs.wait()
			s.noteEvents(&step, done)
		}
		if err != nil {
			return step, err
		}
		base = s.runner.Base()
		win = Window{Start: base.Add(start + st.Warmup), End: base.Add(start + st.Warmup + time.Duration(step.DurationS*float64(time.Second)))}
	}
	var died error // the command target died: the run stops after this step
	if w := s.watch; w != nil {
		var warnings []string
		step.Target, warnings = w.figures(win.Start, win.End)
		step.Warnings = append(step.Warnings, warnings...)
		w.annotate(step.Series, base)
		if exit, at, ok := w.dead(); ok && !s.eventful(st) {
			died = s.targetDied(&step, exit, at, win, ctx.Err() == nil)
		} else if step.Target.Exited {
			step.Warnings = append(step.Warnings, "the target exited: the figures after its exit measure a dead target"+w.logHint())
		}
	}
	if s.sinks != nil {
		if s.await > 0 && !win.End.IsZero() {
			s.sinks.ledger.Await(ctx, step.Index, s.await, win.End.Add(min(s.await, s.sinks.drain)))
		}
		step.Delivery = s.sinks.stepFigures(step.Index, win.Start, win.End)
		n := step.Delivery.Delivered
		if !win.End.IsZero() {
			n = s.sinks.ledger.DeliveredBy(step.Index, win.End)
		}
		if d := step.Delivery; before != nil {
			d.Expected, d.Delivered = d.Expected-before.Expected, max(d.Delivered-before.Delivered, 0)
			d.Rejected, d.Duplicates = d.Rejected-before.Rejected, max(d.Duplicates-before.Duplicates, 0)
			d.Lost, d.Undelivered = 0, max(d.Expected-d.Delivered, 0)
			n = max(n-before.Delivered, 0)
		}
		step.Delivery.AtStepEnd = &n
	}
	step.SettleS, s.settled = s.settled.Seconds(), 0
	if s.settleWarning != "" {
		step.Warnings = append(step.Warnings, s.settleWarning)
		s.settleWarning = ""
	}
	step.WebSocket = s.sockets.step(s.set, heldSockets(s.p))
	if step.WebSocket != nil && step.Completed == 0 && step.Sent == 0 {
		step.Warnings = slices.DeleteFunc(step.Warnings, func(w string) bool {
			return strings.HasPrefix(w, noExchange) // an idle soak sends nothing
		})
	}
	step.Warnings = append(step.Warnings, socketWarnings(step.WebSocket)...)
	if n := s.set.DroppedCookies(); n > s.cookies {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%d cookies of new names were not stored: a user's jar keeps at most %d names, as a browser's does (the target sets new names without end?)", n-s.cookies, scenario.MaxCookies))
		s.cookies = n
	}
	if ex := s.set.TakeFailedCheck(); ex != "" && step.Errors["check"] > 0 {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%d responses failed a check; the first: %s", step.Errors["check"], ex))
	}
	if n, why := s.set.Refused(); n > s.refused {
		step.Warnings = append(step.Warnings, fmt.Sprintf("%d requests were not sent, their iterations failed as checks: %s", n-s.refused, why))
		s.refused = n
	}
	raw := step
	i, err := s.record(step)
	if err != nil {
		return step, fmt.Errorf("step %d: %w", st.Index+1, err)
	}
	s.res.NoteDuplicates(duplicates(s.set.Duplicates()))
	if ctx.Err() != nil {
		s.res.Interrupted = true
	}
	s.judge()
	step = s.res.Steps[i] // with its verdict, over the repeats so far
	if err := s.write(); err != nil {
		return step, err
	}
	if s.o.OnStep != nil {
		s.o.OnStep(&step)
	}
	if s.o.OnProgress != nil {
		s.o.OnProgress(done(st, &raw))
	}
	if err := errors.Join(lost, stop); err != nil {
		return step, err
	}
	if s.res.Interrupted {
		return step, failure.ErrInterrupted
	}
	return step, died
}

// record adds a finished step to the result at its index: new, or
// combined with the earlier repeats of that index (results.Combine).
func (s *Session) record(step results.Step) (int, error) {
	i := step.Index
	for len(s.raw) <= i {
		s.raw, s.passed = append(s.raw, nil), append(s.passed, nil)
	}
	s.raw[i] = append(s.raw[i], step)
	s.passed[i] = append(s.passed[i], s.passes(step))
	c, err := results.Combine(s.raw[i], s.passed[i])
	if err != nil {
		return i, err
	}
	if i < len(s.res.Steps) {
		s.res.Steps[i] = c
	} else {
		s.res.Steps = append(s.res.Steps, c)
	}
	return i, nil
}

// passes judges one step alone, as find judges a probe: its SLO held, its
// verdict is better than OVERLOADED, and nothing made its figures
// untrustworthy.
func (s *Session) passes(step results.Step) bool {
	r := results.Result{Steps: []results.Step{step}}
	r.Evaluate(s.terms)
	rules := s.rules
	rules.Strict = s.strict
	r.Judge(rules)
	return passing(&r, r.Steps[0])
}

// passing is find's rule for a step of r.
func passing(r *results.Result, st results.Step) bool {
	return st.Verdict != results.Overloaded && st.Verdict != results.GeneratorLimited &&
		(st.SLOPassed == nil || *st.SLOPassed) && !r.StepInvalid(st.Index)
}

func duplicates(d []scenario.Duplicate, full bool) ([]results.DuplicateID, bool) {
	out := make([]results.DuplicateID, len(d))
	for i, x := range d {
		out[i] = results.DuplicateID{Source: x.Source, Count: x.Count, Example: x.Example}
	}
	return out, full
}

// judge evaluates thresholds, verdicts and validity; a strict run does not
// pass with a validity finding, a search passes when it found an edge, and
// nothing passes before it is finished.
func (s *Session) judge() {
	s.res.Evaluate(s.terms)
	rules := s.rules
	rules.Strict = s.strict
	s.res.Judge(rules)
	if s.strict && len(s.res.Invalid) > 0 {
		s.res.Passed = false
	}
	if s.found != nil {
		s.res.Passed = *s.found
	}
	lost := slices.ContainsFunc(s.res.Steps, func(st results.Step) bool { return st.Lost != "" })
	failed := slices.ContainsFunc(s.res.Events, func(e results.Event) bool { return e.Required && e.Error != "" })
	s.res.Passed = s.res.Passed && !s.res.Interrupted && !s.res.Unfinished && !lost && !failed && !s.died
}

func (s *Session) write() error {
	if s.o.Out == "" {
		return nil
	}
	perm := results.Public
	if s.p.Data.Users != "" {
		perm = results.Private // ids and tags may hold the data file's values
	}
	return results.Write(s.o.Out, s.res, perm)
}

// Finish waits for late deliveries (up to Drain, less once ctx is
// cancelled) and fills in the run's delivery figures, then judges the run
// and writes the final result.
func (s *Session) Finish(ctx context.Context) (*results.Result, error) {
	if s.sinks != nil {
		if s.o.OnNote != nil {
			s.o.OnNote(fmt.Sprintf("waiting up to %v for late deliveries", s.sinks.drain))
		}
		s.sinks.settle(ctx, s.res, time.Now(), s.runner.Base(), draining(s.o.OnDrain))
		if s.o.OnDrain != nil {
			d := s.res.Delivery
			s.o.OnDrain(report.Draining{
				Elapsed: time.Duration(d.DrainS * float64(time.Second)), Timeout: s.sinks.drain,
				Missing: d.Missing(), Done: true, Complete: d.DrainComplete != nil && *d.DrainComplete,
			})
		}
		if ctx.Err() != nil && !s.res.Interrupted {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("interrupted while waiting for late deliveries (after %.1fs of up to %v): ids still on their way are counted as undelivered", s.res.Delivery.DrainS, s.sinks.drain))
		}
	}
	if ctx.Err() != nil {
		s.res.Interrupted = true // during a step, or while waiting for deliveries
	}
	if s.o.Finishing != nil {
		s.res.Warnings = append(s.res.Warnings, s.o.Finishing()...)
	}
	ended := time.Now().Round(0)
	s.res.EndedAt, s.res.Unfinished = &ended, false
	s.judge()
	if err := s.write(); err != nil {
		return nil, err
	}
	return s.res, nil
}

// Result returns the result so far. It belongs to the session: read it,
// do not change it.
func (s *Session) Result() *results.Result { return s.res }

// Watching says what the session watches of the target ("started ...",
// "watching pid ..."), or "" when nothing.
func (s *Session) Watching() string {
	if s.watch == nil {
		return ""
	}
	return s.watch.describe(s.p)
}

// TargetCPU returns the watched target's CPU use over the last three
// seconds, in percent of one core, and whether it is known.
func (s *Session) TargetCPU() (float64, bool) {
	if s.watch == nil || s.watch.watcher == nil {
		return 0, false
	}
	now := time.Now()
	f := s.watch.watcher.Window(now.Add(-3*time.Second), now)
	return f.CPUPct, f.SourceSamples >= 2
}

// Close ends the session: the executor's workers, the sockets, the
// connections, the sinks, and the target it started. Call it once, after
// the last step.
func (s *Session) Close() {
	if s.runner != nil {
		s.runner.Close()
	}
	s.closeTransport()
}

func (s *Session) closeTransport() {
	s.set.CloseSockets()
	if s.ex != nil {
		s.ex.Close()
	}
	if s.loop != nil {
		s.loop.Close()
	}
	if s.o.Remote != nil {
		s.o.Remote.Close()
	}
	if s.watch != nil {
		s.watch.stop()
	}
	s.sinks.close()
}
