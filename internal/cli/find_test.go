package cli

import (
	"context"
	"fmt"
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

// find on a target of known capacity finds it within the precision.
func TestFindKnownCapacity(t *testing.T) {
	long(t)
	// 200/s: the search goes no higher than 400/s, which a race-enabled
	// build on a busy 2-core machine still drives.
	srv := capacityServer(t, 200)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", "--url", srv.URL, "--start", "50", "--precision", "10%",
		"--step", "600ms", "--warmup", "200ms", "--slo", "errors<1%", "--out", out, "--quiet")
	if code != ExitOK {
		if strings.Contains(stdout, "generator limit reached") {
			t.Skipf("this machine was too busy to hold the rates (another test's load?):\n%s", stdout)
		}
		t.Fatalf("exit = %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Edge == nil || r.Edge.Rate < 200*0.85 || r.Edge.Rate > 200*1.02 || !r.Passed {
		t.Fatalf("edge = %+v (passed %v), want ≈ 200/s within 10%%; steps %d", r.Edge, r.Passed, len(r.Steps))
	}
	if !strings.Contains(stdout, "edge: ") || !strings.Contains(stdout, "fails: errors") {
		t.Errorf("no one-line answer naming the failure:\n%s", stdout)
	}
	confirm := r.Steps[r.Edge.Step]
	if confirm.TargetRate != r.Edge.Rate || confirm.SLOPassed == nil || !*confirm.SLOPassed {
		t.Errorf("edge step %d = %v/s, slo %v; want the confirming step at the edge", r.Edge.Step, confirm.TargetRate, confirm.SLOPassed)
	}
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

// In the closed model find searches numbers of users: a target that serves
// 6 requests at a time and refuses the 7th has its edge at 6 users.
func TestFindUsers(t *testing.T) {
	long(t)
	slots := make(chan struct{}, 6)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			time.Sleep(5 * time.Millisecond)
			<-slots
			w.Write([]byte("ok"))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", "--url", srv.URL, "--vus", "1", "--start", "1",
		"--step", "400ms", "--warmup", "100ms", "--slo", "errors<1%", "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Edge == nil || r.Edge.VUs != 6 {
		t.Errorf("edge = %+v, want 6 users:\n%s", r.Edge, stdout)
	}
}

// find --repeat 3 runs each probe three times, with new users each time:
// a level passes in the majority, and the answer says in how many.
func TestFindRepeats(t *testing.T) {
	long(t)
	srv := capacityServer(t, 200)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", "--url", srv.URL, "--start", "50", "--max", "400", "--precision", "30%",
		"--step", "400ms", "--warmup", "100ms", "--slo", "errors<1%", "--repeat", "3", "--out", out, "--quiet")
	if code != ExitOK {
		if strings.Contains(stdout, "generator limit reached") {
			t.Skipf("this machine was too busy to hold the rates:\n%s", stdout)
		}
		t.Fatalf("exit = %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Edge == nil || r.Edge.Rate > 200*1.02 {
		t.Fatalf("edge = %+v, want at most the target's 200/s", r.Edge)
	}
	for i, s := range r.Steps {
		if s.Repeat == nil || s.Repeat.N != 3 {
			t.Errorf("step %d: repeat %+v, want 3 repeats", i+1, s.Repeat)
		}
	}
	edge := r.Steps[r.Edge.Step].Repeat
	if want := fmt.Sprintf("(passed in %d of 3 repeats)", edge.Passed); !strings.Contains(stdout, want) || edge.Passed < 2 {
		t.Errorf("answer lacks %q, or the edge passed in fewer than 2 of 3:\n%s", want, stdout)
	}
}
