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
		Use:    "demo-target",
		Short:  "Serve the built-in demo target (the example plans load it)",
		Hidden: true,
		Args:   cobra.NoArgs,
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
	fl := c.Flags()
	fl.StringVar(&f.Addr, "addr", "127.0.0.1:8080", "listen address")
	fl.StringVar(&f.Webhook, "webhook", "", "post every saved chat message to this URL (like a Slack webhook); empty: no jobs")
	fl.IntVar(&f.Lanes, "job-lanes", 8, "webhook posts in flight at once: delivery capacity is lanes ÷ webhook latency")
	fl.StringVar(&f.Store, "store", "memory", "where chat messages are saved: memory or file (one writer at a time either way)")
	fl.StringVar(&f.Sync, "sync", "normal", "file store: fsync at most once a second (normal) or after every commit (full)")
	fl.StringVar(&f.DataDir, "data-dir", "", "file store folder (default: a temporary folder removed on exit)")
	fl.Float64Var(&f.FloodRate, "flood-rate", 10, "flood brake: messages per second per site after the burst; below 0: no brake")
	fl.IntVar(&f.FloodBurst, "flood-burst", 600, "flood brake: messages a site may send at once")
	return c
}
