package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// A wrong URL is not an overloaded target: every request answered 404
// makes the step INVALID, saying so and what to check.
func TestWrongURLIsNotOverload(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	_, stdout, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL+"/nope", "--rate", "20", "--step", "300ms", "--warmup", "0s", "--out", out)
	if strings.Contains(stdout, "OVERLOADED") || !strings.Contains(stdout, "every request failed with 404 Not Found: check the URL") {
		t.Errorf("stdout should call the 404s a wrong request, not overload:\n%s\n%s", stdout, stderr)
	}
	if s := readResult(t, out).Steps[0]; s.Verdict != "INVALID" || s.Status4xx != 404 {
		t.Errorf("verdict %q, status_4xx %d; want INVALID, 404", s.Verdict, s.Status4xx)
	}
}

// An INVALID line's hint to "set strict: false" is given only where strict
// is on: a run that is not strict (run's default) has nothing to turn off.
func TestStrictHintOnlyWhenStrict(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/login" {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		w.Write([]byte("login"))
	}))
	defer srv.Close()
	for _, strict := range []bool{false, true} {
		text := "target: " + srv.URL + "\nload: {rates: [20], step: 300ms, warmup: 0s}\nhttp: {follow_redirects: true}\nscenarios:\n  - request: {url: /dashboard}\n"
		if strict {
			text += "strict: true\n"
		}
		_, stdout, _ := ceiling(t, context.Background(), "run", writePlan(t, text), "--quiet")
		if !strings.Contains(stdout, "INVALID step 1: ") {
			t.Fatalf("strict %v: no INVALID line:\n%s", strict, stdout)
		}
		if got := strings.Contains(stdout, "set strict: false"); got != strict {
			t.Errorf("strict %v: hint to set strict: false shown = %v, want %v:\n%s", strict, got, strict, stdout)
		}
	}
}
