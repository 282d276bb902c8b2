package plan

import (
	"encoding/json"
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
		// The keys of mixes, flows, templates and data.
		head + "scenarios:\n- {weight: 2, request: {url: /a}}\n- {weight: 0.5, steps: [{request: {url: /b}}]}\n",
		head + "vars: {id: '{{uuid}}'}\nlogin: [{request: {method: POST, url: /l, json: {u: '{{.vu}}'}}, extract: {t: {json: token}}}]\n" +
			"scenarios: [{steps: [{request: {url: '/x/{{.t}}', headers: {K: '{{.id}}'}}, expect: {json: {a: 1}, body_regex: x}}]}]\n",
		head + "data: {users: testdata/users.csv}\ntag_limit: 3\nscenarios: [{tags: {site: '{{.user.tenant}}'}, request: {url: '/{{.user.email}}'}}]\n",
		head + "scenarios: [{request: {url: /, json: [1, {a: [null, .inf]}, !!str 2]}, extract: {x: {regex: '('}, vu: {}}}]\n",
		head + "scenarios: [{request: {url: /, body: '{{range .x}}{{.}}{{else}}{{$.y}}{{end}}{{randInt 1}}'}, weight: 0}, {name: '', steps: []}]\n",
		head + "data: {users: testdata/validate/users.json}\nscenarios: [{request: {url: '/{{with .user}}{{.a}}{{end}}'}}]\n",
		// WebSocket scenarios: send and ack, idle soaks, and their mistakes.
		head + "http: {headers: {User-Agent: c}}\nscenarios:\n- name: widget\n  tags: {site: '{{.vu}}'}\n  websocket:\n" +
			"    url: /widget?site={{.vu}}\n    connections: 100\n" +
			"    send: '{\"type\":\"message\",\"clientId\":\"{{uuid}}\",\"text\":\"hi\"}'\n" +
			"    ack: {json: clientId}\n    ack_timeout: 10s\n    max_frame_bytes: 4096\n" +
			"    headers: {Origin: 'http://h'}\n    subprotocols: [chat.v1]\n",
		head + "scenarios: [{websocket: {url: 'wss://h:8443/w', connections: 1000000}}, {websocket: {url: '?x', send: x, ack: {regex: 'id=(\\d+)'}}}]\n",
		"load: {vus: [2]}\nscenarios: [{websocket: {url: 'ws://[::1]:3000/w#f', send: '{{.x}}', ack: {}, headers: {Upgrade: x}}, request: {}}]\n",
		head + "scenarios: [{websocket: {url: 'http://h/w', connections: -1, ack: {json: a, regex: '('}, ack_timeout: -1s, subprotocols: ['a b', '']}, expect: {status: [101]}, steps: []}]\n",
		head + "scenarios: [{websocket: null, request: {url: /a}}, {websocket: {}, steps: [{request: {url: /b}}]}, {websocket: [1]}, {websocket: {ack: null, send: ''}}]\n",
		// Verdict thresholds and strict runs.
		withLoad + "verdict: {healthy_p95: 50ms, overloaded_p95: 2s, max_errors: 0.5%, min_rate: 90%}\nstrict: true\n",
		withLoad + "verdict:\n  max_errors: ' 5 %'\n  min_rate: !!str 100%\nstrict: false\n",
		withLoad + "verdict: {healthy_p95: 1s, overloaded_p95: 0s, max_errors: 1, min_rate: 150%}\nstrict: yes\n",
		withLoad + "verdict: {max_errors: -0%, min_rate: 1e1%, healthy_p95: -1s, max_error: 1%}\nstrict: null\n",
		withLoad + "verdict: {max_errors: [1%], min_rate: {a: 1}, overloaded_p95: .nan}\nstrict: [true]\n",
		// Sinks and deliveries: a Slack-like mock, and mistakes.
		head + slackSink + widget,
		head + widget + "sinks: [{name: slack, latency: 50ms, error_rate: 1%, status: 202, body: ok, id: {regex: 'id=(\\w+)'}, drain: 0s}]\n",
		head + widget + "sinks: [{name: slack, listen: '[::1]:0', latency: {p999: 1s, p50: 2s, p75: 1ms}, rate_limit: {per: '{{ .header.X-Team }}', rps: .inf}, id: {json: a, header: b}}]\n",
		head + "sinks: [{name: a, listen: ':1', id: {json: x}}, {name: a, listen: 'h:1', latency: [1s], rate_limit: {per: '{{.json.}}'}, id: {}}, null]\n" +
			"scenarios: [{steps: [{request: {url: /a}}], delivery: {sink: a, id: '{{seq}}'}}, {websocket: {url: /w}, delivery: {}}, {request: {url: /b}, delivery: null}]\n",
		head + "sinks: [{name: s, id: {json: id}, latency: &l {p50: 1ms}}, {name: t, id: {json: id}, latency: {<<: *l, p99: !!str 2ms}, listen: 'x:65536'}]\n" +
			"scenarios: [{request: {url: /a}, delivery: {sink: t, id: 'x{{.iteration}}'}}]\n",
		// Hostile plans: merge keys a billion merges deep, aliases that
		// repeat problems, lists nested deeply (limits_test.go).
		mergeBomb(9, 10),
		strings.Replace(mergeBomb(9, 10), "{k: v}", "{}", 1),
		unknownKeyBomb(50, 50),
		deepLists(500),
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
	checkLoad(t, p)
	checkVerdict(t, p)
	checkScenarios(t, p)
	for j := range p.Login {
		checkRequest(t, p, &p.Login[j].Request)
	}
	checkSinks(t, p)
	for path := range p.pos {
		if w := p.Where(path); !strings.HasPrefix(w, p.File+":") {
			t.Errorf("Where(%q) = %q, want %q:line:col", path, w, p.File)
		}
	}
}

