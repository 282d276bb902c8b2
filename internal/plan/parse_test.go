package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignorePos compares plans without their positions.
var ignorePos = cmpopts.IgnoreUnexported(Plan{})

const fullPlan = `name: widget-stairs
target: http://127.0.0.1:3000/
load:
  model: open
  rates: [50, 100, 200.5]
  step: 30s
  warmup: 2s
  arrival: poisson
  max_workers: 500
  seed: 7
http:
  timeout: 2s
  http2: true
  insecure: true
  follow_redirects: true
  headers: {User-Agent: ceiling, X-Env: staging}
  max_connections: 100
  max_body_bytes: 1024
scenarios:
  - name: notifications.list
    weight: 36
    request:
      method: POST
      url: /api/notifications?page=1
      headers:
        Authorization: Bearer token
      body: |
        {"a": 1}
    expect: {status: [200, 202]}
limited: [429, 503]
slo: "p99<200ms, errors<1%"
`

func dur(d time.Duration) Duration { return Duration{d} }

func durp(d time.Duration) *Duration { return &Duration{d} }

func TestParseFull(t *testing.T) {
	got, err := Parse("full.yaml", []byte(fullPlan))
	if err != nil {
		t.Fatalf("Parse(full) = %v, want no error", err)
	}
	want := &Plan{
		File:   "full.yaml",
		Name:   "widget-stairs",
		Target: "http://127.0.0.1:3000/",
		Load: Load{
			Model: Open, Rates: []float64{50, 100, 200.5},
			Step: dur(30 * time.Second), Warmup: durp(2 * time.Second),
			Arrival: Poisson, MaxWorkers: 500, Seed: 7,
		},
		HTTP: HTTP{
			Timeout: dur(2 * time.Second), HTTP2: true, Insecure: true, FollowRedirects: true,
			Headers:        map[string]string{"User-Agent": "ceiling", "X-Env": "staging"},
			MaxConnections: 100, MaxBodyBytes: 1024,
		},
		Scenarios: []Scenario{{
			Name: "notifications.list", Weight: 36,
			Request: Request{
				Method: "POST", URL: "/api/notifications?page=1",
				Headers: map[string]string{"Authorization": "Bearer token"},
				Body:    "{\"a\": 1}\n",
			},
			Expect: Expect{Status: []int{200, 202}},
		}},
		TagLimit: DefaultTagLimit,
		Limited:  []int{429, 503},
		SLO:      "p99<200ms, errors<1%",
		Verdict:  defaultVerdict(),
	}
	if diff := cmp.Diff(want, got, ignorePos); diff != "" {
		t.Errorf("Parse(full) mismatch (-want +got):\n%s", diff)
	}
}

// minimal is the smallest valid open plan; cases add to it.
const minimal = "target: http://h:3000\nscenarios: [{request: {url: /x}}]\n"

