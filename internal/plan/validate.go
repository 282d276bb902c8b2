package plan

import (
	"fmt"
	"maps"
	"math"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// MaxLoops is the most event loops a plan may ask for (load.loops).
const MaxLoops = 256

// Limits on load levels: past them a plan is far more likely a typo than a
// test one generator (or a fleet of them) could carry out.
const (
	// MaxRate is the highest rate a step may ask for, per second.
	MaxRate = 10_000_000
	// MaxVUs is the most virtual users a step may ask for.
	MaxVUs = 1_000_000
	// MinStep is the shortest counted step: its figures come from whole
	// exchanges and per-second points, and a step of nanoseconds measures
	// nothing but the generator's start.
	MinStep = 100 * time.Millisecond
)

// Defaults that Validate fills in.
const (
	// DefaultStep is the counted length of each step.
	DefaultStep = 60 * time.Second
	// DefaultWarmup runs before each step when the plan does not say.
	DefaultWarmup = 5 * time.Second
	// DefaultTimeout bounds one exchange.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBodyBytes caps a response body: 16 MiB.
	DefaultMaxBodyBytes = 16 << 20
	// DefaultHealthyP95 is the p95 below which a step can be HEALTHY.
	DefaultHealthyP95 = 100 * time.Millisecond
	// DefaultOverloadedP95 is the p95 above which a step is OVERLOADED.
	DefaultOverloadedP95 = 500 * time.Millisecond
	// DefaultMaxErrors is the error share, in percent, above which a step
	// is OVERLOADED.
	DefaultMaxErrors = 1.0
	// DefaultMinRate is the share of the target rate, in percent, below
	// which an open-model step is OVERLOADED.
	DefaultMinRate = 95.0
)

// Validate fills defaults and checks every value, returning Problems that
// lists everything wrong, or nil. Parse calls it; the cli calls it again on
// plans built or changed from command-line flags. Calling it twice is safe.
func (p *Plan) Validate() error {
	ps := p.check()
	if len(ps) == 0 {
		return nil
	}
	sortProblems(ps)
	return ps
}

// MaxRepeat bounds repeat: a run is repeated to estimate its noise, and a
// hundred repeats estimate it well.
const MaxRepeat = 100

// check fills defaults and returns the problems, unsorted.
func (p *Plan) check() Problems {
	c := &checker{p: p, env: map[string]bool{}}
	// Zero means "the default" only where the file did not write it: a
	// step or timeout written as 0 would silently become 60s or 10s.
	if p.has("load.step") && p.Load.Step.Duration == 0 {
		c.add("load.step", "want a positive duration such as \"60s\", not 0 (leave it out for the default, %v)", DefaultStep)
	}
	if p.has("http.timeout") && p.HTTP.Timeout.Duration == 0 {
		c.add("http.timeout", "want a positive duration such as \"10s\", not 0 (leave it out for the default, %v)", DefaultTimeout)
	}
	p.fillDefaults()
	c.data()
	c.scope = newScope(p)
	c.load()
	c.soak()
	c.ramp()
	c.http()
	c.target()
	c.vars()
	c.login()
	c.scenarios()
	c.statuses("limited", p.Limited)
	c.control()
	c.verdict()
	c.sinks()
	c.monitor()
	c.events()
	for i, o := range p.Outputs {
		if err := CheckOutput(o); err != nil {
			c.add(fmt.Sprintf("outputs[%d]", i), "%v", err)
		}
	}
	c.labels()
	if p.Repeat < 0 || p.Repeat > MaxRepeat {
		c.add("repeat", "want 1 to %d repeats (0 or left out: 1), not %d", MaxRepeat, p.Repeat)
	}
	if p.TagLimit < 0 {
		c.add("tag_limit", "want 0 (the default, %d) or more, not %d", DefaultTagLimit, p.TagLimit)
	}
	p.environment = slices.Sorted(maps.Keys(c.env))
	return c.problems
}

// has reports whether the plan file wrote the key at path.
func (p *Plan) has(path string) bool {
	_, ok := p.pos[path]
	return ok
}

// fillDefaults sets every absent value that has a default.
func (p *Plan) fillDefaults() {
	v := &p.Verdict
	if v.HealthyP95.Duration == 0 {
		v.HealthyP95.Duration = DefaultHealthyP95
	}
	if v.OverloadedP95.Duration == 0 {
		v.OverloadedP95.Duration = DefaultOverloadedP95
	}
	if v.MaxErrors == nil {
		v.MaxErrors = &Percent{DefaultMaxErrors}
	}
	if v.MinRate == nil {
		v.MinRate = &Percent{DefaultMinRate}
	}
	l := &p.Load
	if l.Model == "" {
		// A vus key that failed to decode still says which model was meant.
		l.Model = Open
		if len(l.VUs) > 0 || p.has("load.vus") {
			l.Model = Closed
		}
	}
	if l.Step.Duration == 0 {
		l.Step.Duration = DefaultStep
	}
	if l.Warmup == nil {
		l.Warmup = &Duration{DefaultWarmup}
	}
	if l.Arrival == "" {
		l.Arrival = Uniform
	}
	if k := l.Soak; k != nil {
		if k.Window.Duration == 0 && !p.has("load.soak.window") {
			k.Window.Duration = DefaultSoakWindow
		}
		if k.Horizon.Duration == 0 && !p.has("load.soak.horizon") && k.For.Duration > 0 {
			k.Horizon.Duration = DefaultHorizonTimes * k.For.Duration
		}
	}
	if p.HTTP.Timeout.Duration == 0 {
		p.HTTP.Timeout.Duration = DefaultTimeout
	}
	if p.HTTP.MaxBodyBytes == 0 {
		p.HTTP.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if p.Limited == nil {
		p.Limited = []int{429}
	}
	p.fillRequestDefaults()
	p.fillSinks()
}

// checker collects the problems of one plan.
type checker struct {
	p         *Plan
	env       map[string]bool // the environment variables templates read with env
	scope     *scope          // the names templates may read
	problems  Problems
	once      map[Problem]bool // the problems added by addOnce
	badTarget bool             // target has a problem, so relative URLs are not checked
}

// add records a problem at path.
func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, c.p.problem(path, format, args...))
}

