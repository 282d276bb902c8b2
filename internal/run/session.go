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

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
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
	// Outputs consume the run as it goes, after result.json (which Out
	// names): the session starts them when it opens, gives them every
	// step, and stops them when the run ends, or when Open fails.
	Outputs []Output
	// OnNote, if set, is told what the session is doing when it waits for
	// something other than a step (late deliveries), in a sentence.
	OnNote func(string)
	// Exchanger performs the HTTP exchanges; nil: the plan's (package
	// httpx). The session closes it.
	Exchanger transport.Exchanger
	// Dialer opens websocket sockets; nil: package wsx's.
	Dialer transport.SocketDialer
	// Goroutines sends every exchange and websocket frame from goroutines,
	// never from an event loop, as CEILING_LOOP=off does for the process:
	// for tests that run both engines side by side.
	Goroutines bool
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
	// RefusedStops makes Open return failure.ErrRefused when the preflight saw the
	// target refuse every scenario's request with a 4xx (find and sweep:
	// they would spend minutes measuring refusals). Without it the run
	// goes on, warned at once through OnNote and in the result's warnings;
	// a step whose every request is refused is INVALID, and fails it.
	RefusedStops bool
	// Lifecycle, when set, is told what the run starts and must not leave
	// behind at an abort (a second Ctrl-C): the command target and its
	// event commands, which its Abort kills, and the undoing of a lasting
	// event (a paused target resumed, a CPU limit lifted). nil: the run
	// still stops all of them when it ends, but nothing can abort it.
	Lifecycle *control.Lifecycle
}

// Session is one run under way: its transport, compiled scenarios,
// executor, sinks, watched target and result. Steps are run one at a time,
// by the plan (Run) or by a search (Find).
type Session struct {
	p      *plan.Plan
	o      Options
	terms  []slo.Term
	rules  results.Rules
	strict bool // a validity finding makes its step INVALID, and fails the run
	// await is how long a step's ids may take to arrive before its
	// delivery figures are taken, when each step is judged as it ends (a
	// search, repeats): the SLO's longest "<" delivery latency bound, so
	// that the ids in flight at the step's end are known to be under it or
	// not. Zero: the figures are taken at once.
	await time.Duration
	set   *scenario.Set
	ex    transport.Exchanger
	loop  transport.Loop // nil: no event loop (see eventLoops)
	// moreLoops are the event loops past the first: one per core in all.
	moreLoops []transport.Loop
	cookie    bool // the first answer set a cookie: every user keeps its own (load.Config.Cookies)
	// preflights counts the requests the preflight sent (the login's first
	// request, with a login): outside every step's counts, and said so.
	preflights int
	runner     *load.Runner
	res        *results.Result
	outs       *outputs // result.json first, then Options.Outputs
	watch      *watch
	sinks      *sinks
	// collectors add what they saw beside the load to each step
	// (collect.go); events is the one of them that fires the plan's
	// events, nil without any; soaking the one that cuts a soak into
	// windows, nil without load.soak.
	collectors []collector
	events     *eventsCollector
	soaking    *soakCollector
	index      int
	alone      string           // the scenario run alone (load.each), "" for the mix
	raw        [][]results.Step // each step index's repeats, in run order
	passed     [][]bool         // whether each of them passed, judged alone
	fdLimit    int              // the process's open-file limit, 0 when unknown
	conns      int              // the connections it leaves the open model's workers, 0: no cap

	// What a search sets (see Finder).
	settled       time.Duration // the wait for earlier deliveries before the next step
	settleWarning string        // put on the next step: the wait ended with ids still missing
}

