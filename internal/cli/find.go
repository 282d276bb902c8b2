package cli

import (
	"cmp"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/search"
)

func findCmd(e *env) *cobra.Command {
	var q quickFlags
	var o outputFlags
	var f run.SearchFlags
	c := &cobra.Command{
		Use:   "find [PLAN.yaml]",
		Short: "Find the highest rate (or number of users) that meets the SLO",
		Long: `Raise the load geometrically from --start until a step fails the SLO, bisect
between the last passing and the first failing level until they are within
--precision, then run the passing level once more to confirm it.

A step passes when every --slo/slo: threshold holds in it, its verdict is not
OVERLOADED, and nothing made its figures untrustworthy (find is strict). A
step ceiling itself could not drive stops the search: "generator limit
reached", never a server edge.`,
		Example: `  ceiling find --url http://127.0.0.1:8080/ --start 50 --slo 'p99<100ms,errors<1%'
  ceiling find plan.yaml --start 10 --max 5000 --precision 2%`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("rate") && !c.Flags().Changed("vus") && len(args) == 0 {
				q.Rate = "1" // find picks the levels; the flag only says the model
				c.Flags().Set("rate", "1")
			}
			p, err := buildPlan(c, args, &q)
			if err != nil {
				return err
			}
			f.RateGiven = c.Flags().Changed("rate")
			cfg, err := f.Config(p)
			if err != nil {
				return runError(err)
			}
			_, err = find(e, p, &o, cfg)
			return err
		},
	}
	q.register(c)
	o.register(c)
	o.dist.Register(c.Flags(), false)
	fl := c.Flags()
	flaggroup.In(fl, flaggroup.Search, func() {
		fl.StringVar(&f.Start, "start", "", "first level: a rate per second (or users with --vus); default the plan's first level")
		fl.StringVar(&f.Max, "max", "", "highest level to try (default: no cap)")
		fl.StringVar(&f.Precision, "precision", "5%", "stop narrowing when the pass and the fail are this close")
	})
	return c
}

// find searches for the edge of p, prints the table and the answer, and
// returns the result (nil when the search could not start) with the error
// that carries the exit code.
func find(e *env, p *plan.Plan, o *outputFlags, cfg search.Config) (*results.Result, error) {
	desc := fmt.Sprintf("a search: steps of %v after %v of warm-up, each level chosen from the last", p.Load.Step.Duration, p.Load.Warmup.Duration)
	s, err := openRun(e, p, o, 0, desc)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res, err := run.Find(e.ctx, s, cfg)
	if err != nil {
		err = stopped(e, o, res, err)
	} else {
		err = cmp.Or(show(e, o, res), outcome(res))
	}
	hold(e, o, res)
	return res, err
}