// load checks the model, its levels and the step timings.
func (c *checker) load() {
	l := &c.p.Load
	rates, vus := len(l.Rates) > 0, len(l.VUs) > 0
	switch l.Model {
	case Open:
		if vus {
			c.add("load.vus", "the open model takes rates or a ramp, not vus (or set model: closed)")
		}
		switch {
		case rates && l.Ramp != nil:
			c.add("load.ramp", "give rates or a ramp, not both")
		case !rates && l.Ramp == nil:
			c.add("load.rates", "the open model needs rates (e.g. [50, 100]) or a ramp")
		}
	case Closed:
		if !vus {
			c.add("load.vus", "the closed model needs vus (e.g. [10, 50])")
		}
		if rates {
			c.add("load.rates", "the closed model takes vus, not rates (or set model: open)")
		}
		if l.Ramp != nil {
			c.add("load.ramp", "the closed model takes vus, not a ramp (or set model: open)")
		}
	default:
		c.add("load.model", "want %q or %q, not %q", Open, Closed, l.Model)
	}
	for i, r := range l.Rates {
		if msg := rateProblem(r); msg != "" {
			c.add(fmt.Sprintf("load.rates[%d]", i), "%s", msg)
		}
	}
	for i, n := range l.VUs {
		if msg := vuProblem(n); msg != "" {
			c.add(fmt.Sprintf("load.vus[%d]", i), "%s", msg)
		}
	}
	c.timings()
	if l.Loops < 0 || l.Loops > MaxLoops {
		c.add("load.loops", "want 0 (one per core) to %d, not %d", MaxLoops, l.Loops)
	}
	if l.MaxWorkers < 0 {
		c.add("load.max_workers", "want 0 (automatic) or more, not %d", l.MaxWorkers)
	}
}

