package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// A target that refuses every request (401) measures nothing: run says so
// before its first step and exits 1, SLO or not, since its step is
// INVALID; find stops at the preflight (exit 3) instead of searching level
// after level of refusals, and writes no step.
func TestRefusedRequestsFail(t *testing.T) {
	srv := testkit.NewTarget(t, testkit.TargetConfig{Status: http.StatusUnauthorized})
	dir := t.TempDir()
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL+"/api", "--rate", "20", "--step", "300ms", "--warmup", "0s", "--out", filepath.Join(dir, "run.json"))
	warning := "preflight: the target refused the request: GET " + srv.URL + "/api answered 401 Unauthorized: check the credentials"
	if code != ExitThreshold || !strings.HasPrefix(stderr, "ceiling: "+warning) {
		t.Errorf("run = exit %d, stderr:\n%s\nwant exit 1, and first of all %q", code, stderr, warning)
	}
	if r := readResult(t, filepath.Join(dir, "run.json")); r.Passed || len(r.Steps) != 1 || r.Steps[0].Verdict != results.Invalid {
		t.Errorf("run: passed %v, %d steps; want one INVALID step that fails the run\n%s", r.Passed, len(r.Steps), stdout)
	}
	before := srv.Hits()
	start := time.Now()
	code, stdout, stderr = ceiling(t, context.Background(), "find", "--url", srv.URL+"/api", "--start", "20", "--step", "300ms", "--warmup", "0s", "--out", filepath.Join(dir, "find.json"))
	if code != ExitCannotRun || !strings.Contains(stderr, warning) || !strings.Contains(stderr, "stopped before the first step") || srv.Hits()-before != 1 {
		t.Errorf("find = exit %d after %d requests in %v, stderr:\n%s\nwant exit 3 after the preflight's one, saying %q", code, srv.Hits()-before, time.Since(start), stderr, warning)
	}
	if stdout != "" {
		t.Errorf("find printed a table of nothing:\n%s", stdout)
	}
}
