package k8s

import "testing"

func TestLoopbackHost(t *testing.T) {
	tests := []struct {
		url  string
		host string // "" for a host the pods may reach
	}{
		{"http://127.0.0.1:3000", "127.0.0.1"},
		{"http://127.255.0.9/x", "127.255.0.9"},
		{"http://[::1]:8080/", "::1"},
		{"http://localhost", "localhost"},
		{"http://LOCALHOST.:80", "LOCALHOST."},
		{"ws://api.localhost/ws", "api.localhost"},
		{"http://0.0.0.0:3000", "0.0.0.0"},
		{"http://[::]:3000", "::"},
		{"http://127.0.0.1:3000/{{uuid}}", "127.0.0.1"},
		{"http://shop.shop.svc:8080", ""},
		{"https://10.0.0.5", ""},
		{"http://127.example.com", ""},
		{"http://localhost.example.com", ""},
		{"http://{{.user.host}}:3000/", ""},
		{"/api/orders", ""},
		{"", ""},
		{"http://[::1", ""}, // does not parse: the plan's own validation says so
	}
	for _, tt := range tests {
		host, ok := loopbackHost(tt.url)
		if ok != (tt.host != "") || ok && host != tt.host {
			t.Errorf("loopbackHost(%q) = %q, %v; want %q, %v", tt.url, host, ok, tt.host, tt.host != "")
		}
	}
}
