package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
)

func validateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "validate PLAN.yaml",
		Short: "Check a plan and print every problem with file:line:col",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := plan.LoadFile(args[0])
			if err != nil {
				return badInput("%w", err)
			}
			if _, err := run.Terms(p); err != nil {
				return badInput("%w", err)
			}
			fmt.Fprintf(e.stdout, "%s: ok: %s\n", args[0], p.Describe())
			return nil
		},
	}
}