// Open checks the plan's SLO, compiles its scenarios, starts its sinks and
// its watched target, sends the preflight request, opens the websocket
// sockets, writes an empty result and starts the outputs. A bad plan is an
// failure.InputError; a target that does not answer is failure.ErrUnreachable; anything
// else that stops the run from starting (a port in use, a target that will
// not start, an unwritable result) is returned as it is. When it fails,
// the outputs are stopped (with no result) and the agents' sessions
// closed.
func Open(ctx context.Context, p *plan.Plan, o Options) (_ *Session, err error) {
	outs := newOutputs(p, &o)
	defer func() {
		if err != nil {
			outs.stop(nil) // the session never opened: the outputs let go
			if o.Remote != nil {
				o.Remote.Close() // the agents' sessions, opened for this run
			}
		}
	}()
	terms, set, err := compile(p, &o)
	if err != nil {
		return nil, err
	}
	if o.Remote != nil {
		return openRemote(ctx, p, o, terms, set, outs)
	}
	return openHere(ctx, p, o, terms, set, outs)
}

// compile parses the plan's SLO and compiles its scenarios, and refuses
// what the plan asks that this session cannot do: an SLO term naming no
// scenario, what agents cannot run, events that repeats or segments would
// do more than once.
func compile(p *plan.Plan, o *Options) ([]slo.Term, *scenario.Set, error) {
	terms, err := Terms(p)
	if err != nil {
		return nil, nil, err
	}
	set, err := scenario.Compile(p)
	if err != nil {
		return nil, nil, &failure.InputError{Err: err}
	}
	names := set.Names()
	if set.HasLogin() && !slices.Contains(names, results.LoginName) {
		names = append(names, results.LoginName) // "login.p99<2s" reads the logins
	}
	for _, t := range terms {
		if t.Scenario != "" && !slices.Contains(names, t.Scenario) {
			return nil, nil, badInput("%s: slo: %q names no scenario (scenarios: %s)", where(p, "slo"), t.Text, strings.Join(names, ", "))
		}
	}
	if err := remoteRefusals(o, len(p.Sinks) > 0, heldSockets(p), len(p.Events), p.Load.Each); err != nil {
		return nil, nil, err
	}
	if p.Load.Soak != nil && (o.Remote != nil || !o.Segment.Whole()) {
		return nil, nil, badInput("%s: a soak runs on one machine: its windows are closed as they end, where the load is counted", cmp.Or(p.Where("load.soak"), "load.soak"))
	}
	return terms, set, eventRefusals(p, o)
}

// eventRefusals lists what a plan with events may not have.
func eventRefusals(p *plan.Plan, o *Options) error {
	switch {
	case len(p.Events) > 0 && p.Repeat > 1:
		return badInput("%s: events with repeats are not supported yet: each repeat would do them again, and the repeats' steps are combined", cmp.Or(p.Where("events"), "events"))
	case len(p.Events) > 0 && !o.Segment.Whole():
		return badInput("%s: events with --segment: every segment's machine would do them (kill the target N times); run the events on one machine", cmp.Or(p.Where("events"), "events"))
	}
	for i, ev := range p.Events {
		if ev.Action == plan.ActionCPU && p.Monitor.Cgroup == "" {
			return badInput("%s: events[%d]: cpu limits the target's cgroup: give monitor.cgroup (ceiling sweep's local launcher sets it)", where(p, fmt.Sprintf("events[%d]", i)), i)
		}
	}
	return nil
}

// openHere opens a session whose steps run on this machine: the sinks and
// the watched target, the transport and its preflight, the sockets, the
// result, the outputs and the executor.
func openHere(ctx context.Context, p *plan.Plan, o Options, terms []slo.Term, set *scenario.Set, outs *outputs) (*Session, error) {
	s := &Session{p: p, o: o, terms: terms, set: set, rules: rulesOf(p), strict: strictOf(p), outs: outs}
	if p.Repeat > 1 {
		s.await = deliveryWait(terms)
	}
	if err := s.startCollectors(ctx); err != nil {
		return nil, err
	}
	dialer, refused, err := s.connect()
	if err != nil {
		s.closeTransport()
		return nil, err
	}
	s.res = newResult(p, &o)
	s.res.Unfinished = true // until Finish: a run killed mid-way must not read as a pass
	if s.preflights > 0 {
		s.res.Preflight = &results.Preflight{Requests: s.preflights, Login: s.set.HasLogin()}
	}
	if refused != "" {
		s.res.Warnings = append(s.res.Warnings, "preflight: "+refused)
	}
	if err := s.openSockets(ctx, dialer); err != nil {
		return nil, err
	}
	s.limitConns()
	s.judge()
	if err := s.outs.start(s.res); err != nil {
		s.closeTransport()
		return nil, err
	}
	cfg := loadConfig(p, &o)
	cfg.MaxConns = s.conns
	cfg.Exchanger, cfg.Loop, cfg.MoreLoops, cfg.Frames, cfg.Scenarios, cfg.OnTick = s.ex, s.loop, s.moreLoops, set.Frames(), set, ticking(s.outs.progress(), s.sinks)
	cfg.OnSecond = s.onSecond()
	cfg.Cookies = s.cookie
	s.runner = load.NewRunner(cfg)
	return s, nil
}

