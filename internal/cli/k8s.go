package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/k8s"
)

func k8sCmd(e *env) *cobra.Command {
	var f k8s.Flags
	c := &cobra.Command{
		Use:   "k8s PLAN.yaml --agents N [-- COORDINATOR FLAGS]",
		Short: "Print (or --apply) the Kubernetes objects that run a plan with N agents and a coordinator",
		Long:  "ConfigMap, Secret, headless Service, Indexed Job of agents, coordinator Job (docs/distributed.md).",
		Example: `  ceiling k8s plan.yaml --agents 3 --image registry.example/ceiling:v1 | kubectl apply -f -
  ceiling k8s plan.yaml --agents 3 --find --apply -- --start 50`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Options(args, c.ArgsLenAtDash())
			if err != nil {
				return badInput("%w", err)
			}
			if !f.Apply {
				fmt.Fprintf(e.stderr, "ceiling: %s\n", o.Hint())
				m, _ := k8s.Manifests(o) // f.Options validated o
				if err := k8s.Write(e.stdout, m.List()...); err != nil {
					return cannotRun("%w", err)
				}
				return nil
			}
			if err := writable(f.Out); err != nil {
				return err
			}
			res, err := f.Run(e.ctx, o, e.stderr)
			if errors.Is(err, context.Canceled) {
				return &codedError{code: ExitInterrupted, err: err}
			} else if err != nil {
				return cannotRun("%w", err)
			}
			if err := show(e, &outputFlags{out: f.Out}, res); err != nil {
				return err
			}
			return outcome(res)
		},
	}
	f.Register(c.Flags())
	return c
}
