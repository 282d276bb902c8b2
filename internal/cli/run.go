package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// quickFlags are the flags that build or amend a plan without a file.
type quickFlags struct {
	target                string
	url, method, body     string
	headers               []string
	rate, vus             string
	step, warmup, timeout string
	think, arrival        string
	seed                  int64
	pid                   int
	monitorCmd, prom      string
	promMetrics           []string
	slo                   string
	http2, insecure       bool
	followRedirects       bool
}

// output flags say where results go.
type outputFlags struct {
	out   string
	md    bool
	html  string
	quiet bool
}

func (q *quickFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&q.target, "target", "", "base URL for the plan's relative request URLs (overrides target:)")
	f.StringVar(&q.url, "url", "", "target URL (a quick plan without a file)")
	f.StringVar(&q.method, "method", "", "HTTP method (default GET)")
	f.StringArrayVar(&q.headers, "header", nil, "request header 'Name: value' (repeatable)")
	f.StringVar(&q.body, "body", "", "request body")
	f.StringVar(&q.rate, "rate", "", "open model: requests per second, one step each, e.g. 50,100,200")
	f.StringVar(&q.vus, "vus", "", "closed model: virtual users, one step each, e.g. 10,50,100")
	f.StringVar(&q.step, "step", "", "counted length of each step (default 60s)")
	f.StringVar(&q.warmup, "warmup", "", "uncounted warm-up before each step (default 5s)")
	f.StringVar(&q.timeout, "timeout", "", "timeout of one exchange (default 10s)")
	f.StringVar(&q.think, "think", "", "closed model: pause between a user's iterations")
	f.StringVar(&q.arrival, "arrival", "", "open model arrivals: uniform or poisson")
	f.Int64Var(&q.seed, "seed", 0, "seed of the scenario mix, poisson arrivals and random template values (same seed, same run)")
	f.StringVar(&q.slo, "slo", "", "thresholds that decide the exit code, e.g. 'p99<200ms,errors<1%'")
	f.IntVar(&q.pid, "pid", 0, "watch this running process (and its children): CPU and RSS per step")
	f.StringVar(&q.monitorCmd, "monitor-cmd", "", "start the target with this shell command, wait until --target/--url answers, watch it, stop it at the end")
	f.StringVar(&q.prom, "prom", "", "scrape this Prometheus endpoint every second (with --prom-metric)")
	f.StringArrayVar(&q.promMetrics, "prom-metric", nil, "a metric to keep from --prom, e.g. queue_depth (repeatable)")
	f.BoolVar(&q.http2, "http2", false, "use HTTP/2 (h2 over TLS, h2c over plain text)")
	f.BoolVar(&q.insecure, "insecure", false, "skip TLS certificate verification")
	f.BoolVar(&q.followRedirects, "follow-redirects", false, "follow redirects (a 3xx is otherwise a failure)")
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
			return execute(e, p, &o)
		},
	}
	q.register(c)
	o.register(c)
	return c
}

// buildPlan reads the plan file, if any, applies the quick flags the user
// set, and validates the result.
func buildPlan(c *cobra.Command, args []string, q *quickFlags) (*plan.Plan, error) {
	p := &plan.Plan{}
	if len(args) == 1 {
		var err error
		if p, err = plan.LoadFile(args[0]); err != nil {
			return nil, badInput("%w", err)
		}
	} else if q.url == "" {
		return nil, badInput("nothing to run: give a plan file, or --url with --rate or --vus")
	}
	if err := q.apply(c, p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, badInput("%w", err)
	}
	return p, nil
}

