package plan

import (
	"errors"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		fullPlan,
		brokenPlan,
		minimal + "load: {rates: [10]}\n",
		minimal + "load: {vus: [1, 2], think: 1s, warmup: 0s}\n",
		minimal + "load: {ramp: {from: 0, to: 100, over: 2m}, arrival: poisson, seed: -3}\n",
		"target: http://h\nload: {rates: &r [1]}\nscenarios:\n  - request: {<<: {url: /y}, url: /x}\n    expect: {status: *r}\n",
		"scenarios: [{request: {url: 'http://{{.host}}/x', headers: {a: b, A: c}}}]\nload: {rates: [.inf, .nan]}\n",
		"load: &l {rates: [1], step: *l}\n",
		"http: !!map {http2: !!bool yes, headers: {a: !!str 1}}\nname: !x y\n",
		"\xef\xbb\xbfload:\r\n  vus: [1.5, 99999999999999999999]\r\n",
		"- 1\n",
		"a: 1\n---\nb: 2\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Parse() = %v (%T), want non-empty Problems", err, err)
			}
			for _, q := range ps {
				if q.Msg == "" || q.File != "f.yaml" || q.Line < 0 || q.Col < 0 {
					t.Errorf("Parse() problem %+v, want a message, the file and a position", q)
				}
			}
			return
		}
		checkValid(t, p)
	})
}

// checkValid asserts what every accepted plan promises its users.
func checkValid(t *testing.T, p *Plan) {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate() on a parsed plan = %v, want nil", err)
	}
	l := &p.Load
	if l.Model != Open && l.Model != Closed {
		t.Errorf("Load.Model = %q, want open or closed", l.Model)
	}
	for _, r := range l.Rates {
		if !(r > 0 && r <= MaxRate) {
			t.Errorf("Load.Rates has %v, want a rate in (0, %d]", r, MaxRate)
		}
	}
	for _, n := range l.VUs {
		if n < 1 || n > MaxVUs {
			t.Errorf("Load.VUs has %d, want 1..%d", n, MaxVUs)
		}
	}
	if l.Step.Duration <= 0 || l.Warmup == nil || l.Warmup.Duration < 0 || p.HTTP.Timeout.Duration <= 0 {
		t.Errorf("step %v, warmup %v, timeout %v: want positive, non-negative, positive", l.Step, l.Warmup, p.HTTP.Timeout)
	}
	if p.Steps() < 1 || p.Duration() < 0 {
		t.Errorf("Steps() = %d, Duration() = %v, want at least one step and a non-negative time", p.Steps(), p.Duration())
	}
	if len(p.Scenarios) != 1 {
		t.Fatalf("len(Scenarios) = %d, want 1", len(p.Scenarios))
	}
	s := &p.Scenarios[0]
	u, err := url.Parse(fill(p.URL(s)))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Errorf("URL() = %q (%v), want an http(s) URL with a host", p.URL(s), err)
	}
	for _, h := range p.Headers(s) {
		if headerNameProblem(h[0]) != "" || headerValueProblem(h[1]) != "" {
			t.Errorf("Headers() has %q, want a valid header", h)
		}
	}
	for path := range p.pos {
		if w := p.Where(path); !strings.HasPrefix(w, p.File+":") {
			t.Errorf("Where(%q) = %q, want %q:line:col", path, w, p.File)
		}
	}
}

func FuzzParseRates(f *testing.F) {
	for _, s := range []string{"50,100,200", " 50/s, 100 /s", "1e3", "0", "-1", "inf", "NaN", "0x1p4", "50,,1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rates, err := ParseRates(s)
		if err != nil {
			if rates != nil {
				t.Errorf("ParseRates(%q) = %v, %v, want nil rates with the error", s, rates, err)
			}
			return
		}
		if len(rates) == 0 {
			t.Errorf("ParseRates(%q) = [], nil, want an error", s)
		}
		for _, r := range rates {
			if math.IsNaN(r) || r <= 0 || r > MaxRate {
				t.Errorf("ParseRates(%q) has %v, want a rate in (0, %d]", s, r, MaxRate)
			}
		}
		if p := flagPlanWith(rates); p.Validate() != nil {
			t.Errorf("ParseRates(%q) = %v, but a plan with them is invalid: %v", s, rates, p.Validate())
		}
	})
}

// flagPlanWith is flagPlan with the given rates.
func flagPlanWith(rates []float64) *Plan {
	p := flagPlan()
	p.Load.Rates = rates
	return p
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"60s", "1m30s", "0", "-5s", "60", "soon", " 1h ", "1.5h", "9999999999h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if d != 0 || !strings.Contains(err.Error(), "want") {
				t.Errorf("ParseDuration(%q) = %v, %v, want 0 and a message saying what is wanted", s, d, err)
			}
			return
		}
		want, perr := time.ParseDuration(strings.TrimSpace(s))
		if d < 0 || perr != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, want %v (%v), non-negative", s, d, want, perr)
		}
	})
}

func FuzzParseVUs(f *testing.F) {
	for _, s := range []string{"10,50,100", " 1 ", "0", "1.5", "+3", "1000001", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vus, err := ParseVUs(s)
		if err != nil {
			return
		}
		if len(vus) == 0 {
			t.Errorf("ParseVUs(%q) = [], nil, want an error", s)
		}
		for _, n := range vus {
			if n < 1 || n > MaxVUs {
				t.Errorf("ParseVUs(%q) has %d, want 1..%d", s, n, MaxVUs)
			}
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"X-Token: abc", "a:b:c", ":", "X A: b", "X-A: b\r\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, value, err := ParseHeader(s)
		if err != nil {
			return
		}
		if headerNameProblem(name) != "" || headerValueProblem(value) != "" {
			t.Errorf("ParseHeader(%q) = %q, %q, want a valid name and value", s, name, value)
		}
		p := flagPlan()
		p.HTTP.Headers = map[string]string{name: value}
		if err := p.Validate(); err != nil {
			t.Errorf("ParseHeader(%q) = %q, %q, but a plan with it is invalid: %v", s, name, value, err)
		}
	})
}
