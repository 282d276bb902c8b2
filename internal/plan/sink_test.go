package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const ms = time.Millisecond

// slackSink is a Slack-like sink for a chat widget's messages, as a plan
// writes it.
const slackSink = `sinks:
  - name: slack
    listen: 127.0.0.1:9911
    latency: {p50: 40ms, p99: 200ms}
    error_rate: 0%
    rate_limit: {per: "{{.json.channel}}", rps: 1}
    id: {json: text}
    drain: 60s
`

// widget is a scenario whose message must reach the slack sink.
const widget = `vars: {msgid: "{{uuid}}"}
scenarios:
  - name: widget
    request: {method: POST, url: /api/msg, json: {channel: C1, text: "{{.msgid}}"}}
    expect: {status: [202]}
    delivery: {sink: slack, id: "{{.msgid}}"}
`

// pcts builds a percentile latency.
func pcts(kv ...any) SinkLatency {
	m := map[float64]Duration{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(float64)] = dur(kv[i+1].(time.Duration))
	}
	return SinkLatency{Percentiles: m}
}

func TestParseSinks(t *testing.T) {
	p, err := Parse("p.yaml", []byte(head+slackSink+widget))
	if err != nil {
		t.Fatalf("Parse = %v, want no error", err)
	}
	want := []Sink{{
		Name: "slack", Listen: "127.0.0.1:9911", Latency: pcts(0.5, 40*ms, 0.99, 200*ms),
		ErrorRate: &Percent{0}, Status: 200, RateLimit: &SinkRateLimit{Per: "{{.json.channel}}", RPS: 1},
		ID: Extract{JSON: "text"}, Drain: dur(60 * time.Second),
	}}
	if diff := cmp.Diff(want, p.Sinks); diff != "" {
		t.Errorf("Sinks mismatch (-want +got):\n%s", diff)
	}
	if got := p.Sinks[0].RateLimit.Key(); got != "channel" {
		t.Errorf("RateLimit.Key() = %q, want %q", got, "channel")
	}
	wantDelivery := &Delivery{Sink: "slack", ID: "{{.msgid}}"}
	if diff := cmp.Diff(wantDelivery, p.Scenarios[0].Delivery); diff != "" {
		t.Errorf("Delivery mismatch (-want +got):\n%s", diff)
	}
	if got := p.Where("sinks[0].latency.p99"); got != "p.yaml:6:31" {
		t.Errorf("Where(sinks[0].latency.p99) = %q, want p.yaml:6:31", got)
	}
}