// startCollectors starts the sinks and the watched target, and lines up
// what collects beside the load in every step (collect.go).
func (s *Session) startCollectors(ctx context.Context) error {
	var err error
	if s.sinks, err = startSinks(s.p); err != nil {
		return err
	}
	if s.sinks != nil {
		s.set.SetDeliveries(s.sinks.ledger)
	}
	if s.watch, err = startWatch(ctx, s.p, targetLog(&s.o), s.o.Lifecycle); err != nil {
		s.sinks.close()
		return err
	}
	s.collectors = s.collecting()
	return nil
}

// targetLog is where a command target's output goes: next to result.json,
// nowhere without one.
func targetLog(o *Options) string {
	if o.Out == "" {
		return ""
	}
	return o.Out + ".target.log"
}

// connect sets up the transport (the plan's, or Options'), sends the
// preflight and picks the event loop. It returns the websocket dialer and
// what the preflight saw refused ("" when nothing was), which stops the
// session with Options.RefusedStops and is noted otherwise.
func (s *Session) connect() (transport.SocketDialer, string, error) {
	if s.ex = s.o.Exchanger; s.ex == nil {
		s.ex = exchanger(s.p)
	}
	dialer := s.o.Dialer
	if dialer == nil {
		dialer = wsx.New(s.p.HTTP.Insecure)
		if !s.o.Goroutines {
			frameLoop(s.p, s.set)
		}
	}
	cookie, refused, err := preflight(s.ex, s.set, s.p, &s.preflights)
	if err == nil && refused != "" && s.o.RefusedStops {
		err = fmt.Errorf("preflight: %s; %w", refused, failure.ErrRefused)
	}
	if err != nil {
		return nil, "", err
	}
	if refused != "" {
		s.note("preflight: " + refused + "; a step in which every request is refused is INVALID and fails the run")
	}
	if s.o.Exchanger == nil && !s.o.Goroutines {
		s.loop, s.moreLoops = eventLoops(s.p)
	}
	s.cookie = cookie
	return dialer, refused, nil
}

// openSockets opens the plan's held websocket sockets. Interrupted while
// they open, the session ends there: result.json says that no step ran,
// and the error matches failure.ErrInterrupted.
func (s *Session) openSockets(ctx context.Context, dialer transport.SocketDialer) error {
	if n := heldSockets(s.p); n > 0 {
		s.note(fmt.Sprintf("opening %d websocket sockets", n))
	}
	err := openSockets(ctx, s.set, s.p, dialer)
	if err == nil {
		return nil
	}
	s.closeTransport()
	if ctx.Err() == nil {
		return err
	}
	ended := time.Now().Round(0)
	s.res.Interrupted, s.res.Unfinished, s.res.EndedAt = true, false, &ended
	s.res.Warnings = append(s.res.Warnings, "interrupted while the websocket sockets were opening: no step ran")
	s.judge()
	return errors.Join(failure.ErrInterrupted, s.outs.file(s.res))
}

// note tells Options.OnNote what the session is doing, if it listens.
func (s *Session) note(what string) {
	if s.o.OnNote != nil {
		s.o.OnNote(what)
	}
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
	if s.p.Load.Soak != nil {
		return s.soak(ctx)
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
					return nil, s.abandon(err)
				}
			}
		}
	}
	return s.Finish(ctx)
}

