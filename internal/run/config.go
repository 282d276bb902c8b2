package run

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/search"
	"github.com/ceiling-dev/ceiling/internal/slo"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/httpx"
	"github.com/ceiling-dev/ceiling/internal/transport/wsx"
)

// This file maps a plan to what the lower layers are configured with: the
// steps, the executor, the transport and the verdict rules (sinks.go and
// watch.go map the sinks and the monitor). Nothing outside this package
// reads these plan keys.

// Steps lists the steps a plan runs in order: one per rate or per number of
// users, or one for a ramp.
func Steps(p *plan.Plan) []load.Step {
	warm := warmupOf(p)
	var steps []load.Step
	switch {
	case p.Load.Model == plan.Closed:
		for i, v := range p.Load.VUs {
			steps = append(steps, load.Step{Index: i, VUs: v, Warmup: warm, Length: p.Load.Step.Duration})
		}
	case p.Load.Ramp != nil:
		steps = append(steps, load.Step{
			Ramp:   &schedule.Linear{From: p.Load.Ramp.From, To: p.Load.Ramp.To},
			Warmup: warm, Length: p.Load.Ramp.Over.Duration,
		})
	default:
		for i, r := range p.Load.Rates {
			steps = append(steps, load.Step{Index: i, Rate: r, Warmup: warm, Length: p.Load.Step.Duration})
		}
	}
	return steps
}

// Level returns a step of the plan's model at one level: a rate per second
// in the open model, a number of users in the closed one.
func Level(p *plan.Plan, level float64) load.Step {
	st := load.Step{Rate: level, Warmup: warmupOf(p), Length: p.Load.Step.Duration}
	if p.Load.Model == plan.Closed {
		st.Rate, st.VUs = 0, int(level)
	}
	return st
}

func warmupOf(p *plan.Plan) time.Duration {
	if p.Load.Warmup == nil {
		return 0
	}
	return p.Load.Warmup.Duration
}

// strictOf says whether a run of p is strict: by default, unless the plan
// says strict: false (or --strict=false did). A local run, a coordinator's
// over agents and a segment's judge alike.
func strictOf(p *plan.Plan) bool { return p.Strict == nil || *p.Strict }

