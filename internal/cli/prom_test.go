package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// --prom keeps the named metrics per step: a gauge's last/max/mean and a
// counter's rate.
func TestPrometheusPerStep(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintf(w, "# TYPE queue_depth gauge\nqueue_depth 7\n# TYPE hits_total counter\nhits_total %d\n# TYPE other gauge\nother 1\n", hits.Load())
			return
		}
		hits.Add(1)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL+"/x", "--rate", "100", "--step", "2500ms", "--warmup", "0s",
		"--prom", srv.URL+"/metrics", "--prom-metric", "queue_depth", "--prom-metric", "hits_total", "--out", out, "--quiet")
	r := readResult(t, out)
	if code != ExitOK && !(code == ExitThreshold && starved(t, r)) {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	tg := r.Steps[0].Target
	if tg == nil || tg.Samples < 2 {
		t.Fatalf("target = %+v, want scraped samples", tg)
	}
	q, h := tg.Metrics["queue_depth"], tg.Metrics["hits_total"]
	if q.Last != 7 || q.Max != 7 || q.Mean != 7 || q.Counter {
		t.Errorf("queue_depth = %+v, want a gauge of 7", q)
	}
	if !h.Counter || h.Rate < 60 || h.Rate > 140 {
		t.Errorf("hits_total = %+v, want a counter rising ≈ 100/s", h)
	}
	if _, ok := tg.Metrics["other"]; ok {
		t.Errorf("a metric not asked for was kept")
	}
}
