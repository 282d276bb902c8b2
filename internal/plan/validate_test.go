package plan

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// flagPlan is a valid plan as the cli builds it from quick flags.
func flagPlan() *Plan {
	return &Plan{
		Target:    "http://127.0.0.1:3000",
		Load:      Load{Rates: []float64{50, 100}},
		Scenarios: []Scenario{{Request: Request{URL: "/api"}}},
	}
}

// validateCases change a valid plan from flags and list the problems that
// Validate must report, in order.
var validateCases = []struct {
	name   string
	change func(p *Plan)
	want   []string
}{
	{"valid", func(p *Plan) {}, nil},
	{"templated url", func(p *Plan) { p.Scenarios[0].Request.URL = "/api/{{ .vu }}?id={{uuid}}" }, nil},
	{"closed", func(p *Plan) { p.Load = Load{VUs: []int{1, MaxVUs}, Think: dur(time.Second)} }, nil},
	{"closed within max_connections", func(p *Plan) { p.Load = Load{VUs: []int{5, 10}}; p.HTTP.MaxConnections = 10 }, nil},
	{"closed past max_connections", func(p *Plan) { p.Load = Load{VUs: []int{5, 50}}; p.HTTP.MaxConnections = 10 }, []string{
		`http.max_connections: each virtual user holds its own connection: 10 is below the 50 users of the largest step`,
	}},
	{"unknown model", func(p *Plan) { p.Load.Model = "half-open" }, []string{
		`load.model: want "open" or "closed", not "half-open"`,
	}},
	{"open with vus", func(p *Plan) { p.Load.Model, p.Load.VUs = Open, []int{10} }, []string{
		`load.vus: the open model takes rates or a ramp, not vus (or set model: closed)`,
	}},
	{"rates and ramp", func(p *Plan) { p.Load.Ramp = &Ramp{To: 10, Over: dur(time.Second)} }, []string{
		`load.ramp: give rates or a ramp, not both`,
	}},
	{"no levels", func(p *Plan) { p.Load.Rates = nil }, []string{
		`load.rates: the open model needs rates (e.g. [50, 100]) or a ramp`,
	}},
	{"closed without vus", func(p *Plan) { p.Load.Model, p.Load.Rates = Closed, nil }, []string{
		`load.vus: the closed model needs vus (e.g. [10, 50])`,
	}},
	{"closed with rates and ramp", func(p *Plan) {
		p.Load = Load{VUs: []int{1}, Rates: []float64{1}, Ramp: &Ramp{To: 1, Over: dur(time.Second)}}
	}, []string{
		`load.rates: the closed model takes vus, not rates (or set model: open)`,
		`load.ramp: the closed model takes vus, not a ramp (or set model: open)`,
	}},
	{"bad rates", func(p *Plan) { p.Load.Rates = []float64{0, -1, math.NaN(), math.Inf(1), MaxRate + 1, MaxRate} }, []string{
		`load.rates[0]: want a positive rate per second, not 0`,
		`load.rates[1]: want a positive rate per second, not -1`,
		`load.rates[2]: want a finite rate per second, not NaN`,
		`load.rates[3]: want a finite rate per second, not +Inf`,
		`load.rates[4]: want at most 10000000 per second, not 1.0000001e+07`,
	}},
	{"bad vus", func(p *Plan) { p.Load = Load{VUs: []int{0, MaxVUs + 1}} }, []string{
		`load.vus[0]: want at least 1 virtual user, not 0`,
		`load.vus[1]: want at most 1000000 virtual users, not 1000001`,
	}},
	{"bad ramp", func(p *Plan) { p.Load = Load{Ramp: &Ramp{From: -1, To: 0, Over: dur(0)}} }, []string{
		`load.ramp.from: want a rate from 0 to 10000000 per second, not -1`,
		`load.ramp.to: want a positive rate per second, not 0`,
		`load.ramp.over: want a positive duration such as "60s", not 0s`,
	}},
	{"negative timings", func(p *Plan) {
		p.Load.Step, p.Load.Warmup, p.HTTP.Timeout = dur(-time.Second), durp(-time.Second), dur(-time.Second)
	}, []string{
		`load.step: want a positive duration such as "60s", not -1s`,
		`load.warmup: want a non-negative duration such as "5s", not -1s`,
		`http.timeout: want a positive duration such as "10s", not -1s`,
	}},
	{"think with open", func(p *Plan) { p.Load.Think = dur(time.Second) }, []string{
		`load.think: think applies to the closed model only`,
	}},
	{"negative think", func(p *Plan) { p.Load = Load{VUs: []int{1}, Think: dur(-time.Second)} }, []string{
		`load.think: want a non-negative duration such as "1s", not -1s`,
	}},
	{"bad arrival", func(p *Plan) { p.Load.Arrival = "bursty" }, []string{
		`load.arrival: want "uniform" or "poisson", not "bursty"`,
	}},
	{"poisson with closed", func(p *Plan) { p.Load = Load{VUs: []int{1}, Arrival: Poisson} }, []string{
		`load.arrival: arrival applies to the open model only`,
	}},
	{"negative caps", func(p *Plan) { p.Load.MaxWorkers, p.HTTP.MaxConnections, p.HTTP.MaxBodyBytes = -1, -2, -3 }, []string{
		`load.max_workers: want 0 (automatic) or more, not -1`,
		`http.max_connections: want 0 (one per worker) or more, not -2`,
		`http.max_body_bytes: want 0 (16 MiB) or more, not -3`,
	}},
	{"target without scheme", func(p *Plan) { p.Target = "localhost:3000" }, []string{
		`target: want an http:// or https:// URL, such as "http://localhost:3000", not "localhost:3000"`,
	}},
	{"ftp target", func(p *Plan) { p.Target = "ftp://h" }, []string{
		`target: want an http:// or https:// URL, not "ftp://h"`,
	}},
	{"target without host", func(p *Plan) { p.Target = "http:///x" }, []string{
		`target: want a URL with a host, such as http://127.0.0.1:3000, not "http:///x"`,
	}},
	{"target with query", func(p *Plan) { p.Target = "http://h/?k=1" }, []string{
		`target: want a base URL without ?query or #fragment, not "http://h/?k=1"`,
	}},
	{"target not a URL", func(p *Plan) { p.Target = "http://[::1" }, []string{
		`target: want a valid URL, not "http://[::1": missing ']' in host`,
	}},
	{"no scenarios", func(p *Plan) { p.Scenarios = nil }, []string{
		`scenarios: want at least one scenario, e.g. [{request: {url: /}}]`,
	}},
	{"two scenarios", func(p *Plan) {
		p.Scenarios = append(p.Scenarios, Scenario{Weight: 3, Request: Request{Method: "POST", URL: "/api"}})
	}, nil},
	{"two scenarios of the same name", func(p *Plan) { p.Scenarios = append(p.Scenarios, p.Scenarios[0]) }, []string{
		`scenarios[1].name: scenario name "GET /api" is already used by scenarios[0]: names must be unique; give one a name`,
	}},
	{"bad request", func(p *Plan) {
		p.Scenarios[0] = Scenario{Weight: -1, Request: Request{Method: "G3T"}, Expect: Expect{Status: []int{99, 200, 600}}}
	}, []string{
		`scenarios[0].weight: want a positive, finite weight such as 30, not -1`,
		`scenarios[0].request.method: want a method made of letters, such as GET or POST, not "G3T"`,
		`scenarios[0].request.url: required: an absolute URL, or a path relative to target`,
		`scenarios[0].expect.status[0]: want an HTTP status from 100 to 599, not 99`,
		`scenarios[0].expect.status[2]: want an HTTP status from 100 to 599, not 600`,
	}},
	{"relative url without target", func(p *Plan) { p.Target = "" }, []string{
		`scenarios[0].request.url: "/api" is relative: set target (e.g. http://127.0.0.1:3000) or give an absolute URL`,
	}},
	{"websocket url", func(p *Plan) { p.Scenarios[0].Request.URL = "ws://h/widget" }, []string{
		`scenarios[0].request.url: want an http:// or https:// URL, not "ws://h/widget"`,
	}},
	{"bad headers", func(p *Plan) {
		p.HTTP.Headers = map[string]string{"": "x", "A B": "x", "A:B": "x", "X-Ok": "a\r\nB: c", "x-dup": "1", "X-Dup": "2"}
	}, []string{
		`http.headers.: want a header name`,
		`http.headers.A B: header name "A B" must not contain spaces, colons or control characters`,
		`http.headers.A:B: header name "A:B" must not contain spaces, colons or control characters`,
		`http.headers.X-Ok: a header value must not contain line breaks or NUL`,
		`http.headers.x-dup: same header as "X-Dup" (names are case-insensitive)`,
	}},
	{"control", func(p *Plan) { p.Scenarios[0].Name = "home"; p.Control = "home" }, nil},
	{"control names no scenario", func(p *Plan) { p.Control = "static" }, []string{
		`control: "static" names no scenario (scenarios: "GET /api")`,
	}},
	{"bad limited", func(p *Plan) { p.Limited = []int{429, 1000} }, []string{
		`limited[1]: want an HTTP status from 100 to 599, not 1000`,
	}},
	{"verdict and strict", func(p *Plan) {
		p.Verdict = Verdict{HealthyP95: dur(time.Second), OverloadedP95: dur(time.Second), MaxErrors: &Percent{0}, MinRate: &Percent{100}}
		p.Strict = boolp(true)
	}, nil},
	{"negative p95s", func(p *Plan) {
		p.Verdict.HealthyP95, p.Verdict.OverloadedP95 = dur(-time.Second), dur(-time.Millisecond)
	}, []string{
		`verdict.healthy_p95: want a positive duration such as "100ms", not -1s`,
		`verdict.overloaded_p95: want a positive duration such as "500ms", not -1ms`,
	}},
	{"healthy above overloaded", func(p *Plan) { p.Verdict.OverloadedP95 = dur(50 * time.Millisecond) }, []string{
		`verdict.overloaded_p95: healthy_p95 (100ms) is above overloaded_p95 (50ms): want healthy_p95 ≤ overloaded_p95`,
	}},
	{"shares out of range", func(p *Plan) { p.Verdict.MaxErrors, p.Verdict.MinRate = &Percent{-1}, &Percent{math.NaN()} }, []string{
		`verdict.max_errors: want a percentage from 0% to 100%, not -1%`,
		`verdict.min_rate: want a percentage from 0% to 100%, not NaN%`,
	}},
	{"share above 100%", func(p *Plan) { p.Verdict.MinRate = &Percent{100.5} }, []string{
		`verdict.min_rate: want a percentage from 0% to 100%, not 100.5%`,
	}},
	{"soak", func(p *Plan) { p.Load.Rates, p.Load.Soak = []float64{50}, &Soak{For: dur(8 * time.Hour)} }, nil},
	{"soak of users", func(p *Plan) {
		p.Load = Load{VUs: []int{20}, Soak: &Soak{For: dur(time.Hour), Window: dur(time.Second)}}
	}, nil},
	{"soak without a length", func(p *Plan) { p.Load.Rates, p.Load.Soak = []float64{50}, &Soak{} }, []string{
		`load.soak.for: want how long to hold the load, a positive duration such as "8h", not 0s`,
	}},
	{"soak of stairs", func(p *Plan) {
		p.Load.Soak, p.Load.Each, p.Repeat = &Soak{For: dur(time.Hour), Window: dur(2 * time.Hour), Horizon: dur(time.Minute), MemoryLimitMB: -1}, true, 2
	}, []string{
		`load.soak.window: want at most the soak's length (1h0m0s), not 2h0m0s: a soak is judged on its windows`,
		`load.soak.horizon: want at least the soak's length (1h0m0s), not 1m0s (leave it out for 3 times its length)`,
		`load.soak.memory_limit_mb: want the target's memory limit in MiB, or 0 for its cgroup's, not -1`,
		`load.rates: a soak holds one level: give one rate (rates: [500]), not 2`,
		`load.each: a soak holds the weighted mix: each runs stairs, not a soak`,
		`repeat: a soak runs once: its windows are its repeats`,
	}},
}

