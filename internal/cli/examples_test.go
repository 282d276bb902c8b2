package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/demo"
)

// The example plans run against the built-in demo target, every scenario
// succeeds, and the figures are broken down as the plans ask.
func TestExamplePlans(t *testing.T) {
	srv, err := demo.Start(demo.Config{SendLimit: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tests := []struct {
		plan      string
		load      []string
		scenarios []string
		tag       string
	}{
		{"mixed-api.yaml", []string{"--vus", "3"}, []string{"messages.list", "instance.status", "messages.send"}, "project"},
		{"login-pages.yaml", []string{"--vus", "3"}, []string{"landing", "dashboard", "billing"}, ""},
		{"widget.yaml", []string{"--rate", "200"}, []string{"widget"}, ""},
		{"idle-sockets.yaml", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", filepath.Join("..", "..", "docs", "examples", tt.plan),
				"--target", srv.URL(), "--step", "500ms", "--warmup", "200ms", "--out", out, "--quiet"}, tt.load...)
			code, _, stderr := ceiling(t, context.Background(), args...)
			if code != ExitOK {
				t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
			}
			s := readResult(t, out).Steps[0]
			if len(s.Scenarios) < len(tt.scenarios) {
				t.Fatalf("scenarios = %+v, want %v", s.Scenarios, tt.scenarios)
			}
			for i, name := range tt.scenarios {
				b := s.Scenarios[i]
				if b.Name != name || b.Completed == 0 || b.Failed != 0 {
					t.Errorf("scenario %d = %s: %d completed, %d failed %v; want %s with no failure", i, b.Name, b.Completed, b.Failed, b.Errors, name)
				}
			}
			if ws := s.WebSocket; strings.Contains(tt.plan, "sockets") && (ws == nil || ws.Open != 2000 || len(s.Warnings) != 0 || s.Sent != 0) {
				t.Errorf("idle soak: sockets %+v, warnings %q; want 2000 open and no warning", ws, s.Warnings)
			}
			if tt.tag != "" && len(s.Tags[tt.tag]) == 0 {
				t.Errorf("no figures per %s: %v", tt.tag, s.Tags)
			}
		})
	}
}
