package run

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// answers is a fake target written as a function: it fills each
// exchange's outcome, on the clock of the goroutine that asks (in a
// synctest bubble, a time.Sleep in it is the target's delay, exactly).
// Every virtual user shares it; sessions counts the sessions opened on
// it, one per user (and the preflight's).
type answers struct {
	do       func(req *transport.Request, out *transport.Outcome)
	sessions atomic.Int64
}

func answering(do func(req *transport.Request, out *transport.Outcome)) *answers {
	return &answers{do: do}
}

func (a *answers) Session() transport.Session { a.sessions.Add(1); return a }
func (a *answers) Close()                     {}
func (a *answers) Do(req *transport.Request, out *transport.Outcome) {
	*out = transport.Outcome{}
	a.do(req, out)
}

// status fills out with an answer of code and body, classified as the
// transport classifies it against the request's expected statuses.
func status(req *transport.Request, out *transport.Outcome, code int, body string) {
	out.Status, out.Kind, out.BytesIn = code, transport.Classify(code, req.Expect, req.Limited), int64(len(body))
	if req.Capture {
		out.Body = []byte(body)
	}
}

// parsePlan parses and validates a plan written as format and args.
func parsePlan(t *testing.T, format string, args ...any) *plan.Plan {
	t.Helper()
	text := fmt.Sprintf(format, args...)
	p, err := plan.Parse("plan.yaml", []byte(text))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, text)
	}
	return p
}

// runPlan opens a session of p with o, runs it and closes it; a session
// that does not open fails the test.
func runPlan(t *testing.T, p *plan.Plan, o Options) (*results.Result, error) {
	t.Helper()
	s, err := Open(t.Context(), p, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	return s.Run(t.Context())
}

// recorder is an Output that keeps what the run showed as it went: the
// steps as they finished, the live line a terminal's output would have
// drawn (report.Live, as plain lines) and the notes (its note method is
// an Options.OnNote).
type recorder struct {
	mu    sync.Mutex
	live  bytes.Buffer
	line  *report.Live
	ticks int
	steps []*results.Step
	notes []string
}

var (
	_ Output         = (*recorder)(nil)
	_ ProgressOutput = (*recorder)(nil)
)

func newRecorder(steps int) *recorder {
	r := &recorder{}
	r.line = report.NewLive(&r.live, false, steps)
	return r
}

func (r *recorder) Start(*results.Result) error { return nil }

func (r *recorder) Step(f *Finished) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, f.Step)
	r.line.Update(f.Measured.Progress())
	return nil
}

func (r *recorder) Stop(*results.Result) error { return nil }

func (r *recorder) Progress(p *results.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks++
	r.line.Update(*p)
}

func (r *recorder) Drain(d *results.Draining) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.line.Drain(*d)
}

func (r *recorder) note(n string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, n)
}

// shown is the live line's text and the notes, one a line.
func (r *recorder) shown() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live.String() + strings.Join(r.notes, "\n")
}

// table is the result as the terminal's table shows it.
func table(t *testing.T, res *results.Result) string {
	t.Helper()
	var b strings.Builder
	if err := report.Text(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// passedOrBusy fails t unless res passed, or did not pass only because
// this machine was too busy to hold the load (a step GENERATOR LIMITED,
// so none passed), which it logs: the wall clock's tests share two cores
// with whatever else runs.
func passedOrBusy(t *testing.T, res *results.Result) {
	t.Helper()
	if res.Passed {
		return
	}
	busy := false
	for _, r := range res.Outcome.Reasons {
		switch r.Kind {
		case results.ReasonGeneratorLimited:
			busy = true
		case results.ReasonNoStepPassed:
		default:
			t.Errorf("the run did not pass: %+v", res.Outcome)
			return
		}
	}
	if !busy {
		t.Errorf("the run did not pass: %+v", res.Outcome)
		return
	}
	t.Logf("the run did not pass, only because this machine was too busy to hold the load: %+v", res.Outcome)
}

// long skips t unless the long tests were asked for (go test -tags long,
// as .ci/run does): runs of several seconds on the wall clock against
// real servers and processes.
func long(t *testing.T) {
	t.Helper()
	if !longTests {
		t.Skip("a long test: go test -tags long runs it (.ci/run does)")
	}
}
