package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// capacityServer answers at most rate requests a second (a token bucket with
// a 20 ms burst) and 503 past it: a target whose capacity is known.
func capacityServer(t *testing.T, rate float64) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	tokens, last := rate*0.02, time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := time.Now()
		tokens = min(rate*0.02, tokens+now.Sub(last).Seconds()*rate)
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Exit 1 when even the start fails, with the reason.
func TestFindStartFails(t *testing.T) {
	t.Parallel()
	srv := capacityServer(t, 20)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, _ := ceiling(t, context.Background(), "find", "--url", srv.URL, "--start", "100",
		"--step", "400ms", "--warmup", "0s", "--slo", "errors<1%", "--out", out, "--quiet")
	if code == ExitThreshold && strings.Contains(stdout, "generator limit reached") {
		t.Skipf("this machine was too busy to hold 100/s (another test's load?), and said so:\n%s", stdout)
	}
	if code != ExitThreshold || !strings.Contains(stdout, "even the start, 100/s, fails: errors") {
		t.Errorf("exit %d, stdout:\n%s\nwant 1 and the reason", code, stdout)
	}
	if r := readResult(t, out); r.Edge != nil || r.Passed {
		t.Errorf("edge %+v, passed %v; want none", r.Edge, r.Passed)
	}
}
