package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// loginServer fails each user's first login (503 at once) and times out its
// second (it answers after hang, past the plan's timeout); the third
// succeeds. Every other path answers at once.
func loginServer(t *testing.T, hang time.Duration) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	tries := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/login" {
			w.Write([]byte(`{"ok":true}`))
			return
		}
		email := r.URL.Query().Get("email")
		mu.Lock()
		tries[email]++
		n := tries[email]
		mu.Unlock()
		switch n {
		case 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 2:
			select {
			case <-time.After(hang):
			case <-r.Context().Done():
			}
		default:
			fmt.Fprintf(w, `{"token":"t-%s"}`, email)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// loginPlan is a plan of users users who log in on srv, then call a fast
// endpoint; load is its load: line.
func loginPlan(t *testing.T, srv string, users int, load string) string {
	t.Helper()
	rows := []string{"email"}
	for i := range users {
		rows = append(rows, fmt.Sprintf("u%d@x.test", i))
	}
	path := filepath.Join(t.TempDir(), "users.csv")
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return writePlan(t, fmt.Sprintf(`
target: %s
load: %s
http: {timeout: 1s}
data: {users: %s}
login:
  - request: {method: POST, url: "/login?email={{.user.email}}"}
    extract: {token: {json: token}}
scenarios:
  - name: api
    request: {url: /api, headers: {Authorization: "Bearer {{.token}}"}}
`, srv, load, path))
}

// Users whose logins fail and time out before they succeed: the step's
// latency, errors and verdict are the fast scenario's; the logins are in
// their own object (and line of the table), each failed one retried after
// a backoff and counted, at most one first attempt per user.
func TestLoginsApartFromTheStep(t *testing.T) {
	long(t)
	const users = 10
	srv := loginServer(t, 3*time.Second)
	out := filepath.Join(t.TempDir(), "r.json")
	plan := loginPlan(t, srv.URL, users, fmt.Sprintf("{vus: [%d], think: 10ms, step: 3s, warmup: 0s}", users))
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--out", out)
	if code != ExitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	s := readResult(t, out).Steps[0]
	if s.Failed != 0 || len(s.Errors) != 0 || s.Completed == 0 {
		t.Errorf("step: completed %d, failed %d %v; want the scenario's requests only, none failed", s.Completed, s.Failed, s.Errors)
	}
	if s.LatencyMS.P99 >= 500 || s.LatencyMS.Max >= 900 {
		t.Errorf("step p99 %v ms, max %v ms; want the fast endpoint's, far below the logins' 1 s timeouts", s.LatencyMS.P99, s.LatencyMS.Max)
	}
	if slices.ContainsFunc(s.VerdictReasons, func(r string) bool { return strings.Contains(r, "errors") }) {
		t.Errorf("verdict %s %q: the logins' failures judged the step", s.Verdict, s.VerdictReasons)
	}
	l := s.Logins
	if l == nil {
		t.Fatalf("step has no logins object; scenarios %+v", s.Scenarios)
	}
	if l.OK != users || l.NotLoggedIn != 0 || l.Count != l.OK+l.Failed {
		t.Errorf("logins %+v: want %d ok, every user logged in, count = ok + failed", *l, users)
	}
	if l.Retried < users || l.Count > users+l.Retried {
		t.Errorf("logins: count %d, retried %d; want at least one retry per user and count ≤ users + retried", l.Count, l.Retried)
	}
	if l.ByClass["timeout"] == 0 || l.ByClass["http_5xx"] == 0 || l.LatencyMS.Max < 900 || l.Histogram == "" {
		t.Errorf("logins by class %v, max %v ms, histogram %q; want timeouts and 5xx, a max at the 1 s timeout, a histogram", l.ByClass, l.LatencyMS.Max, l.Histogram)
	}
	if slices.ContainsFunc(s.Scenarios, func(b results.Breakdown) bool { return b.Name == "login" }) {
		t.Errorf("scenarios %+v: the logins are reported apart, not as a scenario", s.Scenarios)
	}
	warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "logins failed") })
	if !warned || !strings.Contains(stdout, "↳ login") {
		t.Errorf("warnings %q; want one saying logins failed, and a login line in the table:\n%s", s.Warnings, stdout)
	}
}

// In the open model a worker's user logs in with the arrival it is handed;
// an arrival whose user has not logged in (its login failed, or it waits
// to retry) runs nothing: it is counted as skipped, not sent and not an
// error of the step.
func TestOpenModelArrivalsWithoutLogin(t *testing.T) {
	long(t)
	srv := loginServer(t, 3*time.Second)
	out := filepath.Join(t.TempDir(), "r.json")
	plan := loginPlan(t, srv.URL, 5, "{rates: [40], step: 3s, warmup: 0s, max_workers: 5}")
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--out", out, "--quiet")
	if code != ExitThreshold { // the arrivals skipped for want of a login: achieved under 95 %, OVERLOADED
		t.Fatalf("exit = %d, want 1; stderr:\n%s\n%s", code, stderr, stdout)
	}
	s := readResult(t, out).Steps[0]
	l := s.Logins
	if l == nil {
		t.Fatalf("step has no logins object")
	}
	if s.Failed != 0 || s.Sent != s.Completed || l.Skipped == 0 {
		t.Errorf("step: sent %d, completed %d, failed %d %v, skipped %d; want no failure, sent = completed, arrivals skipped for want of a login",
			s.Sent, s.Completed, s.Failed, s.Errors, l.Skipped)
	}
	if l.Count > int64(s.Workers)+l.Retried || l.OK > int64(s.Workers) {
		t.Errorf("logins %+v for %d workers: want count ≤ users + retried, ok ≤ users", *l, s.Workers)
	}
}
