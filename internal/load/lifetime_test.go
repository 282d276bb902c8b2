package load

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// slowExchanger's sessions answer after delay, unless aborted first; each
// session notes when two goroutines use it at once (a virtual user handed
// to a new worker while the old one still runs).
type slowExchanger struct {
	delay    time.Duration
	shared   atomic.Int64 // exchanges that found their session already in one
	running  atomic.Int64 // exchanges in progress
	mu       sync.Mutex
	sessions []*slowSession
}

type slowSession struct {
	x     *slowExchanger
	busy  atomic.Bool
	mu    sync.Mutex
	abort chan struct{}
}

func (x *slowExchanger) Session() transport.Session {
	s := &slowSession{x: x, abort: make(chan struct{})}
	x.mu.Lock()
	x.sessions = append(x.sessions, s)
	x.mu.Unlock()
	return s
}

func (x *slowExchanger) Close() {}

func (s *slowSession) Do(_ *transport.Request, out *transport.Outcome) {
	if !s.busy.CompareAndSwap(false, true) {
		s.x.shared.Add(1)
	}
	defer s.busy.Store(false)
	s.x.running.Add(1)
	defer s.x.running.Add(-1)
	s.mu.Lock()
	abort := s.abort
	s.mu.Unlock()
	t := time.NewTimer(s.x.delay)
	defer t.Stop()
	select {
	case <-t.C:
		*out = transport.Outcome{Kind: transport.OK, Status: 200}
	case <-abort:
		*out = transport.Outcome{Kind: transport.Reset}
	}
}

// Abort ends the exchange in progress; the session stays usable.
func (s *slowSession) Abort() {
	s.mu.Lock()
	close(s.abort)
	s.abort = make(chan struct{})
	s.mu.Unlock()
}

func (s *slowSession) Close() {}

// threeStepFlow is a plan of one flow of three requests, compiled.
func threeStepFlow(t *testing.T) *scenario.Set {
	step := plan.Step{Request: plan.Request{URL: "http://x.test/"}}
	return compiled(t, plan.Scenario{Steps: []plan.Step{step, step, step}})
}

// A flow of three requests that each take nearly the timeout outlasts the
// drain after a step (timeout + grace). No worker of the step may outlive
// it: the next step must not hand the same virtual user (and its session)
// to a new worker while the old one still runs, and nothing of either step
// may still run once the runner is closed.
func TestFlowOutlastingTheDrainEndsWithItsStep(t *testing.T) {
	for _, model := range []Step{{Rate: 2, Length: time.Second}, {VUs: 2, Length: time.Second}} {
		synctest.Test(t, func(t *testing.T) { flowOutlastingTheDrain(t, model) })
	}
}

func flowOutlastingTheDrain(t *testing.T, model Step) {
	{
		const timeout = 10 * time.Second
		x := &slowExchanger{delay: timeout - 500*time.Millisecond}
		r := NewRunner(Config{Exchanger: x, Scenarios: threeStepFlow(t), Timeout: timeout, MaxWorkers: 2})
		for i := range 2 {
			start := time.Now()
			st := model
			st.Index = i
			res := r.Run(context.Background(), st)
			took := time.Since(start)
			if n := x.running.Load(); n != 0 {
				t.Errorf("step %d: %d exchanges still running after Run returned", i+1, n)
			}
			// window 1s + drain (timeout + grace 2s); the flows are cut there.
			if want := time.Second + timeout + 2*time.Second; took > want+time.Second {
				t.Errorf("step %d took %v, want about %v: the step must end at its drain", i+1, took, want)
			}
			// Two iterations, each of two requests sent (the second cut).
			if res.Iterations != 2 || res.Sent != 4 {
				t.Errorf("step %d: iterations %d, sent %d; want 2 and 4", i+1, res.Iterations, res.Sent)
			}
			// Each flow had one request answered, the second cut at the drain's end.
			its := res.Total.Scenarios[0]
			if its.Completed() != 2 || its.Kinds[transport.Timeout] != 2 {
				t.Errorf("step %d: iterations %d, timed out %d, want 2, 2 (cut at the drain's end)", i+1, its.Completed(), its.Kinds[transport.Timeout])
			}
		}
		if n := x.shared.Load(); n != 0 {
			t.Errorf("%d exchanges found their session in use by another worker", n)
		}
		r.Close()
		if n := x.running.Load(); n != 0 {
			t.Errorf("%d exchanges still running after Close", n)
		}
	}
}
