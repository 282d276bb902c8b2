package plan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// chat is a chat widget's send and ack, for cases to add to.
const chat = `send: '{"type":"message","clientId":"{{uuid}}","text":"hi"}', ack: {json: clientId}`

func TestWebSocketScenarioRules(t *testing.T) {
	sc := head + "scenarios:\n"
	runParseCases(t, []parseCase{
		{"chat widget", sc + "- websocket: {url: /widget, connections: 100, " + chat + ", ack_timeout: 10s}\n  tags: {room: '{{.vu}}'}\n", nil},
		{"idle soak", sc + "- websocket: {url: 'wss://h/w', connections: 1000000}\n", nil},
		{"empty request and steps count as absent", sc + "- {request: {}, steps: [], websocket: {url: /w}}\n", nil},
		{"request and websocket", sc + "- {request: {url: /a}, websocket: {url: /w}}\n", []string{
			`p.yaml:4:24: scenarios[0].websocket: give request or websocket, not both: a websocket scenario sends frames over its sockets`,
		}},
		{"steps and websocket", sc + "- {steps: [{request: {url: /a}}], websocket: {url: /w}}\n", []string{
			`p.yaml:4:35: scenarios[0].websocket: give steps or websocket, not both: a websocket scenario sends frames over its sockets`,
		}},
		{"all three", sc + "- {request: {url: /a}, steps: [{request: {url: /b}}], websocket: {url: /w}}\n", []string{
			`p.yaml:4:24: scenarios[0].steps: give request or steps, not both: a flow's requests are its steps`,
			`p.yaml:4:55: scenarios[0].websocket: give request or websocket, not both: a websocket scenario sends frames over its sockets`,
			`p.yaml:4:55: scenarios[0].websocket: give steps or websocket, not both: a websocket scenario sends frames over its sockets`,
		}},
		{"expect and extract", sc + "- websocket: {url: /w}\n  expect: {status: [101]}\n  extract: {id: {json: id}}\n", []string{
			`p.yaml:5:3: scenarios[0].expect: a websocket scenario has no response to check: a frame is ok when its ack arrives within ack_timeout`,
			`p.yaml:6:3: scenarios[0].extract: a websocket scenario has no response to extract from: remove extract`,
		}},
		{"default names are unique", sc + "- websocket: {url: /w}\n- websocket: {url: /w, " + chat + "}\n", []string{
			`p.yaml:5:3: scenarios[1].name: scenario name "ws /w" is already used by scenarios[0] (p.yaml:4:3): names must be unique; give one a name`,
		}},
	})
}

func TestWebSocketURLRules(t *testing.T) {
	sc := head + "scenarios:\n- websocket: "
	runParseCases(t, []parseCase{
		{"absolute", sc + "{url: 'ws://h:3000/w?site={{.vu}}'}\n", nil},
		{"path", sc + "{url: 'widget?x=1'}\n", nil},
		{"required", sc + "{connections: 2}\n", []string{
			`p.yaml:4:3: scenarios[0].websocket.url: required: a ws:// or wss:// URL, or a path relative to target`,
		}},
		{"http scheme", sc + "{url: 'http://h/w'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a ws:// or wss:// URL, such as "ws://h/w", not "http://h/w"`,
		}},
		{"https scheme", sc + "{url: 'HTTPS://h/w'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a ws:// or wss:// URL, such as "wss://h/w", not "HTTPS://h/w"`,
		}},
		{"other scheme", sc + "{url: 'ftp://h/w'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a ws:// or wss:// URL, not "ftp://h/w"`,
		}},
		{"no scheme", sc + "{url: 'h:3000/w'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a ws:// or wss:// URL, such as "ws://h:3000/w", not "h:3000/w"`,
		}},
		{"no host", sc + "{url: 'ws:///w'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a URL with a host, such as ws://127.0.0.1:3000, not "ws:///w"`,
		}},
		{"fragment", sc + "{url: '/w#top'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a WebSocket URL without #fragment, not "ws://h/w#top"`,
		}},
		{"not a URL", sc + "{url: 'ws://[::1/w'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: want a valid URL, not "ws://[::1/w": missing ']' in host`,
		}},
		{"relative without target", "load: {rates: [1]}\nscenarios:\n- websocket: {url: /w}\n", []string{
			`p.yaml:3:20: scenarios[0].websocket.url: "/w" is relative: set target (e.g. http://127.0.0.1:3000) or give a ws:// or wss:// URL`,
		}},
		{"relative with a bad target", "target: ftp://h\nload: {rates: [1]}\nscenarios:\n- websocket: {url: /w}\n", []string{
			`p.yaml:1:9: target: want an http:// or https:// URL, not "ftp://h"`,
		}},
		{"a template", sc + "{url: '/w?site={{.user.site}}&n={{randInt 1}}'}\n", []string{
			`p.yaml:4:20: scenarios[0].websocket.url: template reads .user.site but data.users is not set: .user.<column> is a column of the virtual user's row in that file`,
			`p.yaml:4:20: scenarios[0].websocket.url: randInt takes 2 arguments, not 1, e.g. {{randInt 1 100}}`,
		}},
	})
}