// checkLoad asserts what the load of an accepted plan promises: a model,
// rates and users in range, and steps that take time.
func checkLoad(t *testing.T, p *Plan) {
	t.Helper()
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
}

// checkVerdict asserts what the verdict of an accepted plan promises.
func checkVerdict(t *testing.T, p *Plan) {
	t.Helper()
	v := &p.Verdict
	if !(0 < v.HealthyP95.Duration && v.HealthyP95.Duration <= v.OverloadedP95.Duration) {
		t.Errorf("verdict p95s %v, %v: want 0 < healthy_p95 ≤ overloaded_p95", v.HealthyP95, v.OverloadedP95)
	}
	for _, share := range []*Percent{v.MaxErrors, v.MinRate} {
		if share == nil || !(share.Value >= 0 && share.Value <= 100) {
			t.Errorf("verdict share %v: want a percentage from 0 to 100", share)
		}
	}
}

// checkScenarios asserts what the scenarios of an accepted plan promise:
// at least one, each with a new name, a positive weight and exactly one
// kind of work, whose requests and WebSockets are valid.
func checkScenarios(t *testing.T, p *Plan) {
	t.Helper()
	if len(p.Scenarios) == 0 || p.TagLimit < 0 {
		t.Fatalf("len(Scenarios) = %d, TagLimit = %d, want at least one scenario and a limit >= 0", len(p.Scenarios), p.TagLimit)
	}
	names := map[string]bool{}
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		if !(s.Weight > 0 && !math.IsInf(s.Weight, 0)) || s.Name == "" || names[s.Name] {
			t.Errorf("scenario %d: weight %v, name %q: want a positive finite weight and a new name", i, s.Weight, s.Name)
		}
		names[s.Name] = true
		checkScenario(t, p, s)
	}
}

// checkScenario asserts that a scenario of an accepted plan is a request,
// steps or a WebSocket, exactly one of them, and a valid one.
func checkScenario(t *testing.T, p *Plan, s *Scenario) {
	t.Helper()
	kinds := 0
	for _, is := range []bool{len(s.Steps) > 0, hasRequest(&s.Request), s.WebSocket != nil} {
		if is {
			kinds++
		}
	}
	if kinds != 1 {
		t.Errorf("scenario %q: want a request, steps or websocket, exactly one of them", s.Name)
	}
	switch {
	case s.WebSocket != nil:
		checkWebSocket(t, p, s)
	case len(s.Steps) == 0:
		checkRequest(t, p, &s.Request)
	}
	for j := range s.Steps {
		checkRequest(t, p, &s.Steps[j].Request)
	}
}