// timings checks step, warmup, think and arrival.
func (c *checker) timings() {
	l := &c.p.Load
	if l.Step.Duration < 0 {
		c.add("load.step", "want a positive duration such as \"60s\", not %s", l.Step)
	} else if l.Step.Duration > 0 && l.Step.Duration < MinStep {
		c.add("load.step", "want at least %v, such as \"60s\", not %s: a shorter step measures nothing but the generator's start", MinStep, l.Step)
	}
	if l.Warmup.Duration < 0 {
		c.add("load.warmup", "want a non-negative duration such as \"5s\", not %s", l.Warmup)
	}
	switch {
	case l.Think.Duration < 0:
		c.add("load.think", "want a non-negative duration such as \"1s\", not %s", l.Think)
	case l.Think.Duration > 0 && l.Model == Open:
		c.add("load.think", "think applies to the closed model only")
	}
	switch l.Arrival {
	case Uniform:
	case Poisson:
		if l.Model == Closed {
			c.add("load.arrival", "arrival applies to the open model only")
		}
	default:
		c.add("load.arrival", "want %q or %q, not %q", Uniform, Poisson, l.Arrival)
	}
}

// ramp checks a linear ramp's ends and length.
func (c *checker) ramp() {
	r := c.p.Load.Ramp
	if r == nil {
		return
	}
	if math.IsNaN(r.From) || r.From < 0 || r.From > MaxRate {
		c.add("load.ramp.from", "want a rate from 0 to %d per second, not %v", MaxRate, r.From)
	}
	if msg := rateProblem(r.To); msg != "" {
		c.add("load.ramp.to", "%s", msg)
	}
	if r.Over.Duration <= 0 {
		c.add("load.ramp.over", "want a positive duration such as \"60s\", not %s", r.Over)
	}
}

// verdict checks the thresholds of the step verdicts: positive p95s in
// order, so that STRESSED lies between HEALTHY and OVERLOADED, and shares
// from 0 % to 100 % (Percent's UnmarshalYAML refuses others in a file; a
// plan built in Go is checked here).
func (c *checker) verdict() {
	v := &c.p.Verdict
	healthy, overloaded := v.HealthyP95.Duration, v.OverloadedP95.Duration
	if healthy < 0 {
		c.add("verdict.healthy_p95", "want a positive duration such as \"100ms\", not %s", v.HealthyP95)
	}
	if overloaded < 0 {
		c.add("verdict.overloaded_p95", "want a positive duration such as \"500ms\", not %s", v.OverloadedP95)
	}
	if healthy >= 0 && overloaded >= 0 && healthy > overloaded {
		// Place it on the key that was written: the other one is a default.
		path := "verdict.overloaded_p95"
		if !c.p.has(path) && c.p.has("verdict.healthy_p95") {
			path = "verdict.healthy_p95"
		}
		c.add(path, "healthy_p95 (%s) is above overloaded_p95 (%s): want healthy_p95 ≤ overloaded_p95", v.HealthyP95, v.OverloadedP95)
	}
	for _, s := range []struct {
		path  string
		share *Percent
	}{{"verdict.max_errors", v.MaxErrors}, {"verdict.min_rate", v.MinRate}} {
		if s.share != nil && !(s.share.Value >= 0 && s.share.Value <= 100) {
			c.add(s.path, "want a percentage from 0%% to 100%%, not %v%%", s.share.Value)
		}
	}
}

// rateProblem says what is wrong with a rate, or "".
func rateProblem(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return fmt.Sprintf("want a finite rate per second, not %v", r)
	case r <= 0:
		return fmt.Sprintf("want a positive rate per second, not %v", r)
	case r > MaxRate:
		return fmt.Sprintf("want at most %d per second, not %v", MaxRate, r)
	}
	return ""
}

