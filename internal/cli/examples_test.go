package cli

import (
	"context"
	"path/filepath"
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
		scenarios []string
		tag       string
	}{
		{"mixed-api.yaml", []string{"messages.list", "instance.status", "messages.send"}, "project"},
		{"login-pages.yaml", []string{"landing", "dashboard", "billing"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			code, _, stderr := run(t, context.Background(), "run", filepath.Join("..", "..", "docs", "examples", tt.plan),
				"--target", srv.URL(), "--vus", "3", "--step", "500ms", "--warmup", "200ms", "--out", out, "--quiet")
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
			if tt.tag != "" && len(s.Tags[tt.tag]) == 0 {
				t.Errorf("no figures per %s: %v", tt.tag, s.Tags)
			}
		})
	}
}