func TestSinkDefaults(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       Sink
	}{
		{"absent", "sinks: [{name: s, id: {json: id}}]\n", Sink{
			Name: "s", Listen: DefaultSinkListen, ErrorRate: &Percent{0}, Status: DefaultSinkStatus,
			ID: Extract{JSON: "id"}, Drain: dur(DefaultDrain),
		}},
		{"drain 0s waits for nothing", "sinks: [{name: s, id: {regex: 'id=(\\w+)'}, drain: 0s, latency: 50ms, status: 204}]\n", Sink{
			Name: "s", Listen: DefaultSinkListen, ErrorRate: &Percent{0}, Status: 204,
			Latency: SinkLatency{Fixed: dur(50 * ms)}, ID: Extract{Regex: `id=(\w+)`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(minimal+"load: {rates: [1]}\n"+tt.yaml))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			if diff := cmp.Diff([]Sink{tt.want}, p.Sinks); diff != "" {
				t.Errorf("Sinks mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// A plan built in Go gets the same defaults, and Validate twice is safe.
	p := flagPlan()
	p.Sinks = []Sink{{Name: "s", ID: Extract{JSON: "id"}}}
	for range 2 {
		if err := p.Validate(); err != nil {
			t.Fatalf("Validate() = %v", err)
		}
	}
	if s := p.Sinks[0]; s.Drain.Duration != DefaultDrain || s.Listen != DefaultSinkListen || s.Status != 200 || s.ErrorRate == nil {
		t.Errorf("Go plan sink defaults = %+v", s)
	}
}

func TestSinkLatencyYAML(t *testing.T) {
	tests := []struct {
		name, in string
		want     SinkLatency
		wantErr  string
	}{
		{"fixed", "l: 50ms", SinkLatency{Fixed: dur(50 * ms)}, ""},
		{"tagged", "l: !!str 1s", SinkLatency{Fixed: dur(time.Second)}, ""},
		{"percentiles", "l: {p50: 40ms, p99: 200ms}", pcts(0.5, 40*ms, 0.99, 200*ms), ""},
		{"every key", "l: {p50: 1ms, p90: 2ms, p95: 3ms, p99: 4ms, p999: 5ms}",
			pcts(0.5, 1*ms, 0.9, 2*ms, 0.95, 3*ms, 0.99, 4*ms, 0.999, 5*ms), ""},
		{"block, one key", "l:\n  p999: 1s\n", pcts(0.999, time.Second), ""},
		{"bare number", "l: 50", SinkLatency{}, errNotLatency.Error()},
		{"list", "l: [50ms]", SinkLatency{}, errNotLatency.Error()},
		{"empty mapping", "l: {}", SinkLatency{}, errNotLatency.Error()},
		{"unknown key", "l: {p75: 1s}", SinkLatency{}, `want a percentile key p50, p90, p95, p99 or p999, not "p75"`},
		{"bad value", "l: {p50: soon}", SinkLatency{}, `p50: want a duration such as "60s"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct {
				L SinkLatency `yaml:"l"`
			}
			err := yaml.Unmarshal([]byte(tt.in), &v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Unmarshal(%q) = %v, want an error containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%q) = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, v.L); diff != "" {
				t.Errorf("Unmarshal(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			// MarshalYAML writes the same form back.
			out, err := yaml.Marshal(v)
			if err != nil {
				t.Fatalf("Marshal = %v", err)
			}
			var back struct {
				L SinkLatency `yaml:"l"`
			}
			if err := yaml.Unmarshal(out, &back); err != nil {
				t.Fatalf("Unmarshal(Marshal) = %v; YAML:\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, back.L); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s\nYAML:\n%s", diff, out)
			}
		})
	}
	if s := pcts(0.99, 200*ms, 0.5, 40*ms).String(); s != "p50 40ms, p99 200ms" {
		t.Errorf("String() = %q", s)
	}
	if _, err := pcts(0.42, ms).MarshalYAML(); err == nil {
		t.Errorf("MarshalYAML of quantile 0.42 = nil error, want one")
	}
}

func TestSinkRateLimitKey(t *testing.T) {
	tests := []struct {
		per, want string
		ok        bool
	}{
		{"", "", true},
		{"{{.json.channel}}", "channel", true},
		{"{{ .json.message.channel }}", "message.channel", true},
		{"{{.json.items.#.id}}", "items.#.id", true},
		{"{{.header.X-Channel}}", "header:X-Channel", true},
		{"{{ .header.x-team }}", "header:x-team", true},
		{"channel", "", false},
		{"header:X-Channel", "", false},
		{"{{.channel}}", "", false},
		{"{{.json.}}", "", false},
		{"{{.json.a b}}", "", false},
		{"{{.json.header:x}}", "", false},
		{"{{.header.X A}}", "", false},
		{"{{.header.}}", "", false},
		{"{{.header.X}}}", "", false},
		{" {{.json.channel}}", "", false},
		{"{{.json.channel}}-x", "", false},
	}
	for _, tt := range tests {
		r := &SinkRateLimit{Per: tt.per, RPS: 1}
		if got := r.Key(); got != tt.want {
			t.Errorf("Key() of per %q = %q, want %q", tt.per, got, tt.want)
		}
		if _, _, ok := parsePer(tt.per); ok != tt.ok {
			t.Errorf("parsePer(%q) ok = %v, want %v", tt.per, ok, tt.ok)
		}
	}
}

// sinkHead is a valid plan to which sink cases add sinks from line 4 on.
const sinkHead = head + "scenarios: [{request: {url: /a}}]\n"

func TestSinkRules(t *testing.T) {
	runParseCases(t, []parseCase{
		{"valid", sinkHead + "sinks:\n- {name: a, listen: ':9911', id: {json: id}, latency: 0s}\n" +
			"- {name: b-2.x, listen: '[::1]:0', id: {regex: x}, error_rate: 100%, status: 599}\n" +
			"- {name: c_3, listen: 'localhost:0', id: {json: id}, rate_limit: {per: '{{.header.X-Team}}', rps: 0.5}}\n", nil},
		{"no name", sinkHead + "sinks: [{id: {json: id}}]\n", []string{
			`p.yaml:4:9: sinks[0].name: required: a name such as slack, for a scenario's delivery to name`,
		}},
		{"bad name", sinkHead + "sinks: [{name: 'my sink', id: {json: id}}, {name: 1a, id: {json: id}}]\n", []string{
			`p.yaml:4:16: sinks[0].name: want a name of letters, digits, _, - and ., starting with a letter, such as slack, not "my sink"`,
			`p.yaml:4:51: sinks[1].name: want a name of letters, digits, _, - and ., starting with a letter, such as slack, not "1a"`,
		}},
		{"same name", sinkHead + "sinks:\n- {name: s, id: {json: id}}\n- {name: s, id: {json: id}}\n", []string{
			`p.yaml:6:10: sinks[1].name: sink name "s" is already used by sinks[0] (p.yaml:5:10): names must be unique`,
		}},
		{"listen", sinkHead + "sinks:\n- {name: a, id: {json: id}, listen: 9911}\n- {name: b, id: {json: id}, listen: 'h:99999'}\n" +
			"- {name: c, id: {json: id}, listen: 'h:http'}\n- {name: d, id: {json: id}, listen: 'a b:1'}\n", []string{
			`p.yaml:5:37: sinks[0].listen: want host:port such as 127.0.0.1:9911, not "9911"`,
			`p.yaml:6:37: sinks[1].listen: want a port number from 0 (any free port) to 65535, not "99999"`,
			`p.yaml:7:37: sinks[2].listen: want a port number from 0 (any free port) to 65535, not "http"`,
			`p.yaml:8:37: sinks[3].listen: want an IP address or a host name before the port, such as 127.0.0.1, not "a b"`,
		}},
		{"same port", sinkHead + "sinks:\n- {name: a, id: {json: id}, listen: '127.0.0.1:9911'}\n" +
			"- {name: b, id: {json: id}, listen: '0.0.0.0:9911'}\n- {name: c, id: {json: id}, listen: '127.0.0.1:0'}\n" +
			"- {name: d, id: {json: id}}\n", []string{
			`p.yaml:6:37: sinks[1].listen: sinks[0] (p.yaml:5:37) listens on port 9911 too: give each sink its own port (or 0 for any free one)`,
		}},
		{"status", sinkHead + "sinks: [{name: a, id: {json: id}, status: 199}, {name: b, id: {json: id}, status: 600}]\n", []string{
			`p.yaml:4:43: sinks[0].status: want a final HTTP status from 200 to 599, not 199`,
			`p.yaml:4:83: sinks[1].status: want a final HTTP status from 200 to 599, not 600`,
		}},
		{"error rate", sinkHead + "sinks: [{name: a, id: {json: id}, error_rate: 5}]\n", []string{
			`p.yaml:4:47: sinks[0].error_rate: want a percentage such as "1%"`,
		}},
		{"rate limit", sinkHead + "sinks:\n- {name: a, id: {json: id}, rate_limit: {per: channel, rps: 0}}\n" +
			"- {name: b, id: {json: id}, rate_limit: {per: '{{.user.x}}', rps: -1}}\n- {name: c, id: {json: id}, rate_limit: {}}\n", []string{
			`p.yaml:5:47: sinks[0].rate_limit.per: want "{{.json.<path>}}" (a field of the JSON body, e.g. "{{.json.channel}}"), "{{.header.<Name>}}" (a request header, e.g. "{{.header.X-Channel}}"), or nothing for one limit over all requests; not "channel"`,
			`p.yaml:5:61: sinks[0].rate_limit.rps: want a positive number of requests per second per key, such as 1, not 0`,
			`p.yaml:6:47: sinks[1].rate_limit.per: want "{{.json.<path>}}" (a field of the JSON body, e.g. "{{.json.channel}}"), "{{.header.<Name>}}" (a request header, e.g. "{{.header.X-Channel}}"), or nothing for one limit over all requests; not "{{.user.x}}"`,
			`p.yaml:6:67: sinks[1].rate_limit.rps: want a positive number of requests per second per key, such as 1, not -1`,
			`p.yaml:7:29: sinks[2].rate_limit.rps: want a positive number of requests per second per key, such as 1, not 0`,
		}},
		{"id", sinkHead + "sinks:\n- {name: a}\n- {name: b, id: {json: a, regex: b}}\n- {name: c, id: {header: X-Id}}\n" +
			"- {name: d, id: {cookie: id, json: id}}\n- {name: e, id: {regex: '('}}\n", []string{
			`p.yaml:5:3: sinks[0].id: required: where the message id is in each received body, json (a JSON path) or regex, e.g. {json: text}`,
			`p.yaml:6:34: sinks[1].id.regex: want one of json or regex, not both`,
			`p.yaml:7:26: sinks[2].id.header: a sink finds the id in each request's body: use json or regex, not header`,
			`p.yaml:8:26: sinks[3].id.cookie: a sink finds the id in each request's body: use json or regex, not cookie`,
			"p.yaml:9:25: sinks[4].id.regex: error parsing regexp: missing closing ): `(`",
		}},
		{"drain", sinkHead + "sinks: [{name: a, id: {json: id}, drain: -1s}, {name: b, id: {json: id}, drain: 60}]\n", []string{
			`p.yaml:4:42: sinks[0].drain: want a non-negative duration such as "60s", not -1s`,
			`p.yaml:4:81: sinks[1].drain: want a duration such as "60s"`,
		}},
		{"unknown key", sinkHead + "sinks: [{name: a, id: {json: id}, rate: 1}]\n", []string{
			`p.yaml:4:35: sinks[0].rate: unknown key "rate" (known keys: name, listen, latency, error_rate, status, body, rate_limit, id, drain)`,
		}},
	})
}

func TestSinkLatencyRules(t *testing.T) {
	sink := func(latency string) string {
		return sinkHead + "sinks: [{name: a, id: {json: id}, latency: " + latency + "}]\n"
	}
	runParseCases(t, []parseCase{
		{"fixed", sink("50ms"), nil},
		{"percentiles", sink("{p50: 40ms, p90: 40ms, p99: 200ms}"), nil},
		{"merge key", sinkHead + "sinks: [{name: a, id: {json: id}, latency: &l {p50: 1ms}}, {name: b, id: {json: id}, latency: {<<: *l, p99: 2ms}}]\n", nil},
		{"negative", sink("-1ms"), []string{
			`p.yaml:4:44: sinks[0].latency: want a non-negative duration such as "50ms", not -1ms`,
		}},
		{"bare number", sink("50"), []string{
			`p.yaml:4:44: sinks[0].latency: want a duration such as "50ms", or percentiles such as {p50: 40ms, p99: 200ms}, not the number 50`,
		}},
		{"list", sink("[50ms]"), []string{
			`p.yaml:4:44: sinks[0].latency: want a duration such as "50ms", or percentiles such as {p50: 40ms, p99: 200ms}, not a list`,
		}},
		{"empty", sink("{}"), []string{
			`p.yaml:4:44: sinks[0].latency: want a duration such as "50ms", or percentiles such as {p50: 40ms, p99: 200ms}, not an empty mapping`,
		}},
		{"unknown percentile", sink("{p50: 1ms, p75: 2ms, P99: 3ms}"), []string{
			`p.yaml:4:55: sinks[0].latency.p75: want a percentile key p50, p90, p95, p99 or p999, not "p75"`,
			`p.yaml:4:65: sinks[0].latency.P99: want a percentile key p50, p90, p95, p99 or p999, not "P99"`,
		}},
		{"bad values", sink("{p50: soon, p90: , p99: [1s], p999: -1s}"), []string{
			`p.yaml:4:50: sinks[0].latency.p50: want a duration such as "60s"`,
			`p.yaml:4:56: sinks[0].latency.p90: want a duration such as "40ms" for p90, not null`,
			`p.yaml:4:68: sinks[0].latency.p99: want a duration such as "60s", not a list`,
			`p.yaml:4:80: sinks[0].latency.p999: want a non-negative duration such as "40ms", not -1s`,
		}},
		{"decreasing", sink("{p99: 100ms, p50: 200ms, p999: 50ms}"), []string{
			`p.yaml:4:50: sinks[0].latency.p99: p99 (100ms) is below p50 (200ms): latencies must not decrease as the percentile grows`,
			`p.yaml:4:75: sinks[0].latency.p999: p999 (50ms) is below p99 (100ms): latencies must not decrease as the percentile grows`,
		}},
	})
	// What only a plan built in Go can get wrong.
	p := flagPlan()
	p.Sinks = []Sink{{Name: "a", ID: Extract{JSON: "id"}, Latency: SinkLatency{
		Fixed: dur(ms), Percentiles: map[float64]Duration{0.42: dur(ms)},
	}, ErrorRate: &Percent{101}}}
	got := fmt.Sprint(p.Validate())
	for _, want := range []string{
		"sinks[0].latency: give a fixed latency or percentiles, not both",
		"sinks[0].latency: quantile 0.42 has no percentile key: want p50, p90, p95, p99 or p999",
		"sinks[0].error_rate: want a percentage from 0% to 100%, not 101%",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Validate() = %s, want a problem %q", got, want)
		}
	}
}

func TestDeliveryRules(t *testing.T) {
	const sinks = "sinks: [{name: slack, id: {json: text}}, {name: mail, id: {json: id}}]\nvars: {msgid: '{{uuid}}'}\n"
	delivery := func(d string) string {
		return head + sinks + "scenarios: [{request: {url: /a}, delivery: " + d + "}]\n"
	}
	runParseCases(t, []parseCase{
		{"valid", delivery("{sink: slack, id: '{{.msgid}}'}"), nil},
		{"null", delivery("null"), nil},
		{"flow", head + sinks + "scenarios: [{steps: [{request: {url: /a}, extract: {mid: {json: id}}}], delivery: {sink: mail, id: 'm-{{.mid}}-{{.vu}}'}}]\n", nil},
		{"websocket", head + sinks + "scenarios: [{websocket: {url: /w, send: '{\"id\":\"{{.msgid}}\"}', ack: {json: id}}, delivery: {sink: slack, id: '{{.msgid}}'}}]\n", nil},
		{"empty", delivery("{}"), []string{
			`p.yaml:5:34: scenarios[0].delivery.sink: required: the name of a sink; sinks: slack, mail`,
			`p.yaml:5:34: scenarios[0].delivery.id: required: a template of the id the sink must receive, e.g. "{{.msgid}}"`,
		}},
		{"unknown sink", delivery("{sink: slak, id: '{{.msgid}}'}"), []string{
			`p.yaml:5:51: scenarios[0].delivery.sink: no sink named "slak" (did you mean slack?); sinks: slack, mail`,
		}},
		{"no sinks", head + "scenarios: [{request: {url: /a}, delivery: {sink: slack, id: '{{.iteration}}'}}]\n", []string{
			`p.yaml:3:51: scenarios[0].delivery.sink: no sink named "slack": the plan has no sinks; add one under sinks:`,
		}},
		{"fixed id", delivery("{sink: slack, id: hello}"), []string{
			`p.yaml:5:62: scenarios[0].delivery.id: a fixed id is the same for every iteration, so every delivery but the first would be a duplicate: use a template such as "{{.msgid}}", with vars: {msgid: "{{uuid}}"}`,
		}},
		{"fresh id", delivery("{sink: slack, id: '{{randInt 1 9}}'}"), []string{
			`p.yaml:5:62: scenarios[0].delivery.id: randInt gives a new value each time it is rendered, not the id the iteration sent: make it a var (e.g. vars: {msgid: "{{randInt 1 100}}"}) and use {{.msgid}} in the request and here`,
		}},
		{"unknown field", delivery("{sink: slack, id: '{{.msgld}}'}"), []string{
			`p.yaml:5:62: scenarios[0].delivery.id: template reads .msgld, which is not set (did you mean .msgid?); known: .vu, .iteration, .msgid`,
		}},
		{"bad template", delivery("{sink: slack, id: '{{.msgid'}"), []string{
			`p.yaml:5:62: scenarios[0].delivery.id: template: unclosed action`,
		}},
		{"unknown key", delivery("{sink: slack, id: '{{.msgid}}', to: x}"), []string{
			`p.yaml:5:76: scenarios[0].delivery.to: unknown key "to" (known keys: sink, id)`,
		}},
	})
}

// TestMarshalRoundTripSinks checks that a plan with sinks and deliveries
// can be written as YAML and read back unchanged, as `ceiling k8s` needs.
func TestMarshalRoundTripSinks(t *testing.T) {
	plan := head + widget + `sinks:
  - {name: slack, listen: 127.0.0.1:9911, latency: {p50: 40ms, p99: 200ms}, rate_limit: {per: "{{.header.X-Team}}", rps: 2.5}, id: {json: text}}
  - {name: mail, latency: 50ms, error_rate: 0.5%, status: 202, body: '{"queued":true}', id: {regex: 'id=(\w+)'}, drain: 0s}
`
	p, err := Parse("", []byte(plan))
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatalf("Marshal() = %v", err)
	}
	got, err := Parse("", data)
	if err != nil {
		t.Fatalf("Parse(Marshal(p)) = %v, want no error; YAML:\n%s", err, data)
	}
	if diff := cmp.Diff(p, got, ignorePos, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Parse(Marshal(p)) mismatch (-want +got):\n%s\nYAML:\n%s", diff, data)
	}
}
