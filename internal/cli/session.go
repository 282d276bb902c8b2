package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/slo"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/httpx"
)

// session is one run under way: its transport, compiled scenarios, runner
// and result, shared by run (the plan's steps) and find (steps the search
// picks).
type session struct {
	e       *env
	p       *plan.Plan
	o       *outputFlags
	terms   []slo.Term
	rules   results.Rules
	strict  bool
	set     *scenario.Set
	ex      transport.Exchanger
	runner  *load.Runner
	live    *report.Live
	res     *results.Result
	sockets sockets
	watch   *watch
	sinks   *sinks
	index   int
	found   *bool         // find: whether an edge was found, which is what passed means
	settled time.Duration // find: the wait for earlier deliveries before the next step
	// settleWarning (find) is put on the next step: the wait for earlier
	// deliveries ended with some still missing.
	settleWarning string
	// atStepEnd (find) keeps each step's delivered>= judged on what had
	// arrived when it ended, also after the final drain.
	atStepEnd bool
}

// openSession checks the SLO, compiles the plan, sends the preflight, opens
// the websocket sockets and writes an empty result.json.
func openSession(e *env, p *plan.Plan, o *outputFlags, steps int, strict bool) (*session, error) {
	terms, err := slo.Parse(p.SLO)
	if err != nil {
		return nil, badInput("%s: slo: %w", where(p, "slo"), err)
	}
	set, err := scenario.Compile(p)
	if err != nil {
		return nil, badInput("%w", err)
	}
	for _, t := range terms {
		if t.Scenario != "" && !slices.Contains(set.Names(), t.Scenario) {
			return nil, badInput("%s: slo: %q names no scenario (scenarios: %s)", where(p, "slo"), t.Text, strings.Join(set.Names(), ", "))
		}
	}
	s := &session{e: e, p: p, o: o, terms: terms, set: set, strict: strict, rules: rulesOf(p)}
	if s.sinks, err = startSinks(p); err != nil {
		return nil, err
	}
	if s.sinks != nil {
		set.SetDeliveries(s.sinks.ledger)
	}
	if s.watch, err = startWatch(e, p, o.out); err != nil {
		s.sinks.close()
		return nil, err
	}
	s.ex = httpx.New(httpx.Config{
		Timeout: p.HTTP.Timeout.Duration, HTTP2: p.HTTP.HTTP2, Insecure: p.HTTP.Insecure,
		FollowRedirects: p.HTTP.FollowRedirects, MaxConns: p.HTTP.MaxConnections,
		MaxBodyBytes: p.HTTP.MaxBodyBytes,
	})
	if err := preflight(s.ex, set, p); err != nil {
		s.closeTransport()
		return nil, err
	}
	if err := openSockets(set, p); err != nil {
		s.closeTransport()
		return nil, err
	}
	target := p.Target
	if target == "" {
		target = p.URL(&p.Scenarios[0])
	}
	s.res = &results.Result{
		Schema: results.Schema, Command: reproduce(e.args), Name: p.Name, Target: target,
		Host: host(), StartedAt: time.Now().Round(0), Warnings: []string{}, Steps: []results.Step{},
		DuplicateIDs: []results.DuplicateID{}, Invalid: []string{},
	}
	s.judge()
	if err := results.Write(o.out, s.res); err != nil {
		s.close()
		return nil, cannotRun("%w", err)
	}
	s.live = report.NewLive(e.stderr, e.terminal, steps)
	if w := s.watch; w != nil && w.watcher != nil {
		s.live.TargetCPU = func() (float64, bool) {
			now := time.Now()
			f := w.watcher.Window(now.Add(-3*time.Second), now)
			return f.CPUPct, f.Samples >= 2
		}
	}
	var tick func(load.Progress)
	if !o.quiet {
		tick = s.live.Tick
	}
	s.runner = load.NewRunner(load.Config{
		Exchanger: s.ex, Scenarios: set, Timeout: p.HTTP.Timeout.Duration,
		MaxWorkers: maxWorkers(p), Think: p.Load.Think.Duration,
		// CEILING_TIMER=go keeps Go's timers at every rate: a developer's
		// switch for bench/timer.sh, which compares the two.
		PreciseTimer: os.Getenv("CEILING_TIMER") != "go",
		Poisson:      p.Load.Arrival == plan.Poisson, Seed: uint64(p.Load.Seed),
		OnTick: tick,
	})
	if !o.quiet {
		desc := describePlan(p)
		if steps == 0 { // find
			desc = fmt.Sprintf("a search: steps of %v after %v of warm-up, each level chosen from the last", p.Load.Step.Duration, warmupOf(p))
		}
		fmt.Fprintf(e.stderr, "ceiling: %s, %s\n", describeTarget(p), desc)
		if s.watch != nil {
			fmt.Fprintf(e.stderr, "ceiling: %s\n", s.watch.describe(p))
		}
	}
	return s, nil
}

