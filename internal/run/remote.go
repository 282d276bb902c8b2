package run

import (
	"context"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// Remote runs a session's steps on other machines and merges their
// figures: the coordinator's side of a distributed run (package agent
// implements it over HTTP). The session does everything else as on one
// machine: it judges the merged step, runs find, repeats and writes
// result.json.
type Remote interface {
	// Step runs st on every generator, each its share, starting at one
	// instant, and returns the merged step (results.MergeSteps) and the
	// wall-clock bounds of its counted window. A generator lost during the
	// step gives the merge of the others with Lost and LostParts set and
	// the step's planned load kept (its target rate or users, not the sum
	// of the shares that answered), and an error matching failure.ErrAgentLost.
	Step(ctx context.Context, st load.Step) (results.Step, Window, error)
	// Fresh makes every generator's next step start with new users and
	// connections (a repeat).
	Fresh(ctx context.Context) error
	// Agents describes the generators, for result.json.
	Agents() []results.Agent
	// Base is the run's start on this machine's clock: series times count
	// from it.
	Base() time.Time
	// Close ends the generators' sessions.
	Close()
}

// Window bounds a step's counted window on the coordinator's clock.
type Window struct {
	Start, End time.Time
}

// remoteRefusals lists what a plan may not have when its steps run on
// agents: its parts that live on the machine that runs the load.
func remoteRefusals(o *Options, hasSinks bool, held, events int, each bool) error {
	switch {
	case o.Remote == nil:
		return nil
	case each:
		return badInput("load.each (--each) is not supported with agents yet: the agents would run the whole mix; run it on one machine")
	case events > 0:
		return badInput("events are not supported with agents yet: they act on the target from the machine that watches it; run the plan on one machine")
	case hasSinks:
		return badInput("sinks (delivery accounting) are not supported with agents yet: each agent would see only its own ids; run the plan on one machine")
	case held > 0:
		return badInput("held websocket sockets are not supported with agents yet; run the plan on one machine")
	}
	return nil
}

// DrainBound is the longest a step's generator may go on after its
// window: the longest wait of an exchange (or an ack), the grace, and a
// margin: how long a coordinator waits for an agent beyond the window
// before calling it lost.
func DrainBound(p *plan.Plan) time.Duration {
	return longestWait(p) + 2*time.Second + 10*time.Second
}

// openRemote opens a session whose steps run on o.Remote's agents: no
// transport, executor, sinks or sockets here (the agents have them, and
// checked the target), the target watched as on one machine.
func openRemote(ctx context.Context, p *plan.Plan, o Options, terms []slo.Term, set *scenario.Set, outs *outputs) (*Session, error) {
	s := &Session{p: p, o: o, terms: terms, set: set, rules: rulesOf(p), strict: strictOf(p), outs: outs}
	var err error
	if s.watch, err = startWatch(ctx, p, targetLog(&o), o.Lifecycle); err != nil {
		return nil, err
	}
	s.collectors = s.collecting()
	s.res = newResult(p, &o)
	s.res.Agents = o.Remote.Agents()
	s.res.Unfinished = true
	s.judge()
	if err := s.outs.start(s.res); err != nil {
		if s.watch != nil {
			s.watch.stop()
		}
		return nil, err
	}
	return s, nil
}
