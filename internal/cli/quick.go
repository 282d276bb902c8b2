package cli

import (
	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/plan"
)

// quickFlags are the flags that build or amend a plan without a file: the
// fields of plan.Quick, which applies them to a plan.
type quickFlags plan.Quick

// register adds the quick flags to c, as run, find and sweep take them,
// each filed under its help group. --each is run's alone (registerEach).
func (q *quickFlags) register(c *cobra.Command) {
	f := c.Flags()
	flaggroup.In(f, flaggroup.Target, func() {
		f.StringVar(&q.Target, "target", "", "base URL for the plan's relative request URLs (overrides target:)")
		f.StringVar(&q.URL, "url", "", "target URL (a quick plan without a file)")
		f.StringVar(&q.Method, "method", "", "HTTP method (default GET)")
		f.StringArrayVar(&q.Headers, "header", nil, "request header 'Name: value' (repeatable)")
		f.StringVar(&q.Body, "body", "", "request body")
		f.StringVar(&q.Timeout, "timeout", "", "timeout of one exchange (default 10s)")
		f.BoolVar(&q.HTTP2, "http2", false, "use HTTP/2 (h2 over TLS, h2c over plain text)")
		f.BoolVar(&q.Insecure, "insecure", false, "skip TLS certificate verification")
		f.BoolVar(&q.FollowRedirects, "follow-redirects", false, "follow redirects (a 3xx is otherwise a failure)")
	})
	flaggroup.In(f, flaggroup.Load, func() {
		f.StringVar(&q.Rate, "rate", "", "open model: requests per second, one step each, e.g. 50,100,200")
		f.StringVar(&q.VUs, "vus", "", "closed model: virtual users, one step each, e.g. 10,50,100")
		f.StringVar(&q.Step, "step", "", "counted length of each step (default 60s)")
		f.StringVar(&q.Warmup, "warmup", "", "uncounted warm-up before each step (default 5s)")
		f.StringVar(&q.Think, "think", "", "closed model: pause between a user's iterations")
		f.StringVar(&q.Arrival, "arrival", "", "open model arrivals: uniform or poisson")
		f.Int64Var(&q.Seed, "seed", 0, "seed of the scenario mix, poisson arrivals and random template values (same seed, same run)")
		f.IntVar(&q.Repeat, "repeat", 1, "run the stairs (find: each probe) this many times: medians with their CoV %")
		f.IntVar(&q.Loops, "loops", 0, "event loops sending the load, each on a core of its own (default: one per core; load.loops)")
	})
	flaggroup.In(f, flaggroup.SLO, func() {
		f.StringVar(&q.SLO, "slo", "", "thresholds that decide the exit code, e.g. 'p99<200ms,errors<1%'")
		f.BoolVar(&q.Strict, "strict", true, "a step whose figures a validity guard doubts (answers after a redirect, bodies of one page, percentiles the timeout shaped, repeated ids) is INVALID and fails the run; --strict=false only warns (plan key strict)")
	})
	flaggroup.In(f, flaggroup.Monitor, func() {
		f.IntVar(&q.PID, "pid", 0, "watch this running process (and its children): CPU and RSS per step")
		f.StringVar(&q.MonitorCmd, "monitor-cmd", "", "start the target with this shell command, wait until --target/--url answers, watch it, stop it at the end")
		f.StringVar(&q.Prom, "prom", "", "scrape this Prometheus endpoint every second (with --prom-metric)")
		f.StringArrayVar(&q.PromMetrics, "prom-metric", nil, "a metric to keep from --prom, e.g. queue_depth (repeatable)")
	})
}

// registerEach adds --each to c: run's alone, since find searches for the
// edge of one mix and a sweep's row is a shape's last step.
func (q *quickFlags) registerEach(c *cobra.Command) {
	f := c.Flags()
	flaggroup.In(f, flaggroup.Load, func() {
		f.BoolVar(&q.Each, "each", false, "run the stairs once per scenario alone, not the mix (the per-endpoint table)")
	})
}