// rulesOf turns the plan's verdict thresholds into results' rules.
func rulesOf(p *plan.Plan) results.Rules {
	r := results.DefaultRules
	v := p.Verdict
	if v.HealthyP95.Duration > 0 {
		r.HealthyP95MS = ms(v.HealthyP95.Duration)
	}
	if v.OverloadedP95.Duration > 0 {
		r.OverloadedP95MS = ms(v.OverloadedP95.Duration)
	}
	if v.MaxErrors != nil {
		r.MaxErrors = v.MaxErrors.Value / 100
	}
	if v.MinRate != nil {
		r.MinRate = v.MinRate.Value / 100
	}
	r.TimeoutMS = ms(p.HTTP.Timeout.Duration)
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// step runs one step, adds it to the result (numbered in the order run),
// judges the run and writes result.json. It marks the run interrupted when
// the context was cancelled.
func (s *session) step(st load.Step) (*results.Step, error) {
	st.Index = s.index
	s.index++
	r := s.runner.Run(s.e.ctx, st)
	step, err := results.NewStep(r, s.set.Names(), s.set.TagKeys())
	if err != nil {
		return nil, cannotRun("%w", err)
	}
	if w := s.watch; w != nil {
		base := s.runner.Base()
		step.Target = w.figures(base.Add(r.WindowStart), base.Add(r.WindowEnd))
		w.annotate(step.Series, base)
		if step.Target.Exited {
			step.Warnings = append(step.Warnings, "the target exited: the figures after its exit measure a dead target"+w.logHint())
		}
	}
	if s.sinks != nil {
		step.Delivery = s.sinks.stepFigures(step.Index)
		if s.atStepEnd {
			n := step.Delivery.Delivered
			step.Delivery.AtStepEnd = &n
		}
	}
	step.SettleS, s.settled = s.settled.Seconds(), 0
	if s.settleWarning != "" {
		step.Warnings = append(step.Warnings, s.settleWarning)
		s.settleWarning = ""
	}
	step.WebSocket = s.sockets.step(s.set)
	if step.WebSocket != nil && step.Completed == 0 && step.Sent == 0 {
		step.Warnings = slices.DeleteFunc(step.Warnings, func(w string) bool {
			return strings.HasPrefix(w, results.NoExchangeWarning) // an idle soak sends nothing
		})
	}
	step.Warnings = append(step.Warnings, socketWarnings(step.WebSocket)...)
	s.res.Steps = append(s.res.Steps, step)
	s.res.NoteDuplicates(s.set.Duplicates())
	s.judge()
	if err := results.Write(s.o.out, s.res); err != nil {
		return nil, cannotRun("%w", err)
	}
	if !s.o.quiet {
		s.live.Done(r)
	}
	if s.e.ctx.Err() != nil {
		s.res.Interrupted = true
	}
	return &s.res.Steps[len(s.res.Steps)-1], nil
}

// judge evaluates thresholds, verdicts and validity; a strict run does not
// pass with a validity finding.
func (s *session) judge() {
	s.res.Evaluate(s.terms)
	s.res.Judge(s.rules)
	if s.strict && len(s.res.Invalid) > 0 {
		s.res.Passed = false
	}
	if s.found != nil {
		s.res.Passed = *s.found
	}
	s.res.Passed = s.res.Passed && !s.res.Interrupted
}

// finish writes the final result and prints the table; extra, if set,
// prints after the table (find's answer).
func (s *session) finish(extra func()) (*results.Result, error) {
	if s.sinks != nil && s.runner != nil {
		if !s.o.quiet {
			fmt.Fprintf(s.e.stderr, "ceiling: waiting up to %v for late deliveries\n", s.sinks.drain)
		}
		s.sinks.settle(s.e.ctx, s.res, time.Now(), s.runner.Base())
	}
	ended := time.Now().Round(0)
	s.res.EndedAt = &ended
	s.judge()
	if err := results.Write(s.o.out, s.res); err != nil {
		return nil, cannotRun("%w", err)
	}
	if !s.o.quiet {
		fmt.Fprintln(s.e.stderr)
	}
	if s.o.md {
		report.Markdown(s.e.stdout, s.res)
	} else {
		report.Text(s.e.stdout, s.res)
	}
	if extra != nil {
		extra()
	}
	if s.o.html != "" {
		if err := writeHTML(s.o.html, s.res); err != nil {
			return nil, err
		}
	}
	if !s.o.quiet {
		fmt.Fprintf(s.e.stderr, "\nresult: %s\n", s.o.out)
	}
	return s.res, nil
}

// close releases the runner, sockets, connections and the watched target.
func (s *session) close() {
	if s.runner != nil {
		s.runner.Close()
	}
	s.closeTransport()
}

func (s *session) closeTransport() {
	s.set.CloseSockets()
	s.ex.Close()
	if s.watch != nil {
		s.watch.stop()
	}
	s.sinks.close()
}

// writeHTML writes the HTML report next to the result.
func writeHTML(path string, r *results.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return cannotRun("write report: %w", err)
	}
	if err := report.HTML(f, r); err != nil {
		f.Close()
		return cannotRun("write report: %w", err)
	}
	if err := f.Close(); err != nil {
		return cannotRun("write report: %w", err)
	}
	return nil
}