// checkSinks asserts what the sinks and deliveries of an accepted plan
// promise.
func checkSinks(t *testing.T, p *Plan) {
	t.Helper()
	names, ports := map[string]bool{}, map[int]bool{}
	for i := range p.Sinks {
		s := &p.Sinks[i]
		port, msg := listenProblem(s.Listen)
		if !sinkName.MatchString(s.Name) || names[s.Name] || msg != "" || port != 0 && ports[port] {
			t.Errorf("sink %d: name %q, listen %q: want a new name and a free host:port", i, s.Name, s.Listen)
		}
		names[s.Name], ports[port] = true, true
		checkSink(t, s)
	}
	for i := range p.Scenarios {
		if d := p.Scenarios[i].Delivery; d != nil {
			if _, err := ParseTemplate("t", d.ID); !names[d.Sink] || !IsTemplate(d.ID) || err != nil {
				t.Errorf("scenario %d: delivery %+v (%v): want a sink of the plan and an id template", i, d, err)
			}
		}
	}
}

// checkSink asserts what one sink of an accepted plan promises: its
// status, errors, drain, latency, rate limit and id.
func checkSink(t *testing.T, s *Sink) {
	t.Helper()
	if s.Status < 200 || s.Status > 599 || s.ErrorRate == nil || !(s.ErrorRate.Value >= 0 && s.ErrorRate.Value <= 100) || s.Drain.Duration < 0 {
		t.Errorf("sink %q: status %d, error_rate %v, drain %v", s.Name, s.Status, s.ErrorRate, s.Drain)
	}
	l := s.Latency
	if _, err := l.MarshalYAML(); err != nil || l.Fixed.Duration < 0 || l.Fixed.Duration != 0 && len(l.Percentiles) > 0 {
		t.Errorf("sink %q: latency %v (%v): want fixed or percentiles, known keys, not negative", s.Name, l, err)
	}
	var last time.Duration
	for _, k := range latencyKeys {
		if d, ok := l.Percentiles[k.q]; ok {
			if d.Duration < last {
				t.Errorf("sink %q: latency %v decreases", s.Name, l)
			}
			last = d.Duration
		}
	}
	if r := s.RateLimit; r != nil {
		if _, _, ok := parsePer(r.Per); !ok || !(r.RPS > 0 && !math.IsInf(r.RPS, 0)) || (r.Key() == "") != (r.Per == "") {
			t.Errorf("sink %q: rate_limit %+v, key %q", s.Name, r, r.Key())
		}
	}
	if id := s.ID; (id.JSON == "") == (id.Regex == "") || id.Header != "" || id.Cookie != "" {
		t.Errorf("sink %q: id %+v, want json or regex", s.Name, id)
	}
}

// checkRequest asserts what every request of an accepted plan promises.
func checkRequest(t *testing.T, p *Plan, r *Request) {
	t.Helper()
	u, err := url.Parse(fill(p.RequestURL(r)))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Errorf("RequestURL() = %q (%v), want an http(s) URL with a host", p.RequestURL(r), err)
	}
	if !isToken(r.Method) {
		t.Errorf("Method = %q, want letters", r.Method)
	}
	for _, h := range p.RequestHeaders(r) {
		if headerNameProblem(h[0]) != "" || headerValueProblem(h[1]) != "" {
			t.Errorf("RequestHeaders() has %q, want a valid header", h)
		}
	}
	if r.JSON != nil {
		if r.Body != "" {
			t.Errorf("request has body %q and json, want one", r.Body)
		}
		if _, err := json.Marshal(r.JSON); err != nil {
			t.Errorf("json.Marshal(%#v) = %v, want a JSON body", r.JSON, err)
		}
	}
	for _, text := range []string{r.URL, r.Body} {
		if _, err := ParseTemplate("t", text); err != nil {
			t.Errorf("ParseTemplate(%q) = %v, want a template that parses", text, err)
		}
	}
}

