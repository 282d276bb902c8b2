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
// agent lost, a required event failed, the target died) returns its result
// too: its table is printed, and its outcome gives the exit code, with
// err's message. The session has stopped its outputs either way.
func stopped(e *env, o *outputFlags, res *results.Result, err error) error {
	if res == nil {
		return runError(err)
	}
	shown := show(e, o, res)
	coded := runError(err)
	var c *codedError
	if errors.As(outcome(res), &c) && !errors.As(err, new(*failure.InputError)) {
		coded = &codedError{code: c.code, err: err}
	}
	return errors.Join(coded, shown)
}

// outcome is the error that carries a finished run's exit code, read from
// its outcome's status (results.Outcome), as docs/cli.md's table maps it:
// passed 0, failed 1 (find: no edge), could not run 3, interrupted 130; a
// file left unfinished does not pass (1). It says why in one line, the
// gravest reason first.
func outcome(res *results.Result) error {
	o := res.Outcome
	if o.Status == "" { // a result from before outcomes were written
		o.Status = map[bool]string{true: results.StatusPassed, false: results.StatusFailed}[res.Passed]
	}
	why := firstReason(o)
	if res.Search != nil && o.Status == results.StatusFailed {
		why = report.FindAnswer(res)
	}
	return exitOf(o, why)
}

// exitOf is the exit code of an outcome, the one mapping from status to
// code (docs/cli.md): nil when it passed, else a coded error that says why.
func exitOf(o results.Outcome, why string) error {
	switch o.Status {
	case results.StatusPassed:
		return nil
	case results.StatusInterrupted:
		return &codedError{code: ExitInterrupted, err: failure.ErrInterrupted}
	case results.StatusCouldNotRun:
		return &codedError{code: ExitCannotRun, err: errors.New(why)}
	}
	return &codedError{code: ExitThreshold, err: errors.New(why)}
}

// firstReason says why a run did not pass in one line: its gravest
// reason, and how many more the table lists.
func firstReason(o results.Outcome) string {
	switch len(o.Reasons) {
	case 0:
		return "the run did not pass"
	case 1:
		return "the run did not pass: " + o.Reasons[0].String()
	}
	return fmt.Sprintf("the run did not pass: %s (and %d more reasons, above)", o.Reasons[0], len(o.Reasons)-1)
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