func TestWebSocketFrameRules(t *testing.T) {
	sc := head + "vars: {msgid: '{{uuid}}'}\nscenarios:\n- websocket: {url: /w, "
	runParseCases(t, []parseCase{
		{"send reads vars, vu and iteration", sc + "send: '{{.msgid}}-{{.vu}}-{{.iteration}}', ack: {regex: '^([^-]+)'}}\n", nil},
		{"connections", sc + "connections: -1}\n- websocket: {url: /x, connections: 1000001}\n", []string{
			`p.yaml:5:37: scenarios[0].websocket.connections: want 0 (the default, 1) or more connections, not -1`,
			`p.yaml:6:37: scenarios[1].websocket.connections: want at most 1000000 connections, not 1000001`,
		}},
		{"send is a template", sc + "send: '{{.msgd}}', ack: {json: id}}\n", []string{
			`p.yaml:5:30: scenarios[0].websocket.send: template reads .msgd, which is not set (did you mean .msgid?); known: .vu, .iteration, .msgid`,
		}},
		{"send needs ack", sc + "send: hi}\n", []string{
			`p.yaml:5:3: scenarios[0].websocket.ack: required with send: how to recognise the frame that acknowledges a sent one, e.g. {json: clientId}`,
		}},
		{"ack needs a matcher", sc + "send: hi, ack: {}}\n", []string{
			`p.yaml:5:34: scenarios[0].websocket.ack: want one of json or regex, e.g. {json: clientId}`,
		}},
		{"ack takes one matcher", sc + "send: hi, ack: {json: id, regex: 'id=(\\d+)'}}\n", []string{
			`p.yaml:5:57: scenarios[0].websocket.ack.regex: want one of json or regex, not both`,
		}},
		{"ack regex compiles", sc + "send: hi, ack: {regex: '(id'}}\n", []string{
			"p.yaml:5:47: scenarios[0].websocket.ack.regex: error parsing regexp: missing closing ): `(id`",
		}},
		{"ack_timeout not negative", sc + "send: hi, ack: {json: id}, ack_timeout: -1s}\n", []string{
			`p.yaml:5:64: scenarios[0].websocket.ack_timeout: want a non-negative duration such as "10s", not -1s`,
		}},
		{"idle soak waits for no ack", sc + "ack: {json: id}, ack_timeout: 0s}\n", []string{
			`p.yaml:5:24: scenarios[0].websocket.ack: an idle soak (no send) waits for no ack: remove ack, or set send`,
			`p.yaml:5:54: scenarios[0].websocket.ack_timeout: an idle soak (no send) waits for no ack: remove ack_timeout, or set send`,
		}},
		{"reject by json", sc + "send: hi, ack: {json: clientId}, reject: {json: ref}}\n", nil},
		{"reject by regex with a json ack", sc + "send: hi, ack: {json: clientId}, reject: {regex: '^rejected (\\S+)'}}\n", nil},
		{"reject needs a matcher", sc + "send: hi, ack: {json: id}, reject: {}}\n", []string{
			`p.yaml:5:51: scenarios[0].websocket.reject: want one of json or regex, e.g. {json: ref}`,
		}},
		{"reject takes one matcher", sc + "send: hi, ack: {json: id}, reject: {json: ref, regex: 'ref=(\\d+)'}}\n", []string{
			`p.yaml:5:78: scenarios[0].websocket.reject.regex: want one of json or regex, not both`,
		}},
		{"reject regex compiles", sc + "send: hi, ack: {json: id}, reject: {regex: '(ref'}}\n", []string{
			"p.yaml:5:67: scenarios[0].websocket.reject.regex: error parsing regexp: missing closing ): `(ref`",
		}},
		{"reject is not the ack", sc + "send: hi, ack: {json: id}, reject: {json: id}}\n", []string{
			`p.yaml:5:66: scenarios[0].websocket.reject.json: the same as ack, so every ack would count as a rejection: name where a rejection, and not an ack, carries the sent frame's id, e.g. {json: ref}, not "id"`,
		}},
		{"reject without an ack", sc + "send: hi, reject: {json: ref}}\n", []string{
			`p.yaml:5:3: scenarios[0].websocket.ack: required with send: how to recognise the frame that acknowledges a sent one, e.g. {json: clientId}`,
		}},
		{"idle soak has nothing to reject", sc + "reject: {json: ref}}\n", []string{
			`p.yaml:5:24: scenarios[0].websocket.reject: an idle soak (no send) waits for no ack: remove reject, or set send`,
		}},
		{"reject is a known key", sc + "send: hi, ack: {json: id}, rejects: {json: ref}}\n", []string{
			`p.yaml:5:51: scenarios[0].websocket.rejects: unknown key "rejects" (did you mean "reject"?)`,
		}},
		{"max_frame_bytes", sc + "max_frame_bytes: -1}\n", []string{
			`p.yaml:5:41: scenarios[0].websocket.max_frame_bytes: want 0 (1 MiB) or more, not -1`,
		}},
	})
}

