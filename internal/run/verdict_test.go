package run

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// A wrong URL is not an overloaded target: a step whose every request is
// answered 404 is INVALID, saying so and what to check, and the table
// never calls it OVERLOADED.
func TestWrongURLIsInvalid(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			time.Sleep(time.Millisecond)
			status(req, out, http.StatusNotFound, "")
		})
		res, err := runPlan(t, quickPlan(t, "", 300*time.Millisecond, 0, 20), Options{Exchanger: ex, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Steps[0]
		const why = "every request failed with 404 Not Found: check the URL"
		if s.Verdict != results.Invalid || s.Status4xx != 404 || !strings.Contains(s.VerdictReason, why) || res.Passed {
			t.Errorf("verdict %s (%s), status_4xx %d, passed %v; want INVALID saying %q, 404, not passed", s.Verdict, s.VerdictReason, s.Status4xx, res.Passed, why)
		}
		if text := table(t, res); strings.Contains(text, "OVERLOADED") || !strings.Contains(text, why) {
			t.Errorf("the table should call the 404s a wrong request, not overload:\n%s", text)
		}
	})
}

// A redirect the scenario does not expect is a failure, and a strict run's
// finding: answers that are all redirects (not followed) count none ok,
// are warned about, fail errors<1% and make the step INVALID, which the
// table says.
func TestRedirectsAreFailures(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			time.Sleep(time.Millisecond)
			status(req, out, http.StatusFound, "")
		})
		res, err := runPlan(t, quickPlan(t, "errors<1%", 300*time.Millisecond, 0, 20), Options{Exchanger: ex, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Steps[0]
		if s.OK != 0 || s.Completed == 0 || s.Errors["redirect"] != s.Completed || res.Passed || res.Thresholds[0].OK {
			t.Errorf("ok %d of %d, errors %v, passed %v, thresholds %+v; want every answer a redirect failure, errors<1%% failed", s.OK, s.Completed, s.Errors, res.Passed, res.Thresholds)
		}
		if !strings.Contains(strings.Join(s.Warnings, "\n"), "responses were redirects (3xx), counted as failures") {
			t.Errorf("warnings %q, want the redirects said", s.Warnings)
		}
		if text := table(t, res); s.Verdict != results.Invalid || !strings.Contains(text, "INVALID step 1: ") || !strings.Contains(text, "redirects") {
			t.Errorf("verdict %s; want INVALID with a line about redirects:\n%s", s.Verdict, text)
		}
	})
}

