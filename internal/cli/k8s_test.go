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

// `ceiling k8s` bounds both Jobs in time (a deadline, and a time to live
// once finished), adds a NetworkPolicy that lets only the coordinator
// reach the agents, and refuses what would not run in a cluster: no
// --image (none is published), a loopback target (in a pod, the pod
// itself). internal/k8s checks the objects field by field.
func TestK8sBoundsAndRefuses(t *testing.T) {
	t.Parallel()
	good := writePlan(t, "target: http://shop.shop.svc:8080\nload: {rates: [50], step: 30s}\nscenarios: [{request: {url: /}}]\n")
	ctx := context.Background()

	code, stdout, stderr := ceiling(t, ctx, "k8s", good, "--agents", "2", "--image", "ceiling:dev")
	if code != ExitOK {
		t.Fatalf("ceiling k8s = %d, %s", code, stderr)
	}
	for want, n := range map[string]int{"activeDeadlineSeconds: 7200\n": 2, "ttlSecondsAfterFinished: 86400\n": 2, "kind: NetworkPolicy\n": 1} {
		if got := strings.Count(stdout, want); got != n {
			t.Errorf("ceiling k8s printed %q %d times, want %d (a 2h deadline and a day's TTL on both Jobs, one policy):\n%s", want, got, n, stdout)
		}
	}
	code, stdout, stderr = ceiling(t, ctx, "k8s", good, "--agents", "2", "--image", "ceiling:dev", "--deadline", "1h", "--ttl", "30m", "--network-policy=false")
	if code != ExitOK || strings.Count(stdout, "activeDeadlineSeconds: 3600\n") != 2 || strings.Count(stdout, "ttlSecondsAfterFinished: 1800\n") != 2 ||
		strings.Contains(stdout, "NetworkPolicy") {
		t.Errorf("ceiling k8s --deadline 1h --ttl 30m --network-policy=false = %d (%s), want both Jobs bounded so, no policy:\n%s", code, stderr, stdout)
	}

	if code, _, stderr := ceiling(t, ctx, "k8s", good, "--agents", "2"); code != ExitBadInput || !strings.Contains(stderr, "image: required") {
		t.Errorf("ceiling k8s without --image = %d, %q; want 2: no image is published", code, stderr)
	}
	loopback := writePlan(t, "target: http://127.0.0.1:3000\nload: {rates: [50], step: 30s}\nscenarios: [{request: {url: /}}]\n")
	if code, _, stderr := ceiling(t, ctx, "k8s", loopback, "--agents", "2", "--image", "ceiling:dev"); code != ExitBadInput ||
		!strings.Contains(stderr, "plan.yaml:1:9: target: 127.0.0.1 is a loopback address") {
		t.Errorf("ceiling k8s of a loopback target = %d, %q; want 2 and where", code, stderr)
	}
}
