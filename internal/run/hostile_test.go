package run

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// A value taken from a response that holds a CR/LF is never written into a
// header (it would inject others): the request is not handed to the
// transport at all, its iteration fails as a check, and the step says why.
func TestInjectedHeaderIsRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var injected, api int
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			mu.Lock()
			for _, h := range req.Header {
				if strings.ContainsAny(h[0]+h[1], "\r\n") {
					injected++
				}
			}
			u, _ := url.Parse(req.URL)
			if u.Path == "/api" {
				api++
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			body := ""
			if u.Path == "/login" {
				body = `{"token":"abc\r\nX-Injected: yes"}`
			}
			status(req, out, 200, body)
		})
		p := parsePlan(t, `
target: http://127.0.0.1:1
load: {rates: [20], step: 1s, warmup: 0s}
scenarios:
  - name: api
    steps:
      - request: {method: POST, url: /login}
        extract: {token: {json: token}}
      - request: {url: /api, headers: {Authorization: "Bearer {{.token}}"}}
`)
		res, err := runPlan(t, p, Options{Exchanger: ex, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if injected != 0 || api != 0 {
			t.Errorf("the transport was handed %d headers holding a CR or LF, and %d requests with the token", injected, api)
		}
		s := res.Steps[0]
		warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "CR, LF or NUL") })
		if len(s.Scenarios) == 0 || s.Scenarios[0].Errors["check"] != 20 || !warned {
			t.Errorf("scenarios %+v, warnings %q; want the 20 iterations failed as check and a warning naming the CR/LF", s.Scenarios, s.Warnings)
		}
	})
}

// A target that sets a cookie of a new name with every answer cannot grow
// a user's Cookie header without end: the jar keeps a browser's bound of
// names, and the step says so.
func TestCookieJarBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n, longest := 0, ""
		ex := answering(func(req *transport.Request, out *transport.Outcome) {
			mu.Lock()
			for _, h := range req.Header {
				if strings.EqualFold(h[0], "Cookie") && len(h[1]) > len(longest) {
					longest = h[1]
				}
			}
			n++
			out.Header = fmt.Appendf(nil, "Set-Cookie: c%d=v\r\n", n)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			status(req, out, 200, "")
		})
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: {vus: [1], step: 1s, warmup: 0s}\nscenarios: [{request: {url: /}}]\n")
		res, err := runPlan(t, p, Options{Exchanger: ex, GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		s := res.Steps[0]
		if s.Completed < 500 {
			t.Fatalf("%d requests in the step, want about 1000: too few to fill the jar", s.Completed)
		}
		warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "cookies of new names were not stored") })
		if names := strings.Count(longest, "=v"); names != scenario.MaxCookies || len(longest) > 1000 || !warned {
			t.Errorf("longest Cookie header %d bytes of %d cookies, warnings %q; want %d cookies at most and a warning", len(longest), names, s.Warnings, scenario.MaxCookies)
		}
	})
}
