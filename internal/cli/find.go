package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
)

// findFlags are find's own flags.
type findFlags struct {
	start, max, precision string
}

func findCmd(e *env) *cobra.Command {
	var q quickFlags
	var o outputFlags
	var f findFlags
	c := &cobra.Command{
		Use:   "find [PLAN.yaml]",
		Short: "Find the highest rate (or number of users) that meets the SLO",
		Long: `Raise the load geometrically from --start until a step fails the SLO, bisect
between the last passing and the first failing level until they are within
--precision, then run the passing level once more to confirm it.

A step passes when every --slo/slo: threshold holds in it, its verdict is not
OVERLOADED, and nothing made its figures untrustworthy (find is strict). A
step ceiling itself could not drive stops the search: "generator limit
reached", never a server edge.`,
		Example: `  ceiling find --url http://127.0.0.1:8080/ --start 50 --slo 'p99<100ms,errors<1%'
  ceiling find plan.yaml --start 10 --max 5000 --precision 2%`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("rate") && !c.Flags().Changed("vus") && len(args) == 0 {
				q.rate = "1" // find picks the levels; the flag only says the model
				c.Flags().Set("rate", "1")
			}
			p, err := buildPlan(c, args, &q)
			if err != nil {
				return err
			}
			cfg, err := f.config(c, p)
			if err != nil {
				return err
			}
			_, err = runFind(e, p, &o, cfg)
			return err
		},
	}
	q.register(c)
	o.register(c)
	fl := c.Flags()
	fl.StringVar(&f.start, "start", "", "first level: a rate per second (or users with --vus); default the plan's first level")
	fl.StringVar(&f.max, "max", "", "highest level to try (default: no cap)")
	fl.StringVar(&f.precision, "precision", "5%", "stop narrowing when the pass and the fail are this close")
	return c
}

// config builds the search from the flags and the plan's model.
func (f *findFlags) config(c *cobra.Command, p *plan.Plan) (search.Config, error) {
	cfg := search.Config{Integer: p.Load.Model == plan.Closed}
	switch {
	case f.start != "":
		v, err := parseLevel(f.start)
		if err != nil {
			return cfg, badInput("--start: %w", err)
		}
		cfg.Start = v
	case cfg.Integer:
		cfg.Start = float64(p.Load.VUs[0])
	case len(p.Load.Rates) > 0 && c.Flags().Changed("rate") || len(p.Load.Rates) > 0 && p.File != "":
		cfg.Start = p.Load.Rates[0]
	default:
		return cfg, badInput("find needs --start (the first rate to try)")
	}
	if f.max != "" {
		v, err := parseLevel(f.max)
		if err != nil {
			return cfg, badInput("--max: %w", err)
		}
		cfg.Max = v
	}
	pct, err := plan.ParsePercent(f.precision)
	if err != nil || pct <= 0 || pct >= 100 {
		return cfg, badInput("--precision %q: want a percentage between 0 and 100 such as \"5%%\"", f.precision)
	}
	cfg.Precision = pct / 100
	if cfg.Max > 0 && cfg.Max < cfg.Start {
		return cfg, badInput("--max %g is below --start %g", cfg.Max, cfg.Start)
	}
	return cfg, nil
}

func parseLevel(s string) (float64, error) {
	rates, err := plan.ParseRates(s)
	if err != nil || len(rates) != 1 {
		return 0, fmt.Errorf("want one positive number, got %q", s)
	}
	return rates[0], nil
}

// settleQuiet is how long find waits without a delivery arriving before it
// stops waiting for an earlier step's backlog.
const settleQuiet = time.Second

// finder runs the steps the search asks for.
type finder struct {
	s      *session
	closed bool
	last   *results.Step
}

// Run runs one step at level and says whether it passed.
func (f *finder) Run(_ context.Context, level float64, confirm bool) (search.Step, error) {
	st := load.Step{Rate: level, Warmup: warmupOf(f.s.p), Length: f.s.p.Load.Step.Duration}
	if f.closed {
		st = load.Step{VUs: int(level), Warmup: warmupOf(f.s.p), Length: f.s.p.Load.Step.Duration}
	}
	if f.last != nil && f.s.sinks != nil {
		// Each probe starts clean: the deliveries an earlier step left
		// queued would otherwise be charged to this one.
		f.s.settled, _ = f.s.sinks.ledger.Settle(f.s.e.ctx, settleQuiet, f.s.sinks.drain)
		// The previous step's ids still missing: lost, or still queued.
		if prev := f.s.sinks.ledger.Step(f.last.Index); prev.Lost > 0 {
			f.s.settleWarning = fmt.Sprintf("%d ids accepted in the step before had not reached the sinks when this step began (after waiting %.1fs for them): lost, or still queued, in which case this step's deliveries wait behind them",
				prev.Lost, f.s.settled.Seconds())
		}
	}
	step, err := f.s.step(st)
	if err != nil {
		return search.Step{}, err
	}
	f.last = step
	if f.s.res.Interrupted {
		return search.Step{}, errInterrupted
	}
	pass := step.Verdict != results.Overloaded && step.Verdict != results.GeneratorLimited &&
		(step.SLOPassed == nil || *step.SLOPassed) && !f.s.stepInvalid(step)
	return search.Step{Pass: pass, GeneratorLimited: step.GeneratorLimited}, nil
}

var errInterrupted = errors.New("interrupted")

