package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/sink"
)

func mockCmd(e *env) *cobra.Command {
	var f sink.Flags
	c := &cobra.Command{
		Use:   "mock",
		Short: "Run a mock outside service (a sink) that records which message ids arrive",
		Long: `Serve a mock of an outside API the target calls (a Slack or Discord webhook,
a payment or mail API) on loopback until interrupted: any path and method,
answered after a latency (fixed, or a distribution), with an error rate and a
per-key rate limit (429 with Retry-After), recording each message id found in
the bodies. Its counts are served as JSON at /__ceiling/stats and as
Prometheus text at /__ceiling/metrics, and printed when it stops.`,
		Example: `  ceiling mock --listen 127.0.0.1:9911 --latency 50ms --id-json text
  ceiling mock --latency-p50 40ms --latency-p99 200ms --rate-limit-per channel --rate-limit-rps 1`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			o, err := f.Options()
			if err != nil {
				return badInput("%w", err)
			}
			s, err := sink.Start(o)
			if err != nil {
				return cannotRun("%w", err)
			}
			fmt.Fprintf(e.stderr, "ceiling mock: %s (Ctrl-C stops it; stats at %s%s)\n", s.URL(), s.URL(), sink.StatsPath)
			<-e.ctx.Done()
			s.Close()
			stats, _ := json.MarshalIndent(s.Stats(), "", "  ")
			fmt.Fprintf(e.stdout, "%s\n", stats)
			return nil
		},
	}
	f.Register(c.Flags())
	return c
}
