package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/ceiling-dev/ceiling/internal/dashboard"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/outputs"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// openRun opens a run session of p with the output flags: progress and
// notes on stderr unless quiet, then the lines that say what runs. steps is
// how many steps the progress counts (0: a search); desc says how the load
// is stepped.
func openRun(e *env, p *plan.Plan, o *outputFlags, steps int, desc string) (*run.Session, error) {
	if err := results.Writable(o.out, o.html); err != nil {
		return nil, cannotRun("%w", err)
	}
	live := report.NewLive(e.stderr, e.terminal, steps)
	// A search (steps 0) stops when the preflight saw every scenario
	// refused with a 4xx: it would spend minutes measuring refusals.
	opts := run.Options{Out: o.out, Args: e.args, Version: version(), RefusedStops: steps == 0, Lifecycle: e.life}
	if !o.quiet {
		opts.OnNote = func(note string) { fmt.Fprintf(e.stderr, "ceiling: %s\n", note) }
	}
	if err := o.dist.Apply(e.ctx, p, version(), &opts); err != nil {
		return nil, runError(err)
	}
	if _, err := o.outs.Apply(p, &opts); err != nil {
		if opts.Remote != nil {
			opts.Remote.Close() // the agents' sessions, opened above: not left to their lease
		}
		return nil, badInput("%w", err)
	}
	if !o.quiet {
		opts.Outputs = append(opts.Outputs, outputs.NewTerminal(live))
	}
	page, err := o.dash.Listen()
	if err != nil {
		if opts.Remote != nil {
			opts.Remote.Close()
		}
		return nil, badInput("%w", err)
	}
	if page != nil {
		// The session stops it with the other outputs, when it fails too.
		opts.Outputs = append(opts.Outputs, dashboard.NewOutput(page, dashboard.Feed{Steps: steps}))
		fmt.Fprintf(e.stderr, "ceiling: live page at %s\n", page.Addr())
	}
	s, err := run.Open(e.ctx, p, opts) // it stops the outputs when it fails
	if err != nil {
		return nil, runError(err)
	}
	live.TargetCPU = s.TargetCPU
	if !o.quiet {
		fmt.Fprintf(e.stderr, "ceiling: %s, %s\n", run.Describe(p), desc)
		if w := s.Watching(); w != "" {
			fmt.Fprintf(e.stderr, "ceiling: %s\n", w)
		}
	}
	return s, nil
}

// show prints a finished run: the table (Markdown with --md), find's answer,
// the HTML report with --html, and where the result is.
func show(e *env, o *outputFlags, res *results.Result) error {
	if !o.quiet {
		fmt.Fprintln(e.stderr)
	}
	render := func(w io.Writer, r *results.Result) error { return report.TextWidth(w, r, e.tableWidth(o.wide)) }
	if o.md {
		render = report.Markdown
	}
	err := render(e.stdout, res)
	if res.Search != nil && err == nil {
		_, err = fmt.Fprintf(e.stdout, "\n%s\n", report.FindAnswer(res))
	}
	if err != nil {
		return cannotRun("write the table: %w", err)
	}
	if o.html != "" {
		story := ""
		if o.story != nil {
			story = o.story(res)
		}
		if err := report.WriteHTML(o.html, res, story); err != nil {
			return cannotRun("%w", err)
		}
	}
	if !o.quiet {
		fmt.Fprintf(e.stderr, "\nresult: %s\n", o.out)
	}
	if o.dist.Emit {
		return results.WriteLog(e.stdout, res)
	}
	return nil
}

// stopped ends a run that returned err. A run stopped after a step (an
// agent lost, a required event failed) returns its result too: its table
// is printed, and err carries the exit code. The session has stopped its
// outputs either way.
func stopped(e *env, o *outputFlags, res *results.Result, err error) error {
	if res == nil {
		return runError(err)
	}
	return errors.Join(runError(err), show(e, o, res))
}

// outcome is the error that carries a finished run's exit code: interrupted,
// a failed threshold (or no edge found), or none.
func outcome(res *results.Result) error {
	switch {
	case res.Interrupted:
		return &codedError{code: ExitInterrupted, err: failure.ErrInterrupted}
	case !res.Passed && res.Search != nil:
		return &codedError{code: ExitThreshold, err: errors.New(report.FindAnswer(res))}
	case !res.Passed:
		return &codedError{code: ExitThreshold, err: errors.New("a threshold failed")}
	}
	return nil
}

// runError gives an error its exit code by its kind (package failure; nil
// stays nil): bad input, an interrupt, or a run that could not be carried
// out.
func runError(err error) error {
	var in *failure.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &in):
		return &codedError{code: ExitBadInput, err: err}
	case errors.Is(err, failure.ErrInterrupted):
		return &codedError{code: ExitInterrupted, err: err}
	}
	return &codedError{code: ExitCannotRun, err: err}
}