// apply writes the flags the user set into p.
func (q *quickFlags) apply(c *cobra.Command, p *plan.Plan) error {
	set := c.Flags().Changed
	if set("target") {
		p.Target = q.target
	}
	if len(p.Scenarios) == 0 {
		p.Scenarios = []plan.Scenario{{}}
	}
	sc := &p.Scenarios[0]
	if set("url") {
		sc.Request.URL = q.url
	}
	if set("method") {
		sc.Request.Method = strings.ToUpper(q.method)
	}
	if set("body") {
		sc.Request.Body = q.body
	}
	for _, h := range q.headers {
		name, value, err := plan.ParseHeader(h)
		if err != nil {
			return badInput("--header %q: %w", h, err)
		}
		if sc.Request.Headers == nil {
			sc.Request.Headers = map[string]string{}
		}
		sc.Request.Headers[name] = value
	}
	if err := q.applyLoad(set, p); err != nil {
		return err
	}
	if err := q.applyTiming(set, p); err != nil {
		return err
	}
	if set("pid") {
		p.Monitor.PID = q.pid
	}
	if set("monitor-cmd") {
		p.Monitor.Command = q.monitorCmd
		if p.Monitor.Ready == "" && p.Target == "" && len(p.Scenarios) > 0 {
			p.Monitor.Ready = p.Scenarios[0].Request.URL
		}
	}
	if set("prom") || set("prom-metric") {
		p.Monitor.Prometheus = &plan.Prometheus{URL: q.prom, Metrics: q.promMetrics}
	}
	if set("slo") {
		p.SLO = q.slo
	}
	p.HTTP.HTTP2 = p.HTTP.HTTP2 || q.http2
	p.HTTP.Insecure = p.HTTP.Insecure || q.insecure
	p.HTTP.FollowRedirects = p.HTTP.FollowRedirects || q.followRedirects
	if p.Load.Model == "" && len(p.Load.Rates) == 0 && p.Load.Ramp == nil && len(p.Load.VUs) == 0 {
		return badInput("no load given: set --rate (requests per second) or --vus (virtual users)")
	}
	return nil
}

// applyLoad writes the load flags (model, levels) into p.
func (q *quickFlags) applyLoad(set func(string) bool, p *plan.Plan) error {
	if set("rate") && set("vus") {
		return badInput("--rate (open model) and --vus (closed model) exclude each other")
	}
	if set("rate") {
		rates, err := plan.ParseRates(q.rate)
		if err != nil {
			return badInput("--rate: %w", err)
		}
		p.Load.Model, p.Load.Rates, p.Load.Ramp, p.Load.VUs = plan.Open, rates, nil, nil
	}
	if set("vus") {
		vus, err := plan.ParseVUs(q.vus)
		if err != nil {
			return badInput("--vus: %w", err)
		}
		p.Load.Model, p.Load.VUs, p.Load.Rates, p.Load.Ramp = plan.Closed, vus, nil, nil
	}
	return nil
}

// applyTiming writes the duration and arrival flags into p.
func (q *quickFlags) applyTiming(set func(string) bool, p *plan.Plan) error {
	durations := []struct {
		flag, val string
		dst       *time.Duration
	}{
		{"step", q.step, &p.Load.Step.Duration},
		{"timeout", q.timeout, &p.HTTP.Timeout.Duration},
		{"think", q.think, &p.Load.Think.Duration},
	}
	for _, d := range durations {
		if !set(d.flag) {
			continue
		}
		v, err := plan.ParseDuration(d.val)
		if err != nil {
			return badInput("--%s: %w", d.flag, err)
		}
		*d.dst = v
	}
	if set("warmup") {
		v, err := plan.ParseDuration(q.warmup)
		if err != nil {
			return badInput("--warmup: %w", err)
		}
		p.Load.Warmup = &plan.Duration{Duration: v}
	}
	if set("arrival") {
		p.Load.Arrival = q.arrival
	}
	if set("seed") {
		p.Load.Seed = q.seed
	}
	return nil
}

// hint for validate's success line.
func describePlan(p *plan.Plan) string {
	levels := ""
	switch {
	case len(p.Load.VUs) > 0:
		levels = fmt.Sprintf("%d steps of %v users", len(p.Load.VUs), p.Load.VUs)
	case p.Load.Ramp != nil:
		levels = fmt.Sprintf("a ramp from %g/s to %g/s", p.Load.Ramp.From, p.Load.Ramp.To)
	default:
		levels = fmt.Sprintf("%d steps at %v/s", len(p.Load.Rates), p.Load.Rates)
	}
	return fmt.Sprintf("%s, about %v in all", levels, p.Duration().Round(time.Second))
}
