package plan

import (
	"strings"
	"testing"
)

func TestMonitorRules(t *testing.T) {
	base := "target: http://127.0.0.1:9\nload: {rates: [1]}\nscenarios: [{request: {url: /}}]\n"
	tests := []struct {
		name, yaml string
		want       string // a substring of the problems, "" for valid
	}{
		{"pid", "monitor: {pid: 4242}\n", ""},
		{"command", "monitor: {command: ./server, env: {PORT: '9'}, dir: /tmp}\n", ""},
		{"cgroup", "monitor: {cgroup: /sys/fs/cgroup/cpu/app}\n", ""},
		{"prometheus", "monitor: {prometheus: {url: http://127.0.0.1:9/metrics, metrics: [queue_depth, 'http_requests_total{code=\"500\"}']}}\n", ""},
		{"pid and command", "monitor: {pid: 1, command: ./server}\n", "not both"},
		{"negative pid", "monitor: {pid: -3}\n", "want a process id"},
		{"env without command", "monitor: {pid: 1, env: {A: b}}\n", "only a command target"},
		{"pid and cgroup", "monitor: {pid: 1, cgroup: x}\n", "give pid or cgroup"},
		{"prometheus without metrics", "monitor: {prometheus: {url: http://127.0.0.1:9/metrics}}\n", "name the metrics"},
		{"bad metric", "monitor: {prometheus: {url: http://127.0.0.1:9/m, metrics: ['queue depth']}}\n", "want a metric name"},
		{"bad ready", "monitor: {command: ./s, ready: 'ftp://x'}\n", "monitor.ready"},
		{"unknown key", "monitor: {pidd: 1}\n", `did you mean "pid"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(base+tt.yaml))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Parse = %v, want valid", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Parse = %v, want a problem containing %q", err, tt.want)
			case tt.want == "" && tt.name == "command" && (p.Monitor.Ready != "http://127.0.0.1:9" || p.Monitor.ReadyTimeout.Duration != DefaultReadyTimeout):
				t.Errorf("command defaults: ready %q, timeout %v", p.Monitor.Ready, p.Monitor.ReadyTimeout)
			}
		})
	}
}