func TestWebSocketHandshakeRules(t *testing.T) {
	sc := head + "scenarios:\n- websocket: {url: /w, "
	runParseCases(t, []parseCase{
		{"headers and subprotocols", sc + "headers: {Origin: 'http://h', X-Id: '{{uuid}}'}, subprotocols: [chat.v1, json]}\n", nil},
		{"header names and values", sc + "headers: {'A B': x, X-Id: '{{.id}}'}}\n", []string{
			`p.yaml:4:41: scenarios[0].websocket.headers.A B: header name "A B" must not contain spaces, colons or control characters`,
			`p.yaml:4:50: scenarios[0].websocket.headers.X-Id: template reads .id, which is not set; known: .vu, .iteration`,
		}},
		{"headers the handshake sets", sc + "headers: {upgrade: x, Sec-WebSocket-Key: k, Sec-WebSocket-Protocol: chat}}\n", []string{
			`p.yaml:4:43: scenarios[0].websocket.headers.upgrade: the WebSocket handshake sets upgrade itself`,
			`p.yaml:4:65: scenarios[0].websocket.headers.Sec-WebSocket-Key: the WebSocket handshake sets Sec-WebSocket-Key itself`,
		}},
		{"protocol header and subprotocols", sc + "headers: {Sec-WebSocket-Protocol: chat}, subprotocols: [chat]}\n", []string{
			`p.yaml:4:58: scenarios[0].websocket.headers.Sec-WebSocket-Protocol: give a websocket's subprotocols or a Sec-WebSocket-Protocol header, not both`,
		}},
		{"http.headers go with the handshake, reported once", "http: {headers: {Connection: close}}\n" + sc + "}\n- {name: b, websocket: {url: /w}}\n", []string{
			`p.yaml:1:30: http.headers.Connection: the WebSocket handshake sets Connection itself, and http.headers are sent with it too`,
		}},
		{"subprotocols", sc + "subprotocols: ['', 'a b', 'a,b', '\"q\"', ok]}\n", []string{
			`p.yaml:4:39: scenarios[0].websocket.subprotocols[0]: want a subprotocol name without spaces, commas or quotes, such as chat, not ""`,
			`p.yaml:4:43: scenarios[0].websocket.subprotocols[1]: want a subprotocol name without spaces, commas or quotes, such as chat, not "a b"`,
			`p.yaml:4:50: scenarios[0].websocket.subprotocols[2]: want a subprotocol name without spaces, commas or quotes, such as chat, not "a,b"`,
			`p.yaml:4:57: scenarios[0].websocket.subprotocols[3]: want a subprotocol name without spaces, commas or quotes, such as chat, not "\"q\""`,
		}},
	})
}

