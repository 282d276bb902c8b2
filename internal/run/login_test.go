package run

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// loginTarget is a fake target whose every path answers in a millisecond,
// except /login: each user's first login fails (503), its second times out
// (no answer within the plan's 1 s timeout), and its third succeeds with a
// token.
func loginTarget() *answers {
	var mu sync.Mutex
	tries := map[string]int{}
	return answering(func(req *transport.Request, out *transport.Outcome) {
		u, _ := url.Parse(req.URL)
		if u.Path != "/login" {
			time.Sleep(time.Millisecond)
			status(req, out, 200, `{"ok":true}`)
			return
		}
		email := u.Query().Get("email")
		mu.Lock()
		tries[email]++
		n := tries[email]
		mu.Unlock()
		switch n {
		case 1:
			time.Sleep(time.Millisecond)
			status(req, out, 503, "busy")
		case 2:
			time.Sleep(time.Second)
			out.Kind = transport.Timeout
		default:
			time.Sleep(time.Millisecond)
			status(req, out, 200, fmt.Sprintf(`{"token":"t-%s"}`, email))
		}
	})
}

// loginPlan is a plan of users users who log in, then call a fast
// endpoint; load is its load: line.
func loginPlan(t *testing.T, users int, load string) *plan.Plan {
	t.Helper()
	rows := []string{"email"}
	for i := range users {
		rows = append(rows, fmt.Sprintf("u%d@x.test", i))
	}
	path := filepath.Join(t.TempDir(), "users.csv")
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return parsePlan(t, `
target: http://127.0.0.1:1
load: %s
http: {timeout: 1s}
data: {users: %s}
login:
  - request: {method: POST, url: "/login?email={{.user.email}}"}
    extract: {token: {json: token}}
scenarios:
  - name: api
    request: {url: /api, headers: {Authorization: "Bearer {{.token}}"}}
`, load, path)
}

// Users whose logins fail and time out before they succeed: the step's
// latency, errors and verdict are the fast scenario's; the logins are in
// their own object (and line of the table), each failed one retried after
// a backoff and counted, at most one first attempt per user.
func TestLoginsApartFromTheStep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const users = 10
		p := loginPlan(t, users, fmt.Sprintf("{vus: [%d], think: 10ms, step: 3s, warmup: 0s}", users))
		res, err := runPlan(t, p, Options{Exchanger: loginTarget(), GoTimer: true})
		if err != nil || !res.Passed {
			t.Fatalf("Run = %v, passed %v; want passed", err, res.Passed)
		}
		s := res.Steps[0]
		if s.Failed != 0 || len(s.Errors) != 0 || s.Completed == 0 {
			t.Errorf("step: completed %d, failed %d %v; want the scenario's requests only, none failed", s.Completed, s.Failed, s.Errors)
		}
		if s.LatencyMS.P99 > 1.01 || s.LatencyMS.Max > 1.01 {
			t.Errorf("step p99 %v ms, max %v ms; want the fast endpoint's 1 ms, not the logins' 1 s timeouts", s.LatencyMS.P99, s.LatencyMS.Max)
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
		// Each user tries three times, but the preflight's login took one
		// user's first failure, outside the step.
		if l.Retried != 2*users-1 || l.Count != users+l.Retried {
			t.Errorf("logins: count %d, retried %d; want every failed login retried (%d), count = users + retried", l.Count, l.Retried, 2*users-1)
		}
		if l.ByClass["timeout"] != users || l.ByClass["http_5xx"] != users-1 || l.LatencyMS.Max < 1000 || l.LatencyMS.Max > 1001 || l.Histogram == "" {
			t.Errorf("logins by class %v, max %v ms, histogram %q; want %d timeouts and %d 5xx, a max at the 1 s timeout, a histogram", l.ByClass, l.LatencyMS.Max, l.Histogram, users, users-1)
		}
		if slices.ContainsFunc(s.Scenarios, func(b results.Breakdown) bool { return b.Name == "login" }) {
			t.Errorf("scenarios %+v: the logins are reported apart, not as a scenario", s.Scenarios)
		}
		warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "logins failed") })
		if text := table(t, res); !warned || !strings.Contains(text, "↳ login") {
			t.Errorf("warnings %q; want one saying logins failed, and a login line in the table:\n%s", s.Warnings, text)
		}
	})
}

// In the open model a worker's user logs in with the arrival it is handed;
// an arrival whose user has not logged in (its login failed, or it waits
// to retry) runs nothing: it is counted as skipped, not sent and not an
// error of the step. The arrivals skipped for want of a login keep the
// achieved rate under 95 %: the step is OVERLOADED, the run does not pass.
func TestOpenModelArrivalsWithoutLogin(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := loginPlan(t, 5, "{rates: [40], step: 3s, warmup: 0s, max_workers: 5}")
		res, err := runPlan(t, p, Options{Exchanger: loginTarget(), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Steps[0]
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
		if s.Verdict != results.Overloaded || res.Passed {
			t.Errorf("verdict %s (%s), passed %v; want OVERLOADED, not passed", s.Verdict, s.VerdictReason, res.Passed)
		}
	})
}
