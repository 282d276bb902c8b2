package cli

import (
	"cmp"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/agent"
	"github.com/ceiling-dev/ceiling/internal/run"
)

func agentCmd(e *env) *cobra.Command {
	var f agent.ServeFlags
	c := &cobra.Command{
		Use:     "agent --listen ADDR --token-file F",
		Short:   agent.Short,
		Long:    agent.Long,
		Example: agent.Example,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runError(agent.Serve(e.ctx, f, version(), e.life, e.stderr))
		},
	}
	f.Register(c.Flags())
	return c
}

func mergeCmd(e *env) *cobra.Command {
	var o outputFlags
	var apart bool
	c := &cobra.Command{
		Use:   "merge SEGMENT.json ... --out merged.json",
		Short: "Merge the results of a run's segments (run --segment i/N) exactly: histograms merged, then judged",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			res, err := run.MergeFiles(args, o.out, e.args, apart)
			if res == nil {
				return runError(err)
			}
			if werr := show(e, &o, res); werr != nil || err != nil {
				return cmp.Or(werr, runError(err))
			}
			return outcome(res)
		},
	}
	o.register(c)
	c.Flags().BoolVar(&apart, "allow-apart", false, "merge segments whose steps did not run at the same time (refused otherwise: their rates add up to a load the target never received); the merged result says so")
	return c
}