// defaults is minimal after Validate, with rates [10].
func defaults() *Plan {
	return &Plan{
		File:   "p.yaml",
		Target: "http://h:3000",
		Load: Load{
			Model: Open, Rates: []float64{10}, Step: dur(DefaultStep),
			Warmup: durp(DefaultWarmup), Arrival: Uniform,
		},
		HTTP:      HTTP{Timeout: dur(DefaultTimeout), MaxBodyBytes: DefaultMaxBodyBytes},
		Scenarios: []Scenario{{Name: "GET /x", Weight: 1, Request: Request{Method: "GET", URL: "/x"}}},
		TagLimit:  DefaultTagLimit,
		Limited:   []int{429},
		Verdict:   defaultVerdict(),
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want func(p *Plan)
	}{
		{"open from rates", minimal + "load: {rates: [10]}\n", func(p *Plan) {}},
		{"closed from vus", minimal + "load: {vus: [5, 10]}\n", func(p *Plan) {
			p.Load.Model, p.Load.Rates, p.Load.VUs = Closed, nil, []int{5, 10}
		}},
		{"explicit zero warmup kept", minimal + "load: {rates: [10], warmup: 0s}\n", func(p *Plan) {
			p.Load.Warmup = durp(0)
		}},
		{"null warmup is absent", minimal + "load: {rates: [10], warmup: null}\n", func(p *Plan) {}},
		{"empty limited kept", minimal + "load: {rates: [10]}\nlimited: []\n", func(p *Plan) {
			p.Limited = []int{}
		}},
		{"ramp", minimal + "load: {ramp: {from: 0, to: 100, over: 2m}}\n", func(p *Plan) {
			p.Load.Rates, p.Load.Ramp = nil, &Ramp{To: 100, Over: dur(2 * time.Minute)}
		}},
		{
			"name from method and absolute url",
			"load: {rates: [10]}\nscenarios: [{request: {method: PUT, url: 'https://h/a/b?c=1'}}]\n",
			func(p *Plan) {
				p.Target = ""
				p.Scenarios[0].Request = Request{Method: "PUT", URL: "https://h/a/b?c=1"}
				p.Scenarios[0].Name = "PUT /a/b"
			},
		},
		{"number kept as written in a string", minimal + "load: {rates: [10]}\nhttp: {headers: {X-V: 010}}\n", func(p *Plan) {
			p.HTTP.Headers = map[string]string{"X-V": "010"}
		}},
		{
			"merge key and alias",
			"target: http://h:3000\nload: {rates: [10]}\nscenarios:\n  - request:\n      <<: {url: /y, method: POST}\n      url: /x\n" +
				"    expect: {status: &ok [200]}\nlimited: *ok\n",
			func(p *Plan) {
				p.Scenarios[0] = Scenario{
					Name: "POST /x", Weight: 1, Request: Request{Method: "POST", URL: "/x"},
					Expect: Expect{Status: []int{200}},
				}
				p.Limited = []int{200}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("p.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tt.yaml, err)
			}
			want := defaults()
			tt.want(want)
			if diff := cmp.Diff(want, got, ignorePos); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}

// problemsOf returns err's problems as strings, failing if err is not Problems.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v (%T) is not Problems", err, err)
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Error()
	}
	return out
}

const brokenPlan = `name: broken
target: http://127.0.0.1:3000
bogus: 1
load:
  rates: [50, -100, 200]
  rats: [1]
  step: 60
  warmup: soon
  arrival: burst
http:
  timeout: 10s
  headers:
    User-Agent: ceiling
scenarios:
  - request:
      url: /api
      mehtod: GET
`

func TestParseReportsEveryProblem(t *testing.T) {
	p, err := Parse("plan.yaml", []byte(brokenPlan))
	if p != nil {
		t.Errorf("Parse(broken) = %+v, want nil plan", p)
	}
	got := problemsOf(t, err)
	want := []string{
		`plan.yaml:3:1: bogus: unknown key "bogus" (known keys: name, target, load, http, data, vars, login, scenarios, tag_limit, limited, slo, repeat, control, verdict, sinks, monitor, events, outputs, labels, strict)`,
		`plan.yaml:5:15: load.rates[1]: want a positive rate per second, not -100`,
		`plan.yaml:6:3: load.rats: unknown key "rats" (did you mean "rates"?)`,
		`plan.yaml:7:9: load.step: want a duration such as "60s"`,
		`plan.yaml:8:11: load.warmup: want a duration such as "60s"`,
		`plan.yaml:9:12: load.arrival: want "uniform" or "poisson", not "burst"`,
		`plan.yaml:17:7: scenarios[0].request.mehtod: unknown key "mehtod" (did you mean "method"?)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(broken) problems mismatch (-want +got):\n%s", diff)
	}
	if err.Error() != strings.Join(want, "\n") {
		t.Errorf("Parse(broken).Error() = %q, want the problems joined by newlines", err.Error())
	}
	var ps Problems
	errors.As(err, &ps)
	wantFirst := Problem{File: "plan.yaml", Line: 3, Col: 1, Path: "bogus", Msg: ps[0].Msg}
	if ps[0] != wantFirst {
		t.Errorf("Parse(broken)[0] = %+v, want %+v", ps[0], wantFirst)
	}
}

// base is a valid plan without load, to which problem cases add.
const base = "target: http://h\nscenarios: [{request: {url: /}}]\n"

// parseProblemCases are plans with the exact problems Parse must report.
var parseProblemCases = []struct {
	name string
	yaml string
	want []string
}{
	{"string for a list", base + "load:\n  rates: fast\n", []string{
		`p.yaml:4:10: load.rates: want a list such as [1, 2], not the string "fast"`,
	}},
	{"fraction of a user", base + "load: {vus: [1.5, x]}\n", []string{
		`p.yaml:3:14: load.vus[0]: want a whole number, not the number 1.5`,
		`p.yaml:3:19: load.vus[1]: want a whole number, not the string "x"`,
	}},
	{"bare number for a duration", base + "load: {rates: [1], step: 60}\n", []string{
		`p.yaml:3:26: load.step: want a duration such as "60s"`,
	}},
	{"negative duration", base + "load: {rates: [1], warmup: -1s}\n", []string{
		`p.yaml:3:28: load.warmup: want a non-negative duration such as "5s", not -1s`,
	}},
	{"yes is not a bool", base + "load: {rates: [1]}\nhttp: {http2: yes}\n", []string{
		`p.yaml:4:15: http.http2: want true or false, not the string "yes"`,
	}},
	{"overflow", base + "load: {rates: [1], seed: 99999999999999999999}\n", []string{
		`p.yaml:3:26: load.seed: want a whole number, not 99999999999999999999 (out of range)`,
	}},
	{"list for a mapping", base + "load: {rates: [1]}\nhttp: {headers: [a]}\n", []string{
		`p.yaml:4:17: http.headers: want a mapping of names to values, not a list`,
	}},
	{"scalar for a struct", "target: http://h\nscenarios: [{request: /x}]\nload: {rates: [1]}\n", []string{
		`p.yaml:2:23: scenarios[0].request: want a mapping of keys such as method, url, headers, not the string "/x"`,
	}},
	{"control names no scenario", base + "load: {rates: [1]}\ncontrol: home\n", []string{
		`p.yaml:4:10: control: "home" names no scenario (scenarios: "GET /")`,
	}},
	{"bad label", base + "load: {rates: [1]}\nlabels: [tier, step]\n", []string{
		`p.yaml:4:10: labels[0]: "tier" is not a tag of any scenario (tags: {tier: ...})`,
		`p.yaml:4:16: labels[1]: "step" is a label ceiling writes itself (run_id, step, scenario, outcome, quantile, state, job, instance, le); rename the tag`,
	}},
	{"bad output", base + "load: {rates: [1]}\noutputs: [graphite=x]\n", []string{
		`p.yaml:4:11: outputs[0]: unknown output "graphite" in "graphite=x": want prometheus=URL or json=FILE`,
	}},
	{"syntax error", "load: [1, 2\n", []string{
		`p.yaml:1:7: sequence end token ']' not found`,
	}},
	{"two documents", base + "---\nload: {}\n", []string{
		`p.yaml:4:1: want one YAML document, found a second one (after ---)`,
	}},
	{"not a mapping", "- 1\n", []string{
		`p.yaml:1:1: want a mapping of keys such as name, target, load, not a list`,
	}},
	{"empty", "# nothing\n", []string{
		`p.yaml: the plan is empty: want keys such as target, load and scenarios`,
	}},
	{"unknown alias", base + "load: {rates: *r}\n", []string{
		`p.yaml:3:15: load.rates: unknown alias "r" (an alias must follow its complete anchor)`,
	}},
	{"alias inside its own anchor", base + "load: &l {rates: [1], step: *l}\n", []string{
		`p.yaml:3:29: load.step: unknown alias "l" (an alias must follow its complete anchor)`,
	}},
	{"rates and vus", base + "load: {rates: [1], vus: [2]}\n", []string{
		`p.yaml:3:8: load.rates: the closed model takes vus, not rates (or set model: open)`,
	}},
	{"relative url without target", "scenarios: [{request: {url: /x}}]\nload: {rates: [1]}\n", []string{
		`p.yaml:1:29: scenarios[0].request.url: "/x" is relative: set target (e.g. http://127.0.0.1:3000) or give an absolute URL`,
	}},
	{"loose tag", base + "load: {rates: [1]}\nhttp: {http2: !!bool yes}\n", []string{
		`p.yaml:4:15: http.http2: YAML tag !!bool is not supported here (only !!str, !!map and !!seq)`,
	}},
	{"byte order mark and CRLF", "\xef\xbb\xbftarget: http://h\r\nscenarios: [{request: {url: /}}]\r\nload: {rates: [x]}\r\n", []string{
		`p.yaml:3:16: load.rates[0]: want a number, not the string "x"`,
	}},
	{"missing scenarios", "target: http://h\nload: {rates: [1]}\n", []string{
		`p.yaml: scenarios: want at least one scenario, e.g. [{request: {url: /}}]`,
	}},
}

func TestParseProblems(t *testing.T) {
	for _, tt := range parseProblemCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse(%q) = nil error, want %q", tt.yaml, tt.want)
			}
			if diff := cmp.Diff(tt.want, problemsOf(t, err)); diff != "" {
				t.Errorf("Parse(%q) problems mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}

func TestWhere(t *testing.T) {
	p, err := Parse("full.yaml", []byte(fullPlan))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"slo", "full.yaml:31:6"},
		{"load", "full.yaml:3:1"},
		{"load.rates", "full.yaml:5:3"},
		{"load.rates[2]", "full.yaml:5:20"},
		{"http.headers.User-Agent", "full.yaml:16:25"},
		{"scenarios[0]", "full.yaml:20:5"},
		{"scenarios[0].request.url", "full.yaml:24:12"},
		{"scenarios[0].expect.status[1]", "full.yaml:29:28"},
		{"load.think", "full.yaml:3:1"}, // not written: its parent's position
		{"nowhere", "full.yaml"},
	}
	for _, tt := range tests {
		if got := p.Where(tt.path); got != tt.want {
			t.Errorf("Where(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	flags := &Plan{}
	if got := flags.Where("slo"); got != "" {
		t.Errorf("Where(%q) on a plan from flags = %q, want %q", "slo", got, "")
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte(minimal+"load: {rates: [10]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile(%q) = %v, want no error", path, err)
	}
	if p.File != path {
		t.Errorf("LoadFile(%q).File = %q, want %q", path, p.File, path)
	}

	missing := filepath.Join(dir, "missing.yaml")
	_, err = LoadFile(missing)
	if err == nil || !strings.HasPrefix(err.Error(), "read plan: ") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadFile(%q) = %v, want a wrapped not-exist error starting with \"read plan: \"", missing, err)
	}
	var ps Problems
	if errors.As(err, &ps) {
		t.Errorf("LoadFile(%q) = Problems, want a plain error", missing)
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		in   Problem
		want string
	}{
		{Problem{File: "a.yaml", Line: 2, Col: 3, Path: "slo", Msg: "bad"}, "a.yaml:2:3: slo: bad"},
		{Problem{Path: "load.rates[0]", Msg: "bad"}, "load.rates[0]: bad"},
		{Problem{File: "a.yaml", Msg: "bad"}, "a.yaml: bad"},
		{Problem{Line: 1, Col: 1, Msg: "bad"}, "1:1: bad"},
	}
	for _, tt := range tests {
		if got := tt.in.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseBoundsAliasExpansion(t *testing.T) {
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\nh: &h\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  X-%d: v\n", i)
	}
	b.WriteString("s: &s {request: {url: /, headers: *h}}\nscenarios: [")
	for range 200 {
		b.WriteString("*s, ")
	}
	b.WriteString("]\n")
	_, err := Parse("p.yaml", []byte(b.String()))
	want := fmt.Sprintf("the plan expands to more than %d values (check its aliases and merge keys)", maxValues)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse(alias bomb) = %v, want a problem %q", err, want)
	}
}
