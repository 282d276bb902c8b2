package run

import (
	"errors"
	"os"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// PageConns is how many connections a live page of the run (an Output
// that serves one, --dashboard) holds open at most, whoever connects:
// the run keeps them out of its connections' share of the open-file
// limit, with its other descriptors.
const PageConns = 32

// An Output consumes a run as it goes: result.json, the live series
// (Prometheus remote write, --metrics-listen, JSON lines), the JUnit report,
// the terminal's live line. The session calls it from one goroutine at a
// time, in this order: Start once, when the session has opened; Step after
// every step, once the step is recorded and judged and before the next one
// begins; Stop once, when the run has ended. What an output does beyond
// that it says through the optional interfaces below (SecondOutput,
// ProgressOutput, FlushOutput).
type Output interface {
	// Start takes the result as the session opened it: no step yet,
	// unfinished. An error stops the session from opening.
	Start(res *results.Result) error
	// Step takes a finished step. An error stops the run after it.
	Step(f *Finished) error
	// Stop takes the run's final result, or the result so far when the run
	// stopped on an error (then still Unfinished), or nil when the session
	// never opened. It releases what the output holds.
	Stop(res *results.Result) error
}

// A SecondOutput also takes each second of a step as it is counted (a live
// series). Second runs on the step's collector goroutine: it must not block,
// nor keep sec.Latency. The executor counts the seconds' breakdowns (by
// scenario and tag) only when an output takes them.
type SecondOutput interface {
	Second(sec *Second)
}

// A ProgressOutput also follows how a running step stands, about once a
// second (on the step's collector goroutine), and how the wait for late
// deliveries after the load stands (a live line).
type ProgressOutput interface {
	Progress(p *results.Progress)
	Drain(d *results.Draining)
}

// A FlushOutput can lose figures (a remote write that could not keep up):
// Flush, called once before the run's final result is judged and written,
// sends what it still holds and says, in sentences, what it lost. They are
// the result's warnings.
type FlushOutput interface {
	Flush() (lost []string)
}

// Finished is a step that has ended, as the outputs take it.
type Finished struct {
	// Step is the step as the result holds it: its repeats so far
	// combined, judged.
	Step *results.Step
	// Measured is this run of the step alone (one repeat), as measured.
	Measured *results.Step
	// Result is the whole result so far, judged: what result.json holds
	// after this step.
	Result *results.Result
}

// resultFile is result.json as an output: written whole when the session
// opens, after every step (so that a finished step is on disk before the
// next begins), and with the final result. A run stopped by an error keeps
// what its last step wrote.
type resultFile struct {
	path string
	perm os.FileMode
	w    results.Writer // its buffers, kept from one write to the next
}

var (
	_ Output       = (*resultFile)(nil)
	_ WindowOutput = (*resultFile)(nil)
)

// Window rewrites result.json after a soak's window.
func (f *resultFile) Window(res *results.Result) error { return f.w.Write(f.path, res, f.perm) }

func (f *resultFile) Start(res *results.Result) error { return f.w.Write(f.path, res, f.perm) }

func (f *resultFile) Step(x *Finished) error { return f.w.Write(f.path, x.Result, f.perm) }

func (f *resultFile) Stop(res *results.Result) error {
	if res == nil || res.Unfinished {
		return nil
	}
	return f.w.Write(f.path, res, f.perm)
}

// outputs are a session's outputs, result.json first.
type outputs struct {
	list    []Output
	stopped bool
}

// start starts every output with the opened result.
func (o *outputs) start(res *results.Result) error {
	for _, out := range o.list {
		if err := out.Start(res); err != nil {
			return err
		}
	}
	return nil
}

// step gives every output the finished step, in order; the first error
// stops the others from taking it (result.json comes first: a step that is
// not on disk is not published).
func (o *outputs) step(f *Finished) error {
	for _, out := range o.list {
		if err := out.Step(f); err != nil {
			return err
		}
	}
	return nil
}

// flush flushes the outputs that can lose figures and returns what they
// lost.
func (o *outputs) flush() []string {
	var lost []string
	for _, out := range o.list {
		if f, ok := out.(FlushOutput); ok {
			lost = append(lost, f.Flush()...)
		}
	}
	return lost
}

// stop stops every output once, with res. The first error is
// result.json's, when it failed: file is that error alone.
func (o *outputs) stop(res *results.Result) (file, others error) {
	if o == nil || o.stopped {
		return nil, nil
	}
	o.stopped = true
	var errs []error
	for i, out := range o.list {
		err := out.Stop(res)
		if _, ok := out.(*resultFile); ok && i == 0 {
			file = err
			continue
		}
		errs = append(errs, err)
	}
	return file, errors.Join(errs...)
}

// file writes result.json alone, when the session has one: the result of
// a session interrupted while it opened, whose outputs never started.
func (o *outputs) file(res *results.Result) error {
	if len(o.list) > 0 {
		if f, ok := o.list[0].(*resultFile); ok {
			return f.w.Write(f.path, res, f.perm)
		}
	}
	return nil
}

// seconds returns what takes each counted second, nil when no output does.
func (o *outputs) seconds() []SecondOutput {
	var out []SecondOutput
	for _, x := range o.list {
		if s, ok := x.(SecondOutput); ok {
			out = append(out, s)
		}
	}
	return out
}

// progress returns what follows a running step, nil when no output does.
func (o *outputs) progress() []ProgressOutput {
	var out []ProgressOutput
	for _, x := range o.list {
		if p, ok := x.(ProgressOutput); ok {
			out = append(out, p)
		}
	}
	return out
}
