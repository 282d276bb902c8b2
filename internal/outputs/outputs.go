package outputs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Flags are the output flags of run and find.
type Flags struct {
	// Outputs are --output KIND=TARGET, repeatable.
	Outputs []string
	// Listen is --metrics-listen ADDR.
	Listen string
	// JUnit is --junit FILE.
	JUnit string
}

// Register adds the flags to fs, under the Outputs help group.
func (f *Flags) Register(fs *pflag.FlagSet) {
	flaggroup.In(fs, flaggroup.Output, func() {
		fs.StringArrayVar(&f.Outputs, "output", nil, "live output, repeatable: "+plan.OutputsHelp()+"; also outputs: in a plan")
		fs.StringVar(&f.Listen, "metrics-listen", "", "serve the live series in Prometheus text format at ADDR/metrics (a port alone listens on 127.0.0.1)")
		fs.StringVar(&f.JUnit, "junit", "", "write a JUnit XML report (a test case per step and per SLO term) to FILE when the run ends")
	})
}

// Outputs are a run's live series under way (Prometheus remote write,
// --metrics-listen, JSON lines): one run.Output that turns each second and
// each step into samples once and hands them to every one of them.
type Outputs struct {
	runID  string
	mu     sync.Mutex // guards state against the session's own final flush
	state  *state
	sinks  []sink
	closed bool
}

// sink is one live output.
type sink interface {
	// second takes one second's samples and the line of JSON it makes.
	second(sec *run.Second, samples []sample)
	// step takes a finished step.
	step(runID string, st *results.Step, samples []sample)
	// close ends the output; it returns what was lost, in sentences.
	close() []string
}

var (
	_ run.Output       = (*Outputs)(nil)
	_ run.SecondOutput = (*Outputs)(nil)
	_ run.FlushOutput  = (*Outputs)(nil)
)

// Apply starts the outputs the flags and plan p ask for and adds them to
// opts.Outputs: the live series, the JUnit report (--junit) and the
// Markdown report appended to $GITHUB_STEP_SUMMARY when it is set. The
// session stops them; Close stops the live series of a run that never
// opened one. A bad output is an error that names it.
func (f *Flags) Apply(p *plan.Plan, opts *run.Options) (*Outputs, error) {
	specs := append(append([]string(nil), p.Outputs...), f.Outputs...)
	o := &Outputs{runID: newRunID(), state: newState(p.Labels)}
	if len(specs) == 0 && f.Listen == "" && f.JUnit == "" {
		opts.Outputs = append(opts.Outputs, stepSummary{})
		return o, nil
	}
	var errs []error
	for _, spec := range specs {
		if err := plan.CheckOutput(spec); err != nil {
			errs = append(errs, fmt.Errorf("--output: %w", err))
			continue
		}
		kind, target, _ := strings.Cut(spec, "=")
		switch kind {
		case plan.OutputPrometheus:
			o.sinks = append(o.sinks, newRemote(target))
		case plan.OutputJSON:
			j, err := newJSONLines(target, o.runID)
			if err != nil {
				errs = append(errs, fmt.Errorf("--output %s: %w", spec, err))
				continue
			}
			o.sinks = append(o.sinks, j)
		}
	}
	if f.Listen != "" {
		e, err := listen(f.Listen)
		if err != nil {
			errs = append(errs, fmt.Errorf("--metrics-listen %s: %w", f.Listen, err))
		} else {
			o.sinks = append(o.sinks, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		o.stop()
		return nil, err
	}
	opts.RunID = o.runID
	if len(o.sinks) > 0 {
		opts.Outputs = append(opts.Outputs, o)
		if opts.OnNote != nil {
			opts.OnNote(fmt.Sprintf("live outputs: %s; run_id %s", o.describe(), o.runID))
		}
	}
	if f.JUnit != "" {
		opts.Outputs = append(opts.Outputs, junit{path: f.JUnit})
	}
	opts.Outputs = append(opts.Outputs, stepSummary{})
	return o, nil
}

// describe names the live outputs, secrets left out.
func (o *Outputs) describe() string {
	var names []string
	for _, s := range o.sinks {
		switch s := s.(type) {
		case *remote:
			names = append(names, "Prometheus remote write to "+secret.URL(s.url))
		case *jsonLines:
			names = append(names, "JSON lines to "+s.path)
		case *exporter:
			names = append(names, "metrics at http://"+s.Addr()+"/metrics")
		}
	}
	return strings.Join(names, ", ")
}

// RunID is the run's id, the run_id label of every series.
func (o *Outputs) RunID() string { return o.runID }

// newRunID names a run: when it started, and four random hex digits.
func newRunID() string {
	return fmt.Sprintf("%s-%04x", time.Now().UTC().Format("20060102T150405"), rand.Uint32()&0xffff)
}

// Start does nothing: the series begin with the first second.
func (o *Outputs) Start(*results.Result) error { return nil }

// Second turns a counted second into samples and sends them.
func (o *Outputs) Second(sec *run.Second) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	samples := o.state.second(o.runID, sec)
	for _, s := range o.sinks {
		s.second(sec, samples)
	}
}

// Step sends a finished step's figures (its repeats combined, with its
// verdict). It never fails: a series that cannot keep up loses samples,
// and Flush says so.
func (o *Outputs) Step(f *run.Finished) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	samples := o.state.step(o.runID, f.Step)
	for _, s := range o.sinks {
		s.step(o.runID, f.Step, samples)
	}
	return nil
}

// Flush stops the series (the remote writes get a few seconds to send
// what is queued) and says what they lost.
func (o *Outputs) Flush() []string { return o.stop() }

// Stop stops the series, if Flush did not.
func (o *Outputs) Stop(*results.Result) error {
	o.stop()
	return nil
}

// stop ends the live outputs (the remote writes get a few seconds to send
// what is queued) and says what they lost.
func (o *Outputs) stop() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	var lost []string
	for _, s := range o.sinks {
		lost = append(lost, s.close()...)
	}
	return lost
}

// Close stops the live series, if no session did: the outputs of a run
// that never opened one. It is safe on nil.
func (o *Outputs) Close() {
	if o != nil {
		o.stop()
	}
}

// junit writes the JUnit report (--junit) of the run when it ends: of the
// result so far when it stopped on an error, nothing when it never opened.
type junit struct{ path string }

var _ run.Output = junit{}

func (junit) Start(*results.Result) error { return nil }
func (junit) Step(*run.Finished) error    { return nil }
func (j junit) Stop(res *results.Result) error {
	if res == nil {
		return nil
	}
	return WriteJUnit(j.path, res)
}

// stepSummary appends the run's Markdown report to $GITHUB_STEP_SUMMARY
// when it ends (AppendStepSummary): of the result so far when it stopped on
// an error, nothing when it never opened.
type stepSummary struct{}

var _ run.Output = stepSummary{}

func (stepSummary) Start(*results.Result) error { return nil }
func (stepSummary) Step(*run.Finished) error    { return nil }
func (stepSummary) Stop(res *results.Result) error {
	if res == nil {
		return nil
	}
	return AppendStepSummary(res)
}
