package cli

import (
	"errors"
	"github.com/ceiling-dev/ceiling/internal/agent"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// quickFlags are the flags that build or amend a plan without a file.
type quickFlags plan.Quick

// output flags say where results go.
type outputFlags struct {
	out   string
	md    bool
	html  string
	quiet bool
	dist  agent.Flags                  // --agents, --segment (run and find only)
	story func(*results.Result) string // report.html's "what broke first" (nil: report.BrokeFirst)
}

func (q *quickFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&q.Target, "target", "", "base URL for the plan's relative request URLs (overrides target:)")
	f.StringVar(&q.URL, "url", "", "target URL (a quick plan without a file)")
	f.StringVar(&q.Method, "method", "", "HTTP method (default GET)")
	f.StringArrayVar(&q.Headers, "header", nil, "request header 'Name: value' (repeatable)")
	f.StringVar(&q.Body, "body", "", "request body")
	f.StringVar(&q.Rate, "rate", "", "open model: requests per second, one step each, e.g. 50,100,200")
	f.StringVar(&q.VUs, "vus", "", "closed model: virtual users, one step each, e.g. 10,50,100")
	f.StringVar(&q.Step, "step", "", "counted length of each step (default 60s)")
	f.StringVar(&q.Warmup, "warmup", "", "uncounted warm-up before each step (default 5s)")
	f.StringVar(&q.Timeout, "timeout", "", "timeout of one exchange (default 10s)")
	f.StringVar(&q.Think, "think", "", "closed model: pause between a user's iterations")
	f.StringVar(&q.Arrival, "arrival", "", "open model arrivals: uniform or poisson")
	f.Int64Var(&q.Seed, "seed", 0, "seed of the scenario mix, poisson arrivals and random template values (same seed, same run)")
	f.StringVar(&q.SLO, "slo", "", "thresholds that decide the exit code, e.g. 'p99<200ms,errors<1%'")
	f.BoolVar(&q.Each, "each", false, "run the stairs once per scenario alone, not the mix (seed 003's per-endpoint table)")
	f.IntVar(&q.Repeat, "repeat", 1, "run the stairs (find: each probe) this many times: medians with their CoV %")
	f.IntVar(&q.PID, "pid", 0, "watch this running process (and its children): CPU and RSS per step")
	f.StringVar(&q.MonitorCmd, "monitor-cmd", "", "start the target with this shell command, wait until --target/--url answers, watch it, stop it at the end")
	f.StringVar(&q.Prom, "prom", "", "scrape this Prometheus endpoint every second (with --prom-metric)")
	f.StringArrayVar(&q.PromMetrics, "prom-metric", nil, "a metric to keep from --prom, e.g. queue_depth (repeatable)")
	f.BoolVar(&q.HTTP2, "http2", false, "use HTTP/2 (h2 over TLS, h2c over plain text)")
	f.BoolVar(&q.Insecure, "insecure", false, "skip TLS certificate verification")
	f.BoolVar(&q.FollowRedirects, "follow-redirects", false, "follow redirects (a 3xx is otherwise a failure)")
}

func (o *outputFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.out, "out", "result.json", "where to write result.json (rewritten after every step)")
	f.BoolVar(&o.md, "md", false, "print the table as Markdown")
	f.StringVar(&o.html, "html", "", "also write a self-contained HTML report with plots to this file")
	f.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
}

func runCmd(e *env) *cobra.Command {
	var q quickFlags
	var o outputFlags
	c := &cobra.Command{
		Use:   "run [PLAN.yaml]",
		Short: "Run a plan, or a quick plan from flags",
		Long: `Run the steps of a plan and write result.json after every step.

Without a plan file, --url and --rate (open model) or --vus (closed model)
make a quick plan; with one, the quick flags override its values.`,
		Example: `  ceiling run --url http://127.0.0.1:8080/ --rate 100,200,400 --step 30s --slo 'p99<200ms'
  ceiling run plan.yaml --md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := buildPlan(c, args, &q)
			if err != nil {
				return err
			}
			s, err := openRun(e, p, &o, p.Steps(), p.Describe())
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.Run(e.ctx)
			if err != nil {
				return runError(err)
			}
			if err := show(e, &o, res); err != nil {
				return err
			}
			return outcome(res)
		},
	}
	q.register(c)
	o.register(c)
	o.dist.Register(c.Flags(), true)
	return c
}

// buildPlan reads the plan file, if any, applies the quick flags the user
// set, and validates the result.
func buildPlan(c *cobra.Command, args []string, q *quickFlags) (*plan.Plan, error) {
	p, err := loadPlan(c, args, q)
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		return nil, badInput("%w", err)
	}
	return p, nil
}

// loadPlan reads the plan file, if any, and applies the quick flags the
// user set; it does not validate.
func loadPlan(c *cobra.Command, args []string, q *quickFlags) (*plan.Plan, error) {
	p := &plan.Plan{}
	if len(args) == 1 {
		var err error
		if p, err = plan.LoadFile(args[0]); err != nil {
			return nil, err
		}
	} else if q.URL == "" {
		return nil, errors.New("nothing to run: give a plan file, or --url with --rate or --vus")
	}
	return p, p.Apply((*plan.Quick)(q), c.Flags().Changed)
}