func TestWebSocketDefaults(t *testing.T) {
	yaml := head + "scenarios:\n- websocket: {url: '/widget?site=1', " + chat + "}\n- websocket: {url: 'ws://o/idle', connections: 10}\n"
	p, err := Parse("p.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("Parse() = %v", err)
	}
	want := []Scenario{
		{Name: "ws /widget?site=1", Weight: 1, WebSocket: &WebSocket{
			URL: "/widget?site=1", Connections: 1, Send: `{"type":"message","clientId":"{{uuid}}","text":"hi"}`,
			Ack: &Ack{JSON: "clientId"}, AckTimeout: dur(DefaultAckTimeout), MaxFrameBytes: DefaultMaxFrameBytes,
		}},
		{Name: "ws ws://o/idle", Weight: 1, WebSocket: &WebSocket{
			URL: "ws://o/idle", Connections: 10, MaxFrameBytes: DefaultMaxFrameBytes,
		}},
	}
	if diff := cmp.Diff(want, p.Scenarios); diff != "" {
		t.Errorf("Parse() scenarios mismatch (-want +got):\n%s", diff)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("second Validate() = %v, want nil", err)
	}
	if diff := cmp.Diff(want, p.Scenarios); diff != "" {
		t.Errorf("second Validate() changed the scenarios (-want +got):\n%s", diff)
	}
}

func TestWebSocketValidate(t *testing.T) {
	tests := []struct {
		name string
		ws   WebSocket
		want []string
	}{
		{"idle soak", WebSocket{URL: "/w"}, nil},
		{"chat", WebSocket{URL: "/w", Send: "{{uuid}}", Ack: &Ack{Regex: "(.*)"}, AckTimeout: dur(time.Second)}, nil},
		{"idle with ack_timeout", WebSocket{URL: "/w", AckTimeout: dur(time.Second)}, []string{
			`scenarios[0].websocket.ack_timeout: an idle soak (no send) waits for no ack: remove ack_timeout, or set send`,
		}},
		{"send without ack", WebSocket{URL: "/w", Send: "x"}, []string{
			`scenarios[0].websocket.ack: required with send: how to recognise the frame that acknowledges a sent one, e.g. {json: clientId}`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := flagPlan()
			p.Scenarios[0] = Scenario{WebSocket: &tt.ws}
			err := p.Validate()
			var got []string
			if err != nil {
				got = problemsOf(t, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() problems mismatch (-want +got):\n%s", diff)
			}
			if err == nil && p.Validate() != nil {
				t.Errorf("second Validate() = %v, want nil", p.Validate())
			}
		})
	}
}

func TestWebSocketURL(t *testing.T) {
	tests := []struct {
		name, target, url, want string
	}{
		{"absolute ignores target", "http://h", "wss://o/w", "wss://o/w"},
		{"http becomes ws", "http://h:3000", "/widget", "ws://h:3000/widget"},
		{"https becomes wss", "https://h/v1/", "chat", "wss://h/v1/chat"},
		{"scheme in capitals", "HTTPS://H", "/w", "wss://H/w"},
		{"query only", "http://h", "?site=1", "ws://h/?site=1"},
		{"template kept", "http://h", "/w?site={{.user.site}}", "ws://h/w?site={{.user.site}}"},
		{"no target", "", "ws://h/w", "ws://h/w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plan{Target: tt.target}
			if got := p.WebSocketURL(&WebSocket{URL: tt.url}); got != tt.want {
				t.Errorf("WebSocketURL(%q with target %q) = %q, want %q", tt.url, tt.target, got, tt.want)
			}
		})
	}
}

func TestWebSocketHeaders(t *testing.T) {
	p := &Plan{HTTP: HTTP{Headers: map[string]string{"User-Agent": "ceiling", "X-A": "1"}}}
	w := &WebSocket{Headers: map[string]string{"user-agent": "widget", "Origin": "http://h", "X-Id": "{{uuid}}"}}
	want := [][2]string{{"Origin", "http://h"}, {"user-agent", "widget"}, {"X-A", "1"}, {"X-Id", "{{uuid}}"}}
	if diff := cmp.Diff(want, p.WebSocketHeaders(w)); diff != "" {
		t.Errorf("WebSocketHeaders() mismatch (-want +got):\n%s", diff)
	}
	if got := (&Plan{}).WebSocketHeaders(&WebSocket{}); len(got) != 0 {
		t.Errorf("WebSocketHeaders() with none = %q, want empty", got)
	}
}
