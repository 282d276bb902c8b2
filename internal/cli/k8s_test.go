package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestK8sPrints checks the wiring of `ceiling k8s`: the objects on stdout,
// where the token is on stderr, and bad input as exit 2. internal/k8s tests
// the objects themselves; --apply needs a cluster and is not run here.
func TestK8sPrints(t *testing.T) {
	t.Parallel()
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("target: http://shop:8080\nload: {rates: [50]}\nscenarios: [{request: {url: /}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := ceiling(t, context.Background(), "k8s", plan, "--agents", "2", "--name", "shop", "--image", "ceiling:dev", "--find", "--", "--start", "50")
	if code != ExitOK || strings.Count(stdout, "\n---\n") != 5 || !strings.Contains(stdout, "shop-agents-1.shop-agents:7070") ||
		!strings.Contains(stdout, "- find\n") || !strings.Contains(stdout, "- --start\n") {
		t.Errorf("ceiling k8s = %d, stdout %q, want 0 and six objects: the coordinator finds from 50 with shop-agents-0 and -1", code, stdout)
	}
	if !strings.Contains(stderr, "secret/shop-token") {
		t.Errorf("stderr = %q, want where the token is", stderr)
	}
	if code, _, stderr := ceiling(t, context.Background(), "k8s", plan); code != ExitBadInput || !strings.Contains(stderr, "agents: want 1 or more") {
		t.Errorf("ceiling k8s without --agents = %d, %q; want 2 and why", code, stderr)
	}
}
