package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/demo"
)

// demoTargetCmd serves the demo target in the foreground until interrupted:
// the example plans in docs/examples load it, and docs/demo-target.md
// describes its chat backend and limits.
func demoTargetCmd(e *env) *cobra.Command {
	var f demo.Flags
	c := &cobra.Command{
		Use:   "demo-target",
		Short: "Serve the built-in demo target in the foreground (the example plans and the README load it)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := f.Config(c.Flags().Changed)
			if err != nil {
				return badInput("demo-target: %w", err)
			}
			srv, err := demo.Start(cfg)
			if err != nil {
				return cannotRun("%w", err)
			}
			defer srv.Close()
			fmt.Fprintf(e.stderr, "ceiling demo-target: serving on %s (Ctrl-C stops it)\n", srv.URL())
			<-e.ctx.Done()
			return nil
		},
	}
	f.Register(c.Flags())
	return c
}
