package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/sweep"
)

func sweepCmd(e *env) *cobra.Command {
	var q quickFlags
	var s sweep.Spec
	var configs, need string
	var md, quiet bool
	c := &cobra.Command{
		Use:   "sweep [PLAN.yaml]",
		Short: "Run the same load against the target under several shapes (workers × CPUs × memory): which to deploy?",
		Long: `Start the target fresh under each shape (in a cgroup with its CPU quota and memory
limit), run the same load against it, and print seed 004's table (docs/sweep.md).
--cmd, --env, --ready, --url and --target are templates of the shape ({{.port}} etc.).`,
		Example: `  ceiling sweep --configs "1@0.5/256m 1@1/512m 2@1/512m" --cmd 'ceiling demo-target --addr 127.0.0.1:{{.port}}' \
    --ready 'http://127.0.0.1:{{.port}}/health' --url 'http://127.0.0.1:{{.port}}/burn' --vus 8 --step 20s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if s.Configs, err = sweep.ParseConfigs(configs); err != nil {
				return badInput("--configs: %w", err)
			}
			if s.Need, err = sweep.ParseNeed(need); err != nil {
				return badInput("%w", err)
			}
			s.Plan = func(v sweep.Values) (*plan.Plan, error) { return sweepPlan(c, args, q, v) }
			s.Command = "ceiling " + strings.Join(secret.Names(nil).Args(e.args), " ")
			s.Run = run.Options{Args: e.args, Version: version()}
			if !quiet {
				s.Run.OnNote = func(note string) { fmt.Fprintf(e.stderr, "ceiling: %s\n", note) }
			}
			res, err := sweep.Run(e.ctx, s)
			if res != nil {
				render := sweep.Text
				if md {
					render = sweep.Markdown
				}
				if werr := render(e.stdout, res); werr != nil {
					return cannotRun("write the table: %w", werr)
				}
			}
			if errors.Is(err, sweep.ErrInvalid) {
				return badInput("%w", err)
			}
			return runError(err)
		},
	}
	q.register(c)
	fl := c.Flags()
	fl.StringVar(&configs, "configs", "", `the shapes, workers@cpus/memory: "1@0.5/256m 2@1/512m 4@2/1g"`)
	fl.StringVar(&s.Cmd, "cmd", "", "the command that starts the target (a template)")
	fl.StringArrayVar(&s.Env, "env", []string{"WORKERS={{.workers}}"}, "the target's environment, KEY=template (repeatable)")
	fl.StringVar(&s.Ready, "ready", "", "a URL that answers once the target is up (a template)")
	fl.Float64Var(&s.UsersPerRPS, "users-per-rps", 0.5, "requests a second one active user makes, for est. users")
	fl.StringVar(&need, "need", "", "mark the smallest shape that holds this rate, e.g. 1500/s")
	fl.StringVar(&s.Out, "out", "sweep.json", "where to write sweep.json; each shape's result.json goes in a folder beside it")
	fl.BoolVar(&md, "md", false, "print the table as Markdown, with Helm values for each shape")
	fl.BoolVar(&quiet, "quiet", false, "no notes on stderr")
	return c
}

// sweepPlan is the plan one shape runs: the plan file, if any, with the
// quick flags applied, --url and --target rendered with the shape's values.
func sweepPlan(c *cobra.Command, args []string, q quickFlags, v sweep.Values) (*plan.Plan, error) {
	var err error
	if q.URL, err = v.Render(q.URL); err != nil {
		return nil, err
	}
	if q.Target, err = v.Render(q.Target); err != nil {
		return nil, err
	}
	return loadPlan(c, args, &q)
}
