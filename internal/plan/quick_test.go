package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// given reports the flags named as set.
func given(flags ...string) func(string) bool {
	return func(f string) bool { return slices.Contains(flags, f) }
}

// The quick flags amend a plan only where they were given, and their
// errors name the flag.
func TestApplyQuick(t *testing.T) {
	p := &Plan{Load: Load{Rates: []float64{10}, Step: Duration{Duration: time.Minute}}, Scenarios: []Scenario{{Request: Request{URL: "/a", Method: "GET"}}}}
	q := &Quick{URL: "http://127.0.0.1:8080/b", Method: "post", VUs: "5,10", Step: "2s", Timeout: "oops", Headers: []string{"X-A: 1"}}
	if err := p.Apply(q, given("url", "method", "vus", "step", "header")); err != nil {
		t.Fatal(err)
	}
	sc := p.Scenarios[0].Request
	if sc.URL != q.URL || sc.Method != "POST" || sc.Headers["X-A"] != "1" {
		t.Errorf("request = %+v, want the flags' url, method and header", sc)
	}
	if p.Load.Model != Closed || !slices.Equal(p.Load.VUs, []int{5, 10}) || p.Load.Rates != nil || p.Load.Step.Duration != 2*time.Second {
		t.Errorf("load = %+v, want the closed model at 5 and 10 users in 2s steps", p.Load)
	}
	if p.HTTP.Timeout.Duration != 0 {
		t.Errorf("timeout = %v, want untouched: --timeout was not given", p.HTTP.Timeout.Duration)
	}
	for _, tt := range []struct {
		q     Quick
		flags []string
		want  string
	}{
		{Quick{Rate: "10", VUs: "5"}, []string{"rate", "vus"}, "--rate (open model) and --vus (closed model) exclude each other"},
		{Quick{Rate: "fast"}, []string{"rate"}, "--rate: "},
		{Quick{Timeout: "soon"}, []string{"timeout"}, "--timeout: "},
		{Quick{Headers: []string{"nocolon"}}, nil, `--header "nocolon"`},
		{Quick{URL: "http://x/"}, []string{"url"}, "no load given"},
		{Quick{Step: "0s"}, []string{"step"}, "--step 0s: want a positive duration"},
		{Quick{Timeout: "0"}, []string{"timeout"}, "--timeout 0: want a positive duration"},
	} {
		err := (&Plan{}).Apply(&tt.q, given(tt.flags...))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Apply(%+v) = %v, want an error with %q", tt.q, err, tt.want)
		}
	}
}

// A step or timeout written as 0 in a plan is refused, naming where, rather
// than silently becoming the default.
// A step shorter than MinStep (--step 1ns) measures nothing: refused,
// with the flag named; 100ms is the shortest.
func TestTinyStepRefused(t *testing.T) {
	_, err := Parse("p.yaml", []byte("target: http://h\nload: {rates: [1], step: 1ns}\nscenarios: [{request: {url: /}}]\n"))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:2:") || !strings.Contains(err.Error(), "load.step: want at least 100ms") {
		t.Errorf("step 1ns: %v, want refused at p.yaml:2 with the minimum", err)
	}
	if _, err := Parse("p.yaml", []byte("target: http://h\nload: {rates: [1], step: 100ms}\nscenarios: [{request: {url: /}}]\n")); err != nil {
		t.Errorf("step 100ms: %v, want accepted", err)
	}
}

func TestZeroStepOrTimeoutRefused(t *testing.T) {
	_, err := Parse("p.yaml", []byte("target: http://h\nload: {rates: [1], step: 0s}\nhttp: {timeout: 0s}\nscenarios: [{request: {url: /}}]\n"))
	for _, want := range []string{"p.yaml:2:", "load.step: want a positive duration", "http.timeout: want a positive duration"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse = %v, want a problem with %q", err, want)
		}
	}
}

// A URL that is not one is called what it is, not "relative".
func TestInvalidURLMessages(t *testing.T) {
	for url, want := range map[string]string{
		"http//127.0.0.1:8080/": "is neither an absolute URL",
		"http://[::1/":          "is not a valid URL (missing ']' in host)",
		"/x":                    "is relative: set target",
	} {
		_, err := Parse("p.yaml", []byte(fmt.Sprintf("load: {rates: [1]}\nscenarios: [{request: {url: %q}}]\n", url)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("url %q: %v, want %q", url, err, want)
		}
	}
}

func TestRepeatBounds(t *testing.T) {
	if err := (&Plan{}).Apply(&Quick{Rate: "10", Repeat: 0}, given("rate", "repeat")); err == nil || !strings.Contains(err.Error(), "--repeat 0") {
		t.Errorf("--repeat 0: %v, want an error naming it", err)
	}
	_, err := Parse("plan.yaml", []byte("target: http://127.0.0.1:9\nload: {rates: [10]}\nrepeat: 101\nscenarios: [{request: {url: /}}]\n"))
	if err == nil || !strings.Contains(err.Error(), "plan.yaml:3:9: repeat: want 1 to 100") {
		t.Errorf("repeat: 101 = %v, want a positioned error", err)
	}
}