// soak runs the plan's soak, one step of its length, and finishes.
func (s *Session) soak(ctx context.Context) (*results.Result, error) {
	if _, err := s.step(ctx, soakStep(s.p)); err != nil {
		switch {
		case errors.Is(err, failure.ErrInterrupted):
		case errors.Is(err, failure.ErrEventFailed) || errors.Is(err, failure.ErrTargetDied):
			return s.stopAfter(ctx, err)
		default:
			return nil, s.abandon(err)
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

// step runs st as step st.Index, or as one more repeat of it, through the
// step's pipeline: the collectors begin; the step is executed (here or on
// the agents); the collectors annotate its figures with what they saw over
// its window; it is recorded in the result (combined with its earlier
// repeats); the run is judged; and the outputs take it, result.json first,
// so that it is on disk before the next step begins.
func (s *Session) step(ctx context.Context, st load.Step) (results.Step, error) {
	st = s.traced(st)
	for _, c := range s.collectors {
		c.begin(ctx, st)
	}
	step, sp, lost := s.execute(ctx, st)
	if lost != nil && !errors.Is(lost, failure.ErrAgentLost) {
		if s.events != nil { // the step's events end with it, and are kept in the result
			s.events.annotate(ctx, &step, sp)
		}
		return step, lost
	}
	stops := append([]error{lost}, s.annotate(ctx, &step, sp)...)
	measured := step
	i, err := s.record(step)
	if err != nil {
		return step, fmt.Errorf("step %d: %w", st.Index+1, err)
	}
	if ctx.Err() != nil {
		s.res.Interrupted = true
	}
	s.judge()
	step = s.res.Steps[i] // with its verdict, over the repeats so far
	if err := s.outs.step(&Finished{Step: &step, Measured: &measured, Result: s.res}); err != nil {
		return step, err
	}
	return step, s.stopsAfter(stops)
}

// execute runs st, on the agents or here, and returns its figures as
// measured and the span they cover. An error matching failure.ErrAgentLost comes
// with the merged figures of the agents that answered: the step is kept,
// judged INVALID and written, and the run stops after it.
func (s *Session) execute(ctx context.Context, st load.Step) (results.Step, span, error) {
	if s.o.Remote == nil {
		return s.executeHere(ctx, st)
	}
	step, win, err := s.o.Remote.Step(ctx, st)
	if err != nil && !errors.Is(err, failure.ErrAgentLost) {
		return step, span{}, fmt.Errorf("step %d: %w", st.Index+1, err)
	}
	step.Index = st.Index
	return step, span{st: st, win: win, base: s.o.Remote.Base()}, err
}

// executeHere runs st on this machine. Unless the step has events (which
// may kill the target on purpose), it ends early when the command target
// dies: a dead target's port is not loaded further.
func (s *Session) executeHere(ctx context.Context, st load.Step) (results.Step, span, error) {
	measure, cancel := ctx, context.CancelFunc(func() {})
	if !s.eventful(st) {
		measure, cancel = s.watch.untilDied(ctx)
	}
	step, start, err := s.Measure(measure, st)
	cancel()
	step.StartS = start.Seconds()
	base := s.runner.Base()
	from := base.Add(start + st.Warmup)
	return step, span{st: st, base: base, win: Window{Start: from, End: from.Add(time.Duration(step.DurationS * float64(time.Second)))}}, err
}

// stopsAfter is what a recorded step returns: why the run stops after it
// (an agent lost, a required event failed), else failure.ErrInterrupted when ctx
// was cancelled, else the target's death, else nil.
func (s *Session) stopsAfter(stops []error) error {
	var died error
	var others []error
	for _, err := range stops {
		switch {
		case errors.Is(err, failure.ErrTargetDied):
			died = err
		case err != nil:
			others = append(others, err)
		}
	}
	if err := errors.Join(others...); err != nil {
		return err
	}
	if s.res.Interrupted {
		return failure.ErrInterrupted
	}
	return died
}

// record adds a finished step to the result at its index: new, or
// combined with the earlier repeats of that index (results.Combine), and
// the duplicate ids the scenarios have seen so far.
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
	s.res.NoteDuplicates(duplicates(s.set.Duplicates()))
	return i, nil
}

// passes judges one step alone, as find judges a probe: its SLO held, its
// verdict is HEALTHY or STRESSED (results.Step.Passed), which a strict
// run's doubtful figures make INVALID.
func (s *Session) passes(step results.Step) bool {
	r := results.Result{Steps: []results.Step{step}}
	r.Evaluate(s.terms)
	r.Judge(s.judging())
	return passing(r.Steps[0])
}

// passing reports whether a judged step passed.
func passing(st results.Step) bool { return st.Passed != nil && *st.Passed }

// judging is the rules the session's steps are judged by: the plan's
// verdict rules, and its strictness.
func (s *Session) judging() results.Rules {
	rules := s.rules
	rules.Strict = s.strict
	return rules
}

func duplicates(d []scenario.Duplicate, full bool) ([]results.DuplicateID, bool) {
	out := make([]results.DuplicateID, len(d))
	for i, x := range d {
		out[i] = results.DuplicateID{Source: x.Source, Count: x.Count, Example: x.Example}
	}
	return out, full
}

// judge evaluates the thresholds, then judges the steps and decides the
// run's outcome (results.Result.Judge), which is what passed means.
func (s *Session) judge() {
	s.res.Evaluate(s.terms)
	s.res.Judge(s.judging())
}

// newOutputs are a session's outputs: result.json at o.Out, when it is
// set, then o.Outputs.
func newOutputs(p *plan.Plan, o *Options) *outputs {
	outs := &outputs{}
	if o.Out != "" {
		perm := results.Public
		if p.Data.Users != "" {
			perm = results.Private // ids and tags may hold the data file's values
		}
		outs.list = append(outs.list, &resultFile{path: o.Out, perm: perm})
	}
	outs.list = append(outs.list, o.Outputs...)
	return outs
}

// abandon stops the outputs of a run that err stopped before it finished:
// they take the result so far (result.json keeps what its last step
// wrote), and what they fail at is added to err.
func (s *Session) abandon(err error) error {
	file, others := s.outs.stop(s.res)
	return errors.Join(err, file, others)
}

// Finish waits for late deliveries (up to Drain, less once ctx is
// cancelled) and fills in the run's delivery figures, then judges the run
// and writes the final result.
func (s *Session) Finish(ctx context.Context) (*results.Result, error) {
	if s.sinks != nil {
		if s.o.OnNote != nil {
			s.o.OnNote(fmt.Sprintf("waiting up to %v for late deliveries", s.sinks.drain))
		}
		follow := s.outs.progress()
		s.sinks.settle(ctx, s.res, time.Now(), s.runner.Base(), draining(follow))
		d := s.res.Delivery
		end := &results.Draining{
			Elapsed: time.Duration(d.DrainS * float64(time.Second)), Timeout: s.sinks.drain,
			Missing: d.Missing(), Done: true, Complete: d.DrainComplete != nil && *d.DrainComplete,
		}
		for _, o := range follow {
			o.Drain(end)
		}
		if ctx.Err() != nil && !s.res.Interrupted {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("interrupted while waiting for late deliveries (after %.1fs of up to %v): ids still on their way are counted as undelivered", s.res.Delivery.DrainS, s.sinks.drain))
		}
	}
	if ctx.Err() != nil {
		s.res.Interrupted = true // during a step, or while waiting for deliveries
	}
	s.res.Warnings = append(s.res.Warnings, s.outs.flush()...)
	ended := time.Now().Round(0)
	s.res.EndedAt, s.res.Unfinished = &ended, false
	s.judge()
	file, others := s.outs.stop(s.res)
	if file != nil {
		return nil, file
	}
	return s.res, others
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
	s.outs.stop(s.res) // a session stepped without Finish: the outputs let go
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
	for _, lp := range s.moreLoops {
		lp.Close()
	}
	if s.loop != nil {
		s.loop.Close()
	}
	if s.o.Remote != nil {
		s.o.Remote.Close()
	}
	for _, c := range s.collectors {
		c.close()
	}
}
