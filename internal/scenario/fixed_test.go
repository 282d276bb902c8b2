package scenario

import (
	"slices"
	"testing"
)

// Which plans the event loop can drive, and the hosts it looks up before
// the first step: plain http:// to hosts written out, the login's too.
func TestOnLoopAndOrigins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"relative URLs and a login elsewhere", `
target: http://127.0.0.1:8080
load: {rates: [1]}
login: [{request: {method: POST, url: "http://auth.test:9000/login"}}]
scenarios:
  - {request: {url: "/items/{{seq}}"}}
  - {request: {url: "http://127.0.0.1:8080/x?u={{uuid}}"}}
`, []string{"http://auth.test:9000", "http://127.0.0.1:8080"}},
		{"a templated host", `
target: http://127.0.0.1:8080
load: {rates: [1]}
scenarios: [{request: {url: "http://{{pick \"a\" \"b\"}}.test/"}}]
`, nil},
		{"https", `
target: https://127.0.0.1:8443
load: {rates: [1]}
scenarios: [{request: {url: /}}]
`, nil},
		{"a websocket scenario", `
target: http://127.0.0.1:8080
load: {rates: [1]}
scenarios:
  - {request: {url: /}}
  - {websocket: {url: /ws, connections: 1, send: hi, ack: {regex: hi}}}
`, nil},
	} {
		s := compile(t, tc.yaml)
		if got := s.Origins(); !slices.Equal(got, tc.want) || s.OnLoop() != (tc.want != nil) {
			t.Errorf("%s: origins %q, on the loop %v; want %q", tc.name, got, s.OnLoop(), tc.want)
		}
	}
}
