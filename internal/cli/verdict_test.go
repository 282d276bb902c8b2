package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// A wrong URL is not an overloaded target: every request answered 404
// makes the step INVALID, saying so and what to check.
func TestWrongURLIsNotOverload(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Status: http.StatusNotFound})
	out := filepath.Join(t.TempDir(), "r.json")
	_, stdout, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL+"/nope", "--rate", "20", "--step", "300ms", "--warmup", "0s", "--out", out)
	if strings.Contains(stdout, "OVERLOADED") || !strings.Contains(stdout, "every request failed with 404 Not Found: check the URL") {
		t.Errorf("stdout should call the 404s a wrong request, not overload:\n%s\n%s", stdout, stderr)
	}
	if s := readResult(t, out).Steps[0]; s.Verdict != "INVALID" || s.Status4xx != 404 {
		t.Errorf("verdict %q, status_4xx %d; want INVALID, 404", s.Verdict, s.Status4xx)
	}
}

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

// Strict is the default: answers that came after a redirect (the login
// page every URL is sent to) make the step INVALID and fail the run, and
// the INVALID line says how to accept them. A plan that opts out
// (strict: false) keeps the verdict, passes, gives no hint to turn off
// what is off, and says it was not strict.
func TestRedirectTrapFailsUnlessOptedOut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/login" {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		w.Write([]byte("login"))
	}))
	defer srv.Close()
	for _, optOut := range []bool{false, true} {
		text := "target: " + srv.URL + "\nload: {rates: [20], step: 300ms, warmup: 0s}\nhttp: {follow_redirects: true}\nscenarios:\n  - request: {url: /dashboard}\n"
		if optOut {
			text += "strict: false\n"
		}
		out := filepath.Join(t.TempDir(), "r.json")
		code, stdout, _ := ceiling(t, context.Background(), "run", writePlan(t, text), "--out", out, "--quiet")
		if !strings.Contains(stdout, "INVALID step 1: ") {
			t.Fatalf("strict: false %v: no INVALID line:\n%s", optOut, stdout)
		}
		if got := strings.Contains(stdout, "set strict: false"); got == optOut {
			t.Errorf("strict: false %v: hint to set strict: false shown = %v:\n%s", optOut, got, stdout)
		}
		r := readResult(t, out)
		wantCode, wantVerdict, wantLine := ExitThreshold, results.Invalid, "FAILED: step 1 is INVALID"
		if optOut {
			wantCode, wantVerdict, wantLine = ExitOK, results.Healthy, "PASSED (not strict"
		}
		if code != wantCode || r.Steps[0].Verdict != wantVerdict || r.Passed != optOut || r.Outcome.Strict == optOut || !strings.Contains(stdout, wantLine) {
			t.Errorf("strict: false %v: exit %d, verdict %s, passed %v, outcome %+v; want exit %d, %s, %q:\n%s",
				optOut, code, r.Steps[0].Verdict, r.Passed, r.Outcome, wantCode, wantVerdict, wantLine, stdout)
		}
	}
}

// An idle soak sends nothing by design: its steps are judged on the
// sockets they held (it read "OVERLOADED (no exchange completed)"), and
// the table shows them. A server that drops every socket soon after it
// opens makes the step OVERLOADED, naming what was held.
func TestIdleSoakJudgedOnSockets(t *testing.T) {
	t.Parallel()
	for _, drop := range []bool{false, true} {
		var accepted atomic.Int32
		srv := httptest.NewServer(refuseAfter(drop, &accepted, testkit.WebSocket(websocket.Upgrader{}, func(c *websocket.Conn) {
			if drop {
				time.Sleep(50 * time.Millisecond)
				return
			}
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		})))
		plan := writePlan(t, "target: "+srv.URL+"\nload: {rates: [1], step: 500ms, warmup: 0s}\nscenarios:\n  - name: idle\n    websocket: {url: /, connections: 5}\n")
		out := filepath.Join(t.TempDir(), "r.json")
		_, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--out", out)
		srv.Close()
		s := readResult(t, out).Steps[0]
		want := "HEALTHY"
		if drop {
			want = "OVERLOADED"
		}
		if s.Verdict != want || strings.Contains(s.VerdictReason, "no exchange") {
			t.Errorf("drop %v: verdict %s (%s), want %s judged on sockets\n%s\n%s", drop, s.Verdict, s.VerdictReason, want, stdout, stderr)
		}
		if !drop && !strings.Contains(stdout, "5/5") {
			t.Errorf("the table does not show 5/5 sockets held:\n%s", stdout)
		}
		if drop && !strings.Contains(s.VerdictReason, "of 5 sockets open") {
			t.Errorf("reason %q does not say how many sockets were held", s.VerdictReason)
		}
	}
}

// refuseAfter hands the first five requests to h, and refuses the rest
// when drop is set: a dropping target that takes the first five sockets,
// closes them and refuses every socket after, so that none is open at the
// step's end however late a busy machine reopens them.
func refuseAfter(drop bool, accepted *atomic.Int32, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if drop && accepted.Add(1) > 5 {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A failed check names itself, the status and an excerpt of the body it
// failed on (not a body that mentions a token), per step.
func TestFailedCheckIsNamed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/secret" {
			w.Write([]byte(`{"ok":false,"token":"abc123"}`))
			return
		}
		if r.URL.Path == "/echo" { // an echo endpoint: the request's API key in the body
			w.Write([]byte(`{"ok":false,"headers":{"X-Api-Key":"abc123"}}`))
			return
		}
		w.Write([]byte(`{"ok":false,"why":"maintenance"}`))
	}))
	defer srv.Close()
	for path, want := range map[string]string{
		"/api":    `GET /api: json ok = true: got false; status 200, body "{\"ok\":false,\"why\":\"maintenance\"}"`,
		"/secret": `GET /secret: json ok = true: got false; status 200, body (not shown: it mentions a token`,
		"/echo":   `GET /echo: json ok = true: got false; status 200, body (not shown: it mentions a token`,
	} {
		plan := writePlan(t, "target: "+srv.URL+"\nload: {rates: [20], step: 300ms, warmup: 0s}\nscenarios:\n  - request: {url: "+path+"}\n    expect: {json: {ok: true}}\n")
		out := filepath.Join(t.TempDir(), "r.json")
		_, stdout, _ := ceiling(t, context.Background(), "run", plan, "--out", out, "--quiet")
		if !strings.Contains(stdout, want) || strings.Contains(stdout, "abc123") {
			t.Errorf("%s: stdout lacks %q (or shows the token):\n%s", path, want, stdout)
		}
	}
}