// vuProblem says what is wrong with a number of virtual users, or "".
func vuProblem(n int) string {
	switch {
	case n < 1:
		return fmt.Sprintf("want at least 1 virtual user, not %d", n)
	case n > MaxVUs:
		return fmt.Sprintf("want at most %d virtual users, not %d", MaxVUs, n)
	}
	return ""
}

// http checks the transport settings.
func (c *checker) http() {
	h := &c.p.HTTP
	if h.Timeout.Duration < 0 {
		c.add("http.timeout", "want a positive duration such as \"10s\", not %s", h.Timeout)
	}
	if h.MaxConnections < 0 {
		c.add("http.max_connections", "want 0 (one per worker) or more, not %d", h.MaxConnections)
	}
	if h.MaxConnections > 0 && c.p.Load.Model == Closed {
		if most := slices.Max(append([]int{0}, c.p.Load.VUs...)); most > h.MaxConnections {
			c.add("http.max_connections", "each virtual user holds its own connection: %d is below the %d users of the largest step", h.MaxConnections, most)
		}
	}
	if h.MaxBodyBytes < 0 {
		c.add("http.max_body_bytes", "want 0 (16 MiB) or more, not %d", h.MaxBodyBytes)
	}
	// Sent with every request, the login's first one included: only the
	// vars that need no login, and no extracted name, have values then.
	c.scope.early = len(c.p.Login) > 0
	c.scope.within(nil, func() { c.headers("http.headers", h.Headers, true) })
	c.scope.early = false
}

// headers checks header names and values, and that no two names differ only
// in case (which one is sent would be a coin toss). Templated values are
// checked as templates.
func (c *checker) headers(path string, hs map[string]string, templated bool) {
	seen := make(map[string]string, len(hs))
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		p := path + "." + name
		if msg := headerNameProblem(name); msg != "" {
			c.add(p, "%s", msg)
			continue
		}
		if msg := headerValueProblem(hs[name]); msg != "" {
			c.add(p, "%s", msg)
		} else if templated {
			c.template(p, hs[name], false)
		}
		canon := textproto.CanonicalMIMEHeaderKey(name)
		if other, dup := seen[canon]; dup {
			c.add(p, "same header as %q (names are case-insensitive)", other)
		}
		seen[canon] = name
	}
}

// statuses checks a list of HTTP statuses.
func (c *checker) statuses(path string, ss []int) {
	for i, s := range ss {
		if s < 100 || s > 599 {
			c.add(fmt.Sprintf("%s[%d]", path, i), "want an HTTP status from 100 to 599, not %d", s)
		}
	}
}

// secretless drops the user information and the query of a URL (either
// may hold a token) for messages.
func secretless(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	return u.String()
}

// labelName is a Prometheus label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// reservedLabels are the labels live outputs write themselves, or that
// Prometheus keeps for its own.
var reservedLabels = []string{"run_id", "step", "scenario", "outcome", "quantile", "state", "job", "instance", "le"}

// labels checks that each label is a tag key of some scenario and a label
// name Prometheus takes, and not one of ceiling's own.
func (c *checker) labels() {
	for i, l := range c.p.Labels {
		where := fmt.Sprintf("labels[%d]", i)
		tagged := slices.ContainsFunc(c.p.Scenarios, func(sc Scenario) bool { _, ok := sc.Tags[l]; return ok })
		switch {
		case !labelName.MatchString(l) || strings.HasPrefix(l, "__"):
			c.add(where, "%q is not a label name: letters, digits and _, not starting with a digit or __", l)
		case slices.Contains(reservedLabels, l):
			c.add(where, "%q is a label ceiling writes itself (%s); rename the tag", l, strings.Join(reservedLabels, ", "))
		case !tagged:
			c.add(where, "%q is not a tag of any scenario (tags: {%s: ...})", l, l)
		case slices.Index(c.p.Labels, l) < i:
			c.add(where, "%q is listed twice", l)
		}
	}
}
