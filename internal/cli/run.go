package cli

import (
	"cmp"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/agent"
	"github.com/ceiling-dev/ceiling/internal/dashboard"
	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/outputs"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// output flags say where results go.
type outputFlags struct {
	out   string
	md    bool
	wide  bool // every column of the table, whatever the terminal's width
	html  string
	quiet bool
	dist  agent.Flags                  // --agents, --segment (run and find only)
	story func(*results.Result) string // report.html's "what broke first" (nil: report.BrokeFirst)
	outs  outputs.Flags                // --output, --metrics-listen, --junit
	dash  dashboard.Flags              // --dashboard, --dashboard-token
}

func (o *outputFlags) register(c *cobra.Command) {
	f := c.Flags()
	flaggroup.In(f, flaggroup.Output, func() {
		f.StringVar(&o.out, "out", "result.json", "where to write result.json (rewritten after every step)")
		f.BoolVar(&o.md, "md", false, "print the table as Markdown")
		f.BoolVar(&o.wide, "wide", false, "print every column of the table; on a terminal narrower than the table, columns are otherwise left out")
		f.StringVar(&o.html, "html", "", "also write a self-contained HTML report with plots to this file")
		f.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	})
	o.outs.Register(f)
	o.dash.Register(f)
}

func runCmd(e *env) *cobra.Command {
	var q quickFlags
	var o outputFlags
	c := &cobra.Command{
		Use:   "run [PLAN.yaml]",
		Short: "Run a plan, or a quick plan from flags",
		Long: `Run the steps of a plan and write result.json after every step.

Without a plan file, --url and --rate (open model) or --vus (closed model)
make a quick plan; with one, the quick flags override its values.`,
		Example: `  ceiling run --url http://127.0.0.1:8080/ --rate 100,200,400 --step 30s --slo 'p99<200ms'
  ceiling run plan.yaml --md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := buildPlan(c, args, &q)
			if err != nil {
				return err
			}
			return execute(e, p, &o, p.Steps(), p.Describe())
		},
	}
	q.register(c)
	q.registerEach(c)
	o.register(c)
	o.dist.Register(c.Flags(), true)
	return c
}

// buildPlan reads the plan file, if any, applies the quick flags the user
// set, and validates the result.
func buildPlan(c *cobra.Command, args []string, q *quickFlags) (*plan.Plan, error) {
	p, err := loadPlan(c, args, q)
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		return nil, badInput("%w", err)
	}
	return p, nil
}

// loadPlan reads the plan file, if any, and applies the quick flags the
// user set; it does not validate.
func loadPlan(c *cobra.Command, args []string, q *quickFlags) (*plan.Plan, error) {
	return (*plan.Quick)(q).Plan(args, c.Flags().Changed)
}

// execute runs plan p's steps as ceiling run does, prints the table and
// returns the error that carries the exit code.
func execute(e *env, p *plan.Plan, o *outputFlags, steps int, desc string) error {
	s, err := openRun(e, p, o, steps, desc)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Run(e.ctx)
	if err != nil {
		err = stopped(e, o, res, err)
	} else {
		err = cmp.Or(show(e, o, res), outcome(res))
	}
	hold(e, o, res)
	return err
}

// hold keeps the result written at --out served until a client fetches it
// (--hold-result: a coordinator in a pod), when the run has one. A result
// that cannot be held is a warning: the run and its exit code stand.
func hold(e *env, o *outputFlags, res *results.Result) {
	if res == nil || e.ctx.Err() != nil {
		return
	}
	// With --emit-result, after the result on stdout: a log that merges
	// stdout and stderr (a pod's) has them in that order.
	log := e.stderr
	if o.dist.Emit {
		log = e.stdout
	}
	if err := o.dist.HoldResult(e.ctx, o.out, log); err != nil {
		fmt.Fprintf(e.stderr, "ceiling: warning: %v\n", err)
	}
}
