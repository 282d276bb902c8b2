package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/run"
)

func TestParseTargets(t *testing.T) {
	for _, s := range []string{"10.0.0.0/8,*.svc", " shop.example , 10.1.2.3 ", "::1,fd00::/8,[::2]", "Shop.Example.", ""} {
		if _, err := ParseTargets(s); err != nil {
			t.Errorf("ParseTargets(%q) = %v, want it read", s, err)
		}
	}
	tests := map[string]string{
		"10.0.0.0/33":         "not a network",
		"shop.example:8080":   "a port is not part of it",
		"*":                   "want a network",
		"a.*.svc":             `'*' in a host name`,
		"2130706433":          "an address written otherwise",
		"0x7f.1":              "an address written otherwise",
		",,":                  "no entry",
		"10.0.0.0/8,bad host": `' ' in a host name`,
	}
	for s, want := range tests {
		if _, err := ParseTargets(s); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-targets") {
			t.Errorf("ParseTargets(%q) = %v, want an error saying %q", s, err, want)
		}
	}
}

func TestTargetsAllows(t *testing.T) {
	list, err := ParseTargets("10.0.0.0/8,*.svc,shop.example,::1,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{
		"10.1.2.3": true, "10.255.0.1": true, "11.0.0.1": false, "127.0.0.1": false,
		"::ffff:10.0.0.1": true, "::1": true, "fd00::5": true, "fe80::1%eth0": false, "::2": false,
		"api.shop.svc": true, "API.SHOP.SVC.": true, "svc": false, "evil-svc": false, "svc.evil": false,
		"shop.example": true, "www.shop.example": false, "localhost": false,
		"2130706433": false, "0x0a.1": false,
	}
	for host, want := range tests {
		if got := list.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
	if !(Targets{}).Allows("anything.example") {
		t.Error("the zero Targets refuses a host, want every host allowed")
	}
}

func TestFixedHost(t *testing.T) {
	tests := []struct {
		raw, host string
		ok        bool
	}{
		{"http://shop.svc:8080/api/{{.id}}", "shop.svc", true},
		{"https://[::1]:443/", "::1", true},
		{"ws://10.0.0.1/widget?site={{.user.site}}", "10.0.0.1", true},
		{"http://user:pw@10.0.0.1/", "10.0.0.1", true},
		{"http://{{.user.host}}/", "", false},
		{"http://shop.svc{{.x}}/", "", false},
		{"http://shop.svc:{{.port}}/", "", false},
		{"{{.scheme}}://shop.svc/", "", false},
		{`http://a{{"/"}}b/`, "", false},
		{"{{.a}}:{{.b}}", "", false},
		{"/relative", "", false},
	}
	for _, tt := range tests {
		if host, ok := fixedHost(tt.raw); host != tt.host || ok != tt.ok {
			t.Errorf("fixedHost(%q) = %q, %v; want %q, %v", tt.raw, host, ok, tt.host, tt.ok)
		}
	}
}

// An agent warns when it listens beyond loopback without TLS, and only
// then.
func TestExposed(t *testing.T) {
	tests := []struct {
		ip   string
		tls  bool
		warn bool
	}{
		{"127.0.0.1", false, false},
		{"::1", false, false},
		{"0.0.0.0", false, true},
		{"::", false, true},
		{"10.0.0.5", false, true},
		{"10.0.0.5", true, false},
	}
	for _, tt := range tests {
		w := exposed(&net.TCPAddr{IP: net.ParseIP(tt.ip), Port: 7070}, tt.tls)
		if (w != "") != tt.warn || tt.warn && !strings.Contains(w, "without TLS") {
			t.Errorf("exposed(%s, tls %v) = %q, want a warning: %v", tt.ip, tt.tls, w, tt.warn)
		}
	}
}

// An agent with --allow-targets refuses, before it sends a request, a
// plan that sends load to a host outside its list, or to a host it
// cannot check (a template, redirects followed), naming every such URL;
// it opens a plan whose every URL is allowed.
func TestAgentAllowTargets(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	only := func(list string) string {
		allow, err := ParseTargets(list)
		if err != nil {
			t.Fatal(err)
		}
		return agent(t, &Server{AllowTargets: allow})
	}
	outside := only("10.0.0.0/8,*.svc")
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"the target outside", "", []string{"target: 127.0.0.1 is outside this agent's --allow-targets 10.0.0.0/8,*.svc"}},
		{"a request elsewhere", "  - request: {url: 'http://api.shop.svc/x'}\n  - request: {url: 'http://evil.example/y'}\n",
			[]string{"scenarios[2].request.url: evil.example is outside", "target: 127.0.0.1"}},
		{"a templated host", "  - request: {url: 'http://{{uuid}}.svc/x'}\n", []string{"scenarios[1].request.url", "its host is a template"}},
	}
	for _, tt := range tests {
		p := quickPlan(t, srv.URL, "")
		if tt.extra != "" {
			p = planText(t, "target: "+srv.URL+"\nload: {rates: [50], step: 300ms, warmup: 100ms}\nscenarios:\n  - request: {url: /}\n"+tt.extra)
		}
		_, err := connect(t, p, token, outside)
		var bad *failure.InputError
		if !errors.As(err, &bad) {
			t.Errorf("%s: %v, want refused as bad input", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", tt.name, err, w)
			}
		}
	}
	p := quickPlan(t, srv.URL, "")
	p.HTTP.FollowRedirects = true
	if _, err := connect(t, p, token, only("127.0.0.1")); err == nil || !strings.Contains(err.Error(), "http.follow_redirects") {
		t.Errorf("redirects followed: %v, want refused", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the target got %d requests from refused plans, want none (refused before the check of the target)", n)
	}
	c, err := connect(t, quickPlan(t, srv.URL, ""), token, only("127.0.0.1,*.svc"))
	if err != nil {
		t.Fatalf("a plan whose every URL is allowed: %v", err)
	}
	defer c.Close()
	if res, _, err := c.Step(context.Background(), run.Level(quickPlan(t, srv.URL, ""), 20)); err != nil || res.Sent == 0 {
		t.Errorf("its step: sent %d, %v", res.Sent, err)
	}
}
