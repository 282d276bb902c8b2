package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/sink"
)

// mockFlags configure a sink run on its own.
type mockFlags struct {
	listen, name, body string
	latency, p50, p99  string
	errorRate          string
	status             int
	limitPer           string
	limitRPS           float64
	idJSON, idRegex    string
	seed               uint64
}

func mockCmd(e *env) *cobra.Command {
	var f mockFlags
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
			o, err := f.options()
			if err != nil {
				return err
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
	fl.StringVar(&f.listen, "listen", "127.0.0.1:9911", "listen address")
	fl.StringVar(&f.name, "name", "mock", "name in the stats")
	fl.StringVar(&f.latency, "latency", "0s", "fixed latency before answering")
	fl.StringVar(&f.p50, "latency-p50", "", "median latency (with --latency-p99: a distribution)")
	fl.StringVar(&f.p99, "latency-p99", "", "99th percentile latency")
	fl.StringVar(&f.errorRate, "error-rate", "0%", "share of requests answered 500")
	fl.IntVar(&f.status, "status", 200, "status of a normal answer")
	fl.StringVar(&f.body, "body", "", `body of a normal answer (default {"ok":true})`)
	fl.StringVar(&f.limitPer, "rate-limit-per", "", `the key of the rate limit: a JSON path into the body ("channel") or "header:X-Name"`)
	fl.Float64Var(&f.limitRPS, "rate-limit-rps", 0, "requests per second allowed per key; past it 429 with Retry-After")
	fl.StringVar(&f.idJSON, "id-json", "", "JSON path of the message id in each body")
	fl.StringVar(&f.idRegex, "id-regex", "", "regular expression whose first group is the message id")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the latency and error draws")
	return c
}

// options turns the flags into sink options; bad values are exit 2.
func (f *mockFlags) options() (sink.Options, error) {
	o := sink.Options{
		Name: f.name, Listen: f.listen, Status: f.status, Body: f.body, Seed: f.seed,
		ID: sink.IDRule{JSON: f.idJSON, Regex: f.idRegex},
	}
	dur := func(flag, v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, badInput("--%s %q: want a duration such as \"50ms\"", flag, v)
		}
		return d, nil
	}
	var err error
	if o.Latency.Fixed, err = dur("latency", f.latency); err != nil {
		return o, err
	}
	if f.p50 != "" || f.p99 != "" {
		if f.p50 == "" || f.p99 == "" {
			return o, badInput("--latency-p50 and --latency-p99 go together")
		}
		p50, err := dur("latency-p50", f.p50)
		if err != nil {
			return o, err
		}
		p99, err := dur("latency-p99", f.p99)
		if err != nil {
			return o, err
		}
		o.Latency.Percentiles = map[float64]time.Duration{0.5: p50, 0.99: p99}
	}
	v, err := plan.ParsePercent(f.errorRate)
	if err != nil {
		return o, badInput("--error-rate: %w", err)
	}
	o.ErrorRate = v / 100
	if f.limitRPS > 0 {
		o.RateLimit = &sink.RateLimit{Per: f.limitPer, RPS: f.limitRPS}
	}
	return o, nil
}