// Strict is the default: answers that came after a redirect (the login
// page every URL is sent to) make the step INVALID and fail the run, and
// the INVALID line says how to accept them. A plan that opts out (strict:
// false) keeps the verdict, passes, gives no hint to turn off what is
// off, and says it was not strict. A search, strict always, finds no edge
// there and says why. Against a real server: that an answer came after a
// redirect is the transport's to tell.
func TestRedirectTrapIsInvalidUnlessOptedOut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/login" {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		w.Write([]byte("<form>log in</form>"))
	}))
	defer srv.Close()
	text := "target: " + srv.URL + "\nload: {rates: [20], step: 300ms, warmup: 0s}\nhttp: {follow_redirects: true}\nscenarios:\n  - request: {url: /dashboard}\n"
	for _, optOut := range []bool{false, true} {
		p := parsePlan(t, "%s%s", text, map[bool]string{true: "strict: false\n"}[optOut])
		res, err := runPlan(t, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		table := table(t, res)
		if !strings.Contains(table, "INVALID step 1: ") {
			t.Fatalf("strict: false %v: no INVALID line:\n%s", optOut, table)
		}
		if got := strings.Contains(table, "set strict: false"); got == optOut {
			t.Errorf("strict: false %v: hint to set strict: false shown = %v:\n%s", optOut, got, table)
		}
		wantVerdict, wantLine := results.Invalid, "FAILED: step 1 is INVALID"
		if optOut {
			wantVerdict, wantLine = results.Healthy, "PASSED (not strict"
		}
		if res.Steps[0].Verdict != wantVerdict || res.Passed != optOut || res.Outcome.Strict == optOut || !strings.Contains(table, wantLine) {
			t.Errorf("strict: false %v: verdict %s, passed %v, outcome %+v; want %s, %q:\n%s", optOut, res.Steps[0].Verdict, res.Passed, res.Outcome, wantVerdict, wantLine, table)
		}
	}
	p := parsePlan(t, "%s", text)
	cfg, err := (&SearchFlags{Start: "20", Max: "80", Precision: "5%"}).Config(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), p, Options{RefusedStops: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := Find(context.Background(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if text := table(t, res); res.Edge != nil || res.Passed || !strings.Contains(text, "INVALID step 1") || !strings.Contains(text, "login page") {
		t.Errorf("find: edge %+v, passed %v:\n%s\nwant no edge, and an INVALID line saying why", res.Edge, res.Passed, text)
	}
}

// idleTarget is a fake websocket target whose sockets stay open until
// closed, sending nothing; with drop set, it takes the first five
// sockets, closes each 50 ms after it opened, and refuses every socket
// after them (503), so that none is open at the step's end.
type idleTarget struct {
	drop   bool
	dialed atomic.Int32
}

func (d *idleTarget) Dial(context.Context, transport.SocketConfig) (transport.Socket, error) {
	if d.drop && d.dialed.Add(1) > 5 {
		return nil, &transport.HandshakeError{Status: http.StatusServiceUnavailable}
	}
	s := &held{closed: make(chan struct{})}
	if d.drop {
		time.AfterFunc(50*time.Millisecond, func() { s.Close() })
	}
	return s, nil
}

// held is one socket of idleTarget.
type held struct {
	once   sync.Once
	closed chan struct{}
}

func (h *held) WriteText([]byte) error { return nil }
func (h *held) Read() ([]byte, error)  { <-h.closed; return nil, io.EOF }
func (h *held) Close() error           { h.once.Do(func() { close(h.closed) }); return nil }

// An idle soak sends nothing by design: its steps are judged on the
// sockets they held (it read "OVERLOADED (no exchange completed)"), and
// the table shows them. A target that drops every socket soon after it
// opens makes the step OVERLOADED, naming what was held.
func TestIdleSoakJudgedOnSockets(t *testing.T) {
	t.Parallel()
	for _, drop := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			p := parsePlan(t, "target: http://127.0.0.1:1\nload: {rates: [1], step: 500ms, warmup: 0s}\nscenarios:\n  - name: idle\n    websocket: {url: /, connections: 5}\n")
			res, err := runPlan(t, p, Options{Exchanger: newServer(1, 0), Dialer: &idleTarget{drop: drop}, GoTimer: true})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Steps[0]
			want := results.Healthy
			if drop {
				want = results.Overloaded
			}
			if s.Verdict != want || strings.Contains(s.VerdictReason, "no exchange") {
				t.Errorf("drop %v: verdict %s (%s), want %s judged on sockets", drop, s.Verdict, s.VerdictReason, want)
			}
			if text := table(t, res); !drop && !strings.Contains(text, "5/5") {
				t.Errorf("the table does not show 5/5 sockets held:\n%s", text)
			}
			if drop && !strings.Contains(s.VerdictReason, "of 5 sockets open") {
				t.Errorf("reason %q does not say how many sockets were held", s.VerdictReason)
			}
		})
	}
}

// A failed check names itself, the status and an excerpt of the body it
// failed on, per step, in the table and in result.json; a body that
// mentions a token (a secret field, or an echo of the request's API key)
// is not shown.
func TestFailedCheckIsNamed(t *testing.T) {
	t.Parallel()
	bodies := map[string]string{
		"/api":    `{"ok":false,"why":"maintenance"}`,
		"/secret": `{"ok":false,"token":"abc123"}`,
		"/echo":   `{"ok":false,"headers":{"X-Api-Key":"abc123"}}`,
	}
	for path, want := range map[string]string{
		"/api":    `GET /api: json ok = true: got false; status 200, body "{\"ok\":false,\"why\":\"maintenance\"}"`,
		"/secret": `GET /secret: json ok = true: got false; status 200, body (not shown: it mentions a token`,
		"/echo":   `GET /echo: json ok = true: got false; status 200, body (not shown: it mentions a token`,
	} {
		synctest.Test(t, func(t *testing.T) {
			ex := answering(func(req *transport.Request, out *transport.Outcome) {
				u, _ := url.Parse(req.URL)
				time.Sleep(time.Millisecond)
				status(req, out, http.StatusOK, bodies[u.Path])
			})
			p := parsePlan(t, "target: http://127.0.0.1:1\nload: {rates: [20], step: 300ms, warmup: 0s}\nscenarios:\n  - request: {url: %s}\n    expect: {json: {ok: true}}\n", path)
			res, err := runPlan(t, p, Options{Exchanger: ex, GoTimer: true})
			if err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(res)
			if text := table(t, res); !strings.Contains(text, want) || strings.Contains(text, "abc123") || strings.Contains(string(data), "abc123") {
				t.Errorf("%s: the table lacks %q (or the table or result.json shows the token):\n%s", path, want, text)
			}
		})
	}
}
