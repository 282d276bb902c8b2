package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Quick holds the values of the quick flags of run and find (--url,
// --rate, --step, ...): they make a plan without a file, or amend one. Each
// field is the flag of the same name; Apply writes those the user set.
type Quick struct {
	Target, URL, Method, Body string
	Headers                   []string
	Rate, VUs                 string
	Step, Warmup, Timeout     string
	Think, Arrival            string
	Seed                      int64
	Repeat                    int
	PID                       int
	MonitorCmd, Prom          string
	PromMetrics               []string
	SLO                       string
	HTTP2, Insecure, Each     bool
	FollowRedirects           bool
	Strict                    bool
	Loops                     int
}

// Apply writes into p the quick flags the user set: set reports whether a
// flag (by name, without the dashes) was given. Errors name the flag.
func (p *Plan) Apply(q *Quick, set func(flag string) bool) error {
	if set("target") {
		p.Target = q.Target
	}
	if len(p.Scenarios) == 0 {
		p.Scenarios = []Scenario{{}}
	}
	if err := q.applyRequest(set, p); err != nil {
		return err
	}
	for _, h := range q.Headers {
		name, value, err := ParseHeader(h)
		if err != nil {
			return fmt.Errorf("--header %q: %w", h, err)
		}
		p.addHeader(name, value)
	}
	if err := q.applyLoad(set, p); err != nil {
		return err
	}
	if err := q.applyTiming(set, p); err != nil {
		return err
	}
	q.applyMonitor(set, p)
	if err := q.applyRun(set, p); err != nil {
		return err
	}
	if p.Load.Model == "" && len(p.Load.Rates) == 0 && p.Load.Ramp == nil && len(p.Load.VUs) == 0 {
		return errors.New("no load given: set --rate (requests per second) or --vus (virtual users)")
	}
	return nil
}

// applyMonitor writes the flags that watch the target (--pid,
// --monitor-cmd, --prom, --prom-metric) into p.
func (q *Quick) applyMonitor(set func(string) bool, p *Plan) {
	if set("pid") {
		p.Monitor.PID = q.PID
	}
	if set("monitor-cmd") {
		p.Monitor.Command = q.MonitorCmd
		if p.Monitor.Ready == "" && p.Target == "" && len(p.Scenarios) > 0 {
			p.Monitor.Ready = p.Scenarios[0].Request.URL
		}
	}
	if set("prom") || set("prom-metric") {
		p.Monitor.Prometheus = &Prometheus{URL: q.Prom, Metrics: q.PromMetrics}
	}
}

// applyRun writes the flags of how the run goes and is judged (--slo,
// --loops, --strict, --repeat, and the switches --each, --http2,
// --insecure, --follow-redirects, which only turn on) into p.
func (q *Quick) applyRun(set func(string) bool, p *Plan) error {
	if set("slo") {
		p.SLO = q.SLO
	}
	if set("loops") {
		p.Load.Loops = q.Loops
	}
	if set("strict") {
		strict := q.Strict
		p.Strict = &strict
	}
	if set("repeat") {
		if q.Repeat < 1 || q.Repeat > MaxRepeat {
			return fmt.Errorf("--repeat %d: want 1 to %d", q.Repeat, MaxRepeat)
		}
		p.Repeat = q.Repeat
	}
	p.Load.Each = p.Load.Each || q.Each
	p.HTTP.HTTP2 = p.HTTP.HTTP2 || q.HTTP2
	p.HTTP.Insecure = p.HTTP.Insecure || q.Insecure
	p.HTTP.FollowRedirects = p.HTTP.FollowRedirects || q.FollowRedirects
	return nil
}

// applyRequest writes --url, --method and --body into the plan's one
// single-request scenario; a plan of several scenarios, a flow or a
// websocket has no one request to patch, and is refused rather than
// silently changed in its first scenario.
func (q *Quick) applyRequest(set func(string) bool, p *Plan) error {
	var given []string
	for _, f := range []string{"url", "method", "body"} {
		if set(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) == 0 {
		return nil
	}
	flags := strings.Join(given, ", ")
	if n := len(p.Scenarios); n > 1 {
		return fmt.Errorf("%s set the request of a one-scenario plan, and this plan has %d: edit the plan (or use --target to send every scenario to another host)", flags, n)
	}
	sc := &p.Scenarios[0]
	switch {
	case sc.WebSocket != nil:
		return fmt.Errorf("%s set an HTTP request, and this plan's scenario is a websocket: edit the plan", flags)
	case len(sc.Steps) > 0:
		return fmt.Errorf("%s set a single request, and this plan's scenario is a flow of %d requests: edit the plan", flags, len(sc.Steps))
	}
	if set("url") {
		sc.Request.URL = q.URL
	}
	if set("method") {
		sc.Request.Method = strings.ToUpper(q.Method)
	}
	if set("body") {
		sc.Request.Body = q.Body
	}
	return nil
}

// addHeader sets a header on every request of the plan: each scenario's
// request or flow steps, each websocket's opening handshake, and the
// login's requests.
func (p *Plan) addHeader(name, value string) {
	set := func(h *map[string]string) {
		if *h == nil {
			*h = map[string]string{}
		}
		(*h)[name] = value
	}
	for i := range p.Scenarios {
		sc := &p.Scenarios[i]
		switch {
		case sc.WebSocket != nil:
			set(&sc.WebSocket.Headers)
		case len(sc.Steps) > 0:
			for j := range sc.Steps {
				set(&sc.Steps[j].Request.Headers)
			}
		default:
			set(&sc.Request.Headers)
		}
	}
	for j := range p.Login {
		set(&p.Login[j].Request.Headers)
	}
}

// applyLoad writes the load flags (model, levels) into p.
func (q *Quick) applyLoad(set func(string) bool, p *Plan) error {
	if set("rate") && set("vus") {
		return errors.New("--rate (open model) and --vus (closed model) exclude each other")
	}
	if set("rate") {
		rates, err := ParseRates(q.Rate)
		if err != nil {
			return fmt.Errorf("--rate: %w", err)
		}
		p.Load.Model, p.Load.Rates, p.Load.Ramp, p.Load.VUs = Open, rates, nil, nil
	}
	if set("vus") {
		vus, err := ParseVUs(q.VUs)
		if err != nil {
			return fmt.Errorf("--vus: %w", err)
		}
		p.Load.Model, p.Load.VUs, p.Load.Rates, p.Load.Ramp = Closed, vus, nil, nil
	}
	return nil
}

// applyTiming writes the duration and arrival flags into p.
func (q *Quick) applyTiming(set func(string) bool, p *Plan) error {
	durations := []struct {
		flag, val string
		dst       *time.Duration
	}{
		{"step", q.Step, &p.Load.Step.Duration},
		{"timeout", q.Timeout, &p.HTTP.Timeout.Duration},
		{"think", q.Think, &p.Load.Think.Duration},
	}
	for _, d := range durations {
		if !set(d.flag) {
			continue
		}
		v, err := ParseDuration(d.val)
		if err != nil {
			return fmt.Errorf("--%s: %w", d.flag, err)
		}
		if v == 0 && d.flag != "think" {
			return fmt.Errorf("--%s %s: want a positive duration (leave the flag out for the default)", d.flag, d.val)
		}
		*d.dst = v
	}
	if set("warmup") {
		v, err := ParseDuration(q.Warmup)
		if err != nil {
			return fmt.Errorf("--warmup: %w", err)
		}
		p.Load.Warmup = &Duration{Duration: v}
	}
	if set("arrival") {
		p.Load.Arrival = q.Arrival
	}
	if set("seed") {
		p.Load.Seed = q.Seed
	}
	return nil
}

// Plan reads the plan file (args holds its path, or nothing) and applies
// the quick flags the user set (set reports one by name); it does not
// validate. Without a file, --url makes the plan.
func (q *Quick) Plan(args []string, set func(flag string) bool) (*Plan, error) {
	p := &Plan{}
	if len(args) == 1 {
		var err error
		if p, err = LoadFile(args[0]); err != nil {
			return nil, err
		}
	} else if q.URL == "" {
		return nil, errors.New("nothing to run: give a plan file, or --url with --rate or --vus")
	}
	return p, p.Apply(q, set)
}
