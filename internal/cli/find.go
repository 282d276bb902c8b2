package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/search"
)

// findFlags are find's own flags.
type findFlags struct {
	start, max, precision string
}

func findCmd(e *env) *cobra.Command {
	var q quickFlags
	var o outputFlags
	var f findFlags
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
			cfg, err := f.config(c, p)
			if err != nil {
				return err
			}
			_, err = find(e, p, &o, cfg)
			return err
		},
	}
	q.register(c)
	o.register(c)
	fl := c.Flags()
	fl.StringVar(&f.start, "start", "", "first level: a rate per second (or users with --vus); default the plan's first level")
	fl.StringVar(&f.max, "max", "", "highest level to try (default: no cap)")
	fl.StringVar(&f.precision, "precision", "5%", "stop narrowing when the pass and the fail are this close")
	return c
}

// config builds the search from the flags and the plan's model.
func (f *findFlags) config(c *cobra.Command, p *plan.Plan) (search.Config, error) {
	cfg := search.Config{Integer: p.Load.Model == plan.Closed}
	switch {
	case f.start != "":
		v, err := parseLevel(f.start)
		if err != nil {
			return cfg, badInput("--start: %w", err)
		}
		cfg.Start = v
	case cfg.Integer:
		cfg.Start = float64(p.Load.VUs[0])
	case len(p.Load.Rates) > 0 && c.Flags().Changed("rate") || len(p.Load.Rates) > 0 && p.File != "":
		cfg.Start = p.Load.Rates[0]
	default:
		return cfg, badInput("find needs --start (the first rate to try)")
	}
	if f.max != "" {
		v, err := parseLevel(f.max)
		if err != nil {
			return cfg, badInput("--max: %w", err)
		}
		cfg.Max = v
	}
	pct, err := plan.ParsePercent(f.precision)
	if err != nil || pct <= 0 || pct >= 100 {
		return cfg, badInput("--precision %q: want a percentage between 0 and 100 such as \"5%%\"", f.precision)
	}
	cfg.Precision = pct / 100
	if cfg.Max > 0 && cfg.Max < cfg.Start {
		return cfg, badInput("--max %g is below --start %g", cfg.Max, cfg.Start)
	}
	if _, err := search.New(cfg); err != nil {
		return cfg, badInput("%w", err)
	}
	return cfg, nil
}

func parseLevel(s string) (float64, error) {
	rates, err := plan.ParseRates(s)
	if err != nil || len(rates) != 1 {
		return 0, fmt.Errorf("want one positive number, got %q", s)
	}
	return rates[0], nil
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
		return nil, runError(err)
	}
	if err := show(e, o, res); err != nil {
		return res, err
	}
	return res, outcome(res)
}