// rulesOf turns the plan's verdict thresholds into results' rules.
func rulesOf(p *plan.Plan) results.Rules {
	r := results.DefaultRules
	v := p.Verdict
	if v.HealthyP95.Duration > 0 {
		r.HealthyP95MS = ms(v.HealthyP95.Duration)
	}
	if v.OverloadedP95.Duration > 0 {
		r.OverloadedP95MS = ms(v.OverloadedP95.Duration)
	}
	if v.MaxErrors != nil {
		r.MaxErrors = v.MaxErrors.Value / 100
	}
	if v.MinRate != nil {
		r.MinRate = v.MinRate.Value / 100
	}
	r.TimeoutMS = ms(p.HTTP.Timeout.Duration)
	if terms, err := slo.Parse(p.SLO); err == nil { // a bad SLO is refused elsewhere (Terms)
		for _, t := range terms {
			if t.Metric == "delivered" && t.Scenario == "" && strings.HasPrefix(t.Op, ">") {
				r.MinDelivered = max(r.MinDelivered, t.Value/100) // the verdict minds the SLO's delivery too
			}
		}
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// maxWorkers is the open model's worker cap: load.max_workers, lowered to
// http.max_connections when that is set, since each worker holds one
// connection. Zero leaves the executor's default.
func maxWorkers(p *plan.Plan) int {
	w, c := p.Load.MaxWorkers, p.HTTP.MaxConnections
	if c > 0 && (w == 0 || c < w) {
		return c
	}
	return w
}

// longestWait is the longest one exchange of the plan may take: the HTTP
// timeout, or a websocket frame's ack timeout when that is longer. It bounds
// the drain after each step.
func longestWait(p *plan.Plan) time.Duration {
	d := p.HTTP.Timeout.Duration
	for i := range p.Scenarios {
		if ws := p.Scenarios[i].WebSocket; ws != nil {
			d = max(d, ws.AckTimeout.Duration)
		}
	}
	return d
}

// exchanger returns the plan's HTTP transport.
func exchanger(p *plan.Plan) transport.Exchanger {
	return httpx.New(httpx.Config{
		Timeout: p.HTTP.Timeout.Duration, HTTP2: p.HTTP.HTTP2, Insecure: p.HTTP.Insecure,
		FollowRedirects: p.HTTP.FollowRedirects, MaxConns: p.HTTP.MaxConnections,
		MaxBodyBytes: p.HTTP.MaxBodyBytes,
	})
}

// eventLoops returns the event loops (httpx.NewLoop) for the steps whose
// scenarios they can run (load.Runner.UsesLoop): load.loops of them, one
// per core by default (GOMAXPROCS), the first apart; or none: when the
// plan asks for HTTP/2 or redirects, which a loop does not speak; when the
// system has no epoll; on one processor when the plan has mock sinks,
// which answer the target from inside ceiling and would wait for the
// loop's goroutine to be preempted (delivery times up to 10 ms late); and
// when CEILING_LOOP=off, the developer's switch that bench/compare.sh uses
// to compare the two. With mock sinks (which run on ceiling's own cores)
// the loops leave a core to them.
func eventLoops(p *plan.Plan) (transport.Loop, []transport.Loop) {
	procs := runtime.GOMAXPROCS(0)
	if os.Getenv("CEILING_LOOP") == "off" || len(p.Sinks) > 0 && procs < 2 {
		return nil, nil
	}
	n := p.Load.Loops
	if v, err := strconv.Atoi(os.Getenv("CEILING_LOOPS")); n <= 0 && err == nil && v > 0 {
		n = v // the developer's switch: tests that run ceiling side by side in one process take one each
	}
	if n <= 0 {
		n = procs
		if len(p.Sinks) > 0 {
			n = procs - 1
		}
	}
	cfg := httpx.Config{
		Timeout: p.HTTP.Timeout.Duration, HTTP2: p.HTTP.HTTP2, FollowRedirects: p.HTTP.FollowRedirects,
		MaxBodyBytes: p.HTTP.MaxBodyBytes,
	}
	first, err := httpx.NewLoop(cfg)
	if err != nil {
		return nil, nil
	}
	var more []transport.Loop
	for range n - 1 {
		lp, err := httpx.NewLoop(cfg)
		if err != nil {
			break // fewer loops, each a larger share
		}
		more = append(more, lp)
	}
	return first, more
}

// frameLoop hands the plan's websocket frames to an event loop
// (wsx.NewLoop) where they fit one (scenario.Set.LoopFrames: the open
// model, every scenario acked frames over ws://, nothing of a user in
// them); else frames go over goroutines, as they do where the system has
// no epoll and with CEILING_LOOP=off (bench/ws.sh compares the two). The
// set closes the loop with its sockets, and its Frames is the engine.
func frameLoop(p *plan.Plan, set *scenario.Set) {
	if !hasWebSocket(p) || os.Getenv("CEILING_LOOP") == "off" {
		return
	}
	lp, err := wsx.NewLoop(wsx.New(p.HTTP.Insecure))
	if err != nil {
		return
	}
	if set.LoopFrames(lp) == nil {
		lp.Close()
	}
}

// loadConfig is the executor's configuration for the plan.
func loadConfig(p *plan.Plan, o *Options) load.Config {
	return load.Config{
		Timeout: longestWait(p), MaxWorkers: maxWorkers(p), Think: p.Load.Think.Duration,
		// CEILING_TIMER=go keeps Go's timers at every rate too: a
		// developer's switch for bench/timer.sh, which compares the two.
		PreciseTimer: !o.GoTimer && os.Getenv("CEILING_TIMER") != "go",
		Poisson:      p.Load.Arrival == plan.Poisson, Seed: uint64(p.Load.Seed),
		Grace: o.Grace, Segment: o.Segment, SecondHistograms: o.SecondHistograms || len(p.Events) > 0,
	}
}

// Terms parses the plan's SLO and refuses terms that cannot apply to its
// load model (rate compares with a target rate, which the closed model
// does not have): a threshold that cannot fail is not a threshold.
func Terms(p *plan.Plan) ([]slo.Term, error) {
	terms, err := slo.Parse(p.SLO)
	if err != nil {
		return nil, badInput("%s: slo: %w", where(p, "slo"), err)
	}
	if !p.Closed() {
		return terms, nil
	}
	for _, t := range terms {
		if slices.Contains(slo.OpenOnly, t.Metric) {
			return nil, badInput("%s: slo: %q compares the achieved rate with a target rate, and the closed model (virtual users) has none: use throughput>=N/s for a floor on responses per second", where(p, "slo"), t.Text)
		}
	}
	return terms, nil
}

// SearchFlags are find's own flags, as typed: the first and the highest
// level, and the precision. RateGiven says --rate was given (its first
// rate is then the start when --start is not).
type SearchFlags struct {
	Start, Max, Precision string
	RateGiven             bool
}

// Config builds the search for p from the flags. Errors name the flag.
func (f *SearchFlags) Config(p *plan.Plan) (search.Config, error) {
	cfg := search.Config{Integer: p.Load.Model == plan.Closed}
	var err error
	if cfg.Start, err = f.start(p, cfg.Integer); err != nil {
		return cfg, err
	}
	if f.Max != "" {
		v, err := parseLevel(f.Max)
		if err != nil {
			return cfg, badInput("--max: %w", err)
		}
		cfg.Max = v
	}
	pct, err := plan.ParsePercent(f.Precision)
	if err != nil || pct <= 0 || pct >= 100 {
		return cfg, badInput("--precision %q: want a percentage between 0 and 100 such as \"5%%\"", f.Precision)
	}
	cfg.Precision = pct / 100
	if cfg.Max > 0 && cfg.Max < cfg.Start {
		return cfg, badInput("--max %g is below --start %g", cfg.Max, cfg.Start)
	}
	if _, err := search.New(cfg); err != nil {
		return cfg, &failure.InputError{Err: err}
	}
	return cfg, nil
}

// start is the search's first level: --start, else the plan's first
// number of users, else its first rate when one was given (in the plan
// file, or with --rate).
func (f *SearchFlags) start(p *plan.Plan, users bool) (float64, error) {
	switch {
	case f.Start != "":
		v, err := parseLevel(f.Start)
		if err != nil {
			return 0, badInput("--start: %w", err)
		}
		return v, nil
	case users:
		return float64(p.Load.VUs[0]), nil
	case len(p.Load.Rates) > 0 && (f.RateGiven || p.File != ""):
		return p.Load.Rates[0], nil
	}
	return 0, badInput("find needs --start (the first rate to try)")
}

func parseLevel(s string) (float64, error) {
	rates, err := plan.ParseRates(s)
	if err != nil || len(rates) != 1 {
		return 0, fmt.Errorf("want one positive number, got %q", s)
	}
	return rates[0], nil
}
