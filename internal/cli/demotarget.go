package cli

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/demo"
)

// demoTargetCmd serves the demo target in the foreground until interrupted:
// the example plans in docs/examples load it, and docs/demo-target.md
// describes its chat backend and limits.
func demoTargetCmd(e *env) *cobra.Command {
	var f demoTargetFlags
	c := &cobra.Command{
		Use:    "demo-target",
		Short:  "Serve the built-in demo target (the example plans load it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := f.config(c.Flags().Changed)
			if err != nil {
				return err
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
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address")
	fl.StringVar(&f.webhook, "webhook", "", "post every saved chat message to this URL (like a Slack webhook); empty: no jobs")
	fl.IntVar(&f.lanes, "job-lanes", 8, "webhook posts in flight at once: delivery capacity is lanes ÷ webhook latency")
	fl.StringVar(&f.store, "store", "memory", "where chat messages are saved: memory or file (one writer at a time either way)")
	fl.StringVar(&f.sync, "sync", "normal", "file store: fsync at most once a second (normal) or after every commit (full)")
	fl.StringVar(&f.dataDir, "data-dir", "", "file store folder (default: a temporary folder removed on exit)")
	fl.Float64Var(&f.floodRate, "flood-rate", 10, "flood brake: messages per second per site after the burst; below 0: no brake")
	fl.IntVar(&f.floodBurst, "flood-burst", 600, "flood brake: messages a site may send at once")
	return c
}

// demoTargetFlags are demo-target's flags.
type demoTargetFlags struct {
	addr, webhook, store, sync, dataDir string
	lanes, floodBurst                   int
	floodRate                           float64
}

// config checks the flags and maps them to the demo target's Config;
// changed reports whether the user set a flag. Every problem is reported.
func (f *demoTargetFlags) config(changed func(string) bool) (demo.Config, error) {
	var bad []string
	if f.store != "memory" && f.store != "file" {
		bad = append(bad, fmt.Sprintf("--store %q: want memory or file", f.store))
	}
	if f.sync != "normal" && f.sync != "full" {
		bad = append(bad, fmt.Sprintf("--sync %q: want normal (fsync once a second) or full (after every commit)", f.sync))
	}
	if f.store == "memory" && (changed("sync") || changed("data-dir")) {
		bad = append(bad, "--sync and --data-dir: only with --store file (the memory store has no file)")
	}
	if f.lanes < 1 {
		bad = append(bad, fmt.Sprintf("--job-lanes %d: want at least 1", f.lanes))
	}
	if f.floodBurst < 1 {
		bad = append(bad, fmt.Sprintf("--flood-burst %d: want at least 1", f.floodBurst))
	}
	if math.IsNaN(f.floodRate) || math.IsInf(f.floodRate, 0) || f.floodRate == 0 {
		bad = append(bad, fmt.Sprintf("--flood-rate %v: want messages per second above 0, or below 0 for no brake", f.floodRate))
	}
	if f.webhook != "" {
		if u, err := url.Parse(f.webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad = append(bad, fmt.Sprintf("--webhook %q: want an http:// or https:// URL", f.webhook))
		}
	}
	if len(bad) > 0 {
		return demo.Config{}, badInput("demo-target: %s", strings.Join(bad, "; "))
	}
	return demo.Config{
		Addr: f.addr, Webhook: f.webhook, JobLanes: f.lanes, Store: f.store, Sync: f.sync, DataDir: f.dataDir,
		FloodRate: f.floodRate, FloodBurst: f.floodBurst,
	}, nil
}