func TestValidate(t *testing.T) {
	for _, tt := range validateCases {
		t.Run(tt.name, func(t *testing.T) {
			p := flagPlan()
			tt.change(p)
			err := p.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if diff := cmp.Diff(tt.want, problemsOf(t, err)); diff != "" {
				t.Errorf("Validate() problems mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A soak's windows default to a minute and its horizon to three times
// its length; it is one step, of the soak's length.
func TestValidateSoakDefaults(t *testing.T) {
	p := flagPlan()
	p.Load.Rates, p.Load.Soak = []float64{50}, &Soak{For: dur(8 * time.Hour)}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Soak{For: dur(8 * time.Hour), Window: dur(time.Minute), Horizon: dur(24 * time.Hour)}
	if *p.Load.Soak != want || p.Steps() != 1 || p.Duration() != 8*time.Hour+DefaultWarmup {
		t.Errorf("soak = %+v, %d steps, %v; want %+v, 1 step, 8h5s", *p.Load.Soak, p.Steps(), p.Duration(), want)
	}
	if got, want := p.Describe(), "a soak at 50/s for 8h0m0s in windows of 1m0s (drifts projected to 24h0m0s), about 8h0m5s in all"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

func TestValidateFillsDefaults(t *testing.T) {
	p := flagPlan()
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
	want := &Plan{
		Target: "http://127.0.0.1:3000",
		Load: Load{
			Model: Open, Rates: []float64{50, 100}, Step: dur(DefaultStep),
			Warmup: durp(DefaultWarmup), Arrival: Uniform,
		},
		HTTP:      HTTP{Timeout: dur(DefaultTimeout), MaxBodyBytes: DefaultMaxBodyBytes},
		Scenarios: []Scenario{{Name: "GET /api", Weight: 1, Request: Request{Method: "GET", URL: "/api"}}},
		TagLimit:  DefaultTagLimit,
		Limited:   []int{429},
		Verdict:   defaultVerdict(),
	}
	if diff := cmp.Diff(want, p, ignorePos); diff != "" {
		t.Errorf("Validate() defaults mismatch (-want +got):\n%s", diff)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("second Validate() = %v, want nil", err)
	}
	if diff := cmp.Diff(want, p, ignorePos); diff != "" {
		t.Errorf("second Validate() changed the plan (-want +got):\n%s", diff)
	}
}
