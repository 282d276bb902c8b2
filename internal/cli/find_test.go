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

// A target that redirects every page to /login is not an edge: the strict
// find fails at its start and says why.
func TestFindRedirectToLogin(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			w.Write([]byte("<form>log in</form>"))
			return
		}
		http.Redirect(w, r, "/login", http.StatusFound)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	// Followed, the redirect lands on a 200: the strict find must not call
	// that a healthy dashboard.
	code, stdout, _ := ceiling(t, context.Background(), "find", "--url", srv.URL+"/dashboard", "--follow-redirects", "--start", "20",
		"--max", "80", "--step", "300ms", "--warmup", "0s", "--out", out, "--quiet")
	r := readResult(t, out)
	if code != ExitThreshold || r.Edge != nil || !strings.Contains(stdout, "INVALID step 1") || !strings.Contains(stdout, "login page") {
		t.Errorf("exit %d, edge %+v:\n%s\nwant exit 1, no edge, and an INVALID line saying why", code, r.Edge, stdout)
	}
}

// A strict run fails (exit 1) on a validity finding, and says which.
func TestStrictRunFailsOnRedirects(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/login", http.StatusFound)
	}))
	defer srv.Close()
	plan := writePlan(t, "target: "+srv.URL+"\nload: {rates: [20], step: 300ms, warmup: 0s}\nstrict: true\nscenarios:\n  - request: {url: /dashboard}\n")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, _ := ceiling(t, context.Background(), "run", plan, "--out", out, "--quiet")
	if code != ExitThreshold || !strings.Contains(stdout, "INVALID step 1: ") || !strings.Contains(stdout, "redirects") {
		t.Errorf("exit %d, stdout:\n%s\nwant 1 with an INVALID line about redirects", code, stdout)
	}
}
