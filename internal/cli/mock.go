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
	fl := c.Flags()
	fl.StringVar(&f.Listen, "listen", "127.0.0.1:9911", "listen address")
	fl.StringVar(&f.Name, "name", "mock", "name in the stats")
	fl.StringVar(&f.Latency, "latency", "0s", "fixed latency before answering")
	fl.StringVar(&f.P50, "latency-p50", "", "median latency (with --latency-p99: a distribution)")
	fl.StringVar(&f.P99, "latency-p99", "", "99th percentile latency")
	fl.StringVar(&f.ErrorRate, "error-rate", "0%", "share of requests answered 500")
	fl.IntVar(&f.Status, "status", 200, "status of a normal answer")
	fl.StringVar(&f.Body, "body", "", `body of a normal answer (default {"ok":true})`)
	fl.StringVar(&f.LimitPer, "rate-limit-per", "", `the key of the rate limit: a JSON path into the body ("channel") or "header:X-Name"`)
	fl.Float64Var(&f.LimitRPS, "rate-limit-rps", 0, "requests per second allowed per key; past it 429 with Retry-After")
	fl.StringVar(&f.IDJSON, "id-json", "", "JSON path of the message id in each body")
	fl.StringVar(&f.IDRegex, "id-regex", "", "regular expression whose first group is the message id")
	fl.Uint64Var(&f.Seed, "seed", 0, "seed of the latency and error draws")
	return c
}