// checkWebSocket asserts what every WebSocket scenario of an accepted plan
// promises.
func checkWebSocket(t *testing.T, p *Plan, s *Scenario) {
	t.Helper()
	w := s.WebSocket
	u, err := url.Parse(fill(p.WebSocketURL(w)))
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" || u.Fragment != "" {
		t.Errorf("WebSocketURL() = %q (%v), want a ws(s) URL with a host and no fragment", p.WebSocketURL(w), err)
	}
	if w.Connections < 1 || w.Connections > MaxWebSocketConnections || w.MaxFrameBytes <= 0 {
		t.Errorf("connections %d, max_frame_bytes %d: want 1..%d and positive", w.Connections, w.MaxFrameBytes, MaxWebSocketConnections)
	}
	switch {
	case w.Send == "" && (w.Ack != nil || w.AckTimeout.Duration != 0):
		t.Errorf("idle soak with ack %+v, ack_timeout %v: want neither", w.Ack, w.AckTimeout)
	case w.Send != "" && (w.Ack == nil || (w.Ack.JSON == "") == (w.Ack.Regex == "") || w.AckTimeout.Duration <= 0):
		t.Errorf("send with ack %+v, ack_timeout %v: want one matcher and a positive timeout", w.Ack, w.AckTimeout)
	}
	if hasExpect(&s.Expect) || len(s.Extract) > 0 {
		t.Errorf("websocket scenario %q has expect or extract, want neither", s.Name)
	}
	for _, h := range p.WebSocketHeaders(w) {
		if headerNameProblem(h[0]) != "" || headerValueProblem(h[1]) != "" {
			t.Errorf("WebSocketHeaders() has %q, want a valid header", h)
		}
	}
	for _, sp := range w.Subprotocols {
		if !isHeaderToken(sp) {
			t.Errorf("subprotocol %q, want a token", sp)
		}
	}
	for _, text := range []string{w.URL, w.Send} {
		if _, err := ParseTemplate("t", text); err != nil {
			t.Errorf("ParseTemplate(%q) = %v, want a template that parses", text, err)
		}
	}
}

func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		"/api", "{{uuid}}", "{{.user.site}}-{{.vu}}", "{{randInt 1}}", "{{pick}}", "{{now.Unix}}",
		"{{range .x}}{{.}}{{else}}{{$.y}}{{end}}", `{{define "a"}}{{.z}}{{end}}{{template "a" .}}`,
		"{{with $x := .token}}{{$x}}{{end}}", "{{16 | randString | printf `%s`}}", "{{", "{{end}}", "{{.a.b.c",
		"{{/* c */}}", "{{break}}", "{{range 3}}{{continue}}{{end}}", "{{(.x).y}}", "{{uid}}", "{{nil}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tmpl, err := ParseTemplate("f", text)
		if err == nil {
			refs, calls := templateUses(tmpl)
			for _, r := range refs {
				if len(r) == 0 || r[0] == "" {
					t.Errorf("templateUses(%q) has the empty reference %q", text, r)
				}
			}
			for _, c := range calls {
				if c.args < 0 || c.name == "" {
					t.Errorf("templateUses(%q) has the call %+v", text, c)
				}
			}
		}
		p := flagPlan()
		p.Scenarios[0].Request.Body = text
		ps, _ := p.Validate().(Problems)
		reported := false
		for _, q := range ps {
			if q.Path != "scenarios[0].request.body" || q.Msg == "" {
				t.Errorf("Validate() with body %q = %v, want problems of the body only", text, q)
			}
			reported = reported || strings.HasPrefix(q.Msg, "template: ")
		}
		if err != nil && !reported {
			t.Errorf("ParseTemplate(%q) = %v, but Validate() reports no template problem: %v", text, err, ps)
		}
		if !IsTemplate(text) && len(ps) > 0 {
			t.Errorf("Validate() with the plain body %q = %v, want no problem", text, ps)
		}
	})
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
