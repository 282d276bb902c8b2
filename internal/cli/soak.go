package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/plan"
)

// soakFlags are soak's own flags: they fill the plan's load.soak, as the
// quick flags fill the rest of it.
type soakFlags struct {
	length, window, horizon time.Duration
	memoryMB                float64
}

func (k *soakFlags) register(c *cobra.Command) {
	f := c.Flags()
	flaggroup.In(f, flaggroup.Soak, func() {
		f.DurationVar(&k.length, "for", 0, "how long to hold the load, e.g. 8h (load.soak.for)")
		f.DurationVar(&k.window, "window", 0, "length of the windows the soak is cut into, at least 1s (default 1m; load.soak.window)")
		f.DurationVar(&k.horizon, "horizon", 0, "a drift that reaches a known limit within this long of the start fails the soak (default 3 × --for; load.soak.horizon)")
		f.Float64Var(&k.memoryMB, "memory-limit-mb", 0, "the target's memory limit in MiB, its RSS projected against it (default: its cgroup's limit, for the cgroup's memory; load.soak.memory_limit_mb)")
	})
}

// apply sets the plan's load.soak from the flags the user set, over what
// the plan file says.
func (k *soakFlags) apply(c *cobra.Command, p *plan.Plan) {
	if p.Load.Soak == nil {
		p.Load.Soak = &plan.Soak{}
	}
	s, changed := p.Load.Soak, c.Flags().Changed
	if changed("for") {
		s.For.Duration = k.length
	}
	if changed("window") {
		s.Window.Duration = k.window
	}
	if changed("horizon") {
		s.Horizon.Duration = k.horizon
	}
	if changed("memory-limit-mb") {
		s.MemoryLimitMB = k.memoryMB
	}
}

func soakCmd(e *env) *cobra.Command {
	var q quickFlags
	var o outputFlags
	var k soakFlags
	c := &cobra.Command{
		Use:   "soak [PLAN.yaml]",
		Short: "Hold a load for hours and say what drifts, and when it runs out",
		Long: `Hold the plan's one level (one rate, or one number of users) for --for as one
continuous step, cut into windows (--window). Each window's figures are kept in
result.json as it ends; at the end, and live, each figure (the target's memory,
CPU, descriptors, threads and metrics; the latency, errors and throughput; ceiling's
own memory) has a robust line with its 95% interval and a verdict, STABLE or
DRIFTING with its rate; a drift toward a known limit (the target's memory limit,
its ulimit -n, the SLO) is projected to the time it reaches it; error bursts,
latency spikes and restarts are listed with their times and period.

A soak fails when a DRIFTING figure reaches a known limit within --horizon of its
start, or when the SLO breaks in any window (docs/soak.md).`,
		Example: `  ceiling soak plan.yaml --for 8h
  ceiling soak --url http://127.0.0.1:8080/ --rate 200 --for 2h --window 1m --monitor-cmd './server' --html soak.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := loadPlan(c, args, &q)
			if err != nil {
				return badInput("%w", err)
			}
			k.apply(c, p)
			if err := p.Validate(); err != nil {
				return badInput("%w", err)
			}
			return execute(e, p, &o, 1, p.Describe())
		},
	}
	q.register(c)
	k.register(c)
	o.register(c)
	// A soak's length is --for and its windows --window; it runs once.
	c.Flags().MarkHidden("step")
	c.Flags().MarkHidden("repeat")
	return c
}