// stepInvalid reports a validity finding on step.
func (s *session) stepInvalid(step *results.Step) bool {
	prefix := fmt.Sprintf("step %d: ", step.Index+1)
	for _, w := range s.res.Invalid {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}

func warmupOf(p *plan.Plan) time.Duration {
	if p.Load.Warmup == nil {
		return 0
	}
	return p.Load.Warmup.Duration
}

// runFind searches for the edge, reports it and returns the result (nil
// when the search could not start).
func runFind(e *env, p *plan.Plan, o *outputFlags, cfg search.Config) (*results.Result, error) {
	strat, err := search.New(cfg)
	if err != nil {
		return nil, badInput("%w", err)
	}
	s, err := openSession(e, p, o, 0, p.Strict == nil || *p.Strict)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.atStepEnd = true
	f := &finder{s: s, closed: cfg.Integer}
	r, err := search.Run(e.ctx, strat, f)
	interrupted := errors.Is(err, errInterrupted)
	if err != nil && !interrupted {
		return nil, err
	}
	found := r.Outcome == search.Edge || r.Outcome == search.NoFailure
	s.found = &found
	if found {
		s.res.Edge = edgeOf(s.res, r.Edge, cfg.Integer)
	}
	answer := findAnswer(s, r, cfg.Integer)
	s.res.Search = &results.Search{
		Start: cfg.Start, Max: cfg.Max, Precision: cfg.Precision,
		Outcome: r.Outcome.String(),
		Answer:  answer,
	}
	if _, err := s.finish(func() { fmt.Fprintf(e.stdout, "\n%s\n", answer) }); err != nil {
		return nil, err
	}
	switch {
	case interrupted:
		return s.res, &codedError{code: ExitInterrupted, err: errInterrupted}
	case !found:
		return s.res, &codedError{code: ExitThreshold, err: errors.New(answer)}
	}
	return s.res, nil
}

// edgeOf points at the last step run at the edge level (the confirmation).
func edgeOf(res *results.Result, level float64, users bool) *results.Edge {
	e := &results.Edge{Rate: level}
	if users {
		e.Rate, e.VUs = 0, int(level)
	}
	for i := range res.Steps {
		st := &res.Steps[i]
		if st.TargetRate == level || (users && st.VUs == int(level)) {
			e.Step = st.Index
		}
	}
	return e
}

// findAnswer is the one-line answer: "edge: 480/s at p99<50ms, errors<1%;
// 500/s fails: p99 1.2 s".
func findAnswer(s *session, r search.Result, users bool) string {
	lvl := func(v float64) string {
		if users {
			return fmt.Sprintf("%.0f users", v)
		}
		return report.Rate(v)
	}
	if r.Outcome == search.Unfinished {
		var got []string
		if r.Edge > 0 {
			got = append(got, lvl(r.Edge)+" passed")
		}
		if r.FirstFail > 0 {
			got = append(got, lvl(r.FirstFail)+" failed")
		}
		if len(got) == 0 {
			got = append(got, "no level was judged")
		}
		return fmt.Sprintf("interrupted before the edge was found: %s, and the search had not narrowed and confirmed it", strings.Join(got, ", "))
	}
	criteria := s.p.SLO
	if criteria == "" {
		criteria = "a verdict better than OVERLOADED"
	}
	fail := ""
	if r.FirstFail > 0 {
		fail = fmt.Sprintf("; %s fails: %s", lvl(r.FirstFail), s.whyFailed(r.FirstFail, users))
	}
	switch r.Outcome {
	case search.Edge:
		return fmt.Sprintf("edge: %s at %s%s", lvl(r.Edge), criteria, fail)
	case search.NoFailure:
		return fmt.Sprintf("no failure up to %s at %s: the edge is above it (raise --max)", lvl(r.Edge), criteria)
	case search.StartFails:
		return fmt.Sprintf("no passing level: even the start, %s, fails: %s", lvl(r.FirstFail), s.whyFailed(r.FirstFail, users))
	case search.GeneratorLimited:
		last := r.Probes[len(r.Probes)-1].Level
		return fmt.Sprintf("generator limit reached at %s: ceiling could not drive more, so this is not the target's edge (last passing level %s)", lvl(last), lvl(r.Edge))
	}
	return fmt.Sprintf("no edge confirmed within %d steps: the target's verdicts near %s are unstable (last passing level %s%s)", len(r.Probes), lvl(r.FirstFail), lvl(r.Edge), fail)
}

// whyFailed names what failed in the last step run at level.
func (s *session) whyFailed(level float64, users bool) string {
	var st *results.Step
	for i := range s.res.Steps {
		x := &s.res.Steps[i]
		if x.TargetRate == level || (users && x.VUs == int(level)) {
			st = x
		}
	}
	if st == nil {
		return "not run"
	}
	var why []string
	for _, t := range s.terms {
		if v, ok := t.Eval(st.FiguresOf(t.Scenario)); !ok {
			why = append(why, fmt.Sprintf("%s %s", t.Metric, report.TermValue(t.Metric, v)))
		}
	}
	if len(why) == 0 && st.VerdictReason != "" {
		why = append(why, st.VerdictReason)
	}
	if len(why) == 0 && s.stepInvalid(st) {
		why = append(why, "its figures cannot be trusted (see the warnings)")
	}
	return strings.Join(why, ", ")
}
