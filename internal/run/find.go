package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
)

// settleQuiet is how long a search waits without a delivery arriving before
// it stops waiting for an earlier step's backlog.
const settleQuiet = time.Second

// Finder runs the steps a search asks for on a session, one per level, and
// judges each: it is the search's Runner. A search is strict, as every
// session is unless the plan says strict: false: a step whose figures a
// validity guard doubts is INVALID, and does not pass.
type Finder struct {
	s    *Session
	last *results.Step
}

var _ search.Runner = (*Finder)(nil)

// NewFinder prepares s for a search.
func NewFinder(s *Session) *Finder {
	s.await = deliveryWait(s.terms) // each step is judged as it ends
	return &Finder{s: s}
}

// Run runs one step at level and says whether it passed: its SLO held, its
// verdict is better than OVERLOADED, and nothing made its figures
// untrustworthy; with repeats, the step runs that many times (each with new
// users) and passes when the majority of them did. Before each step after the
// first it waits for the deliveries the last one left queued, which would
// otherwise be charged to this one. It returns failure.ErrInterrupted when ctx
// was cancelled.
func (f *Finder) Run(ctx context.Context, level float64, _ bool) (search.Step, error) {
	s := f.s
	if f.last != nil && s.sinks != nil {
		s.settled, _ = s.sinks.ledger.Settle(ctx, settleQuiet, s.sinks.drain)
		// The previous step's ids still missing: lost, or still queued.
		if prev := s.sinks.ledger.Step(f.last.Index, time.Now()); prev.Lost+prev.Undelivered > 0 {
			s.settleWarning = fmt.Sprintf("%d ids accepted in the step before had not reached the sinks when this step began (after waiting %.1fs for them): lost, or still queued, in which case this step's deliveries wait behind them",
				prev.Lost+prev.Undelivered, s.settled.Seconds())
		}
	}
	st := Level(s.p, level)
	st.Index = s.index
	s.index++
	n := max(s.p.Repeat, 1)
	var step results.Step
	for rep := range n {
		if rep > 0 {
			s.fresh(ctx, rep, n)
		}
		var err error
		if step, err = s.step(ctx, st); err != nil {
			return search.Step{}, err
		}
	}
	f.last = &step
	pass := passing(step)
	return search.Step{Pass: pass, GeneratorLimited: step.GeneratorLimited}, nil
}

// Find searches for the edge on s, then writes the answer into the result
// (its edge, the search and the one-line answer) and finishes the session.
// The result passes when an edge was found; an interrupted search leaves an
// unfinished answer and an interrupted result, not an error. A bad cfg is
// a failure.InputError.
func Find(ctx context.Context, s *Session, cfg search.Config) (*results.Result, error) {
	if s.p.Load.Soak != nil {
		return nil, s.abandon(badInput("%s: a soak holds one level for hours, and find searches for the edge: use ceiling soak, or leave load.soak out", cmp.Or(s.p.Where("load.soak"), "load.soak")))
	}
	if s.p.Load.Each {
		return nil, s.abandon(badInput("%s: load.each (--each) runs the stairs once per scenario, and find searches for the edge of one mix: use run, or leave each out", cmp.Or(s.p.Where("load.each"), "--each")))
	}
	strat, err := search.New(cfg)
	if err != nil {
		return nil, s.abandon(&failure.InputError{Err: err})
	}
	r, err := search.Run(ctx, strat, NewFinder(s))
	if errors.Is(err, failure.ErrAgentLost) || errors.Is(err, failure.ErrEventFailed) || errors.Is(err, failure.ErrTargetDied) {
		return s.stopAfter(ctx, err)
	}
	if err != nil && !errors.Is(err, failure.ErrInterrupted) {
		return nil, s.abandon(err)
	}
	if r.Outcome == search.Edge || r.Outcome == search.NoFailure {
		s.res.Edge = edgeOf(s.res, r.Edge, cfg.Integer)
	}
	s.res.Search = searchOf(r, cfg, s.p.SLO)
	return s.Finish(ctx)
}

// searchOf is what a search found, as result.json keeps it: the facts
// find's answer is phrased from (report.FindAnswer), not the phrase.
func searchOf(r search.Result, cfg search.Config, criteria string) *results.Search {
	out := &results.Search{
		Start: cfg.Start, Max: cfg.Max, Precision: cfg.Precision, Outcome: r.Outcome.String(),
		SLO: criteria, Users: cfg.Integer, PassedLevel: r.Edge, FailedLevel: r.FirstFail, Probes: len(r.Probes),
	}
	if n := len(r.Probes); n > 0 {
		out.LastLevel = r.Probes[n-1].Level
	}
	return out
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
