package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// planFile writes a plan's text to a file of the test's, plan.yaml, and
// returns its path.
func planFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --url, --method and --body on a plan of several scenarios are refused
// (exit 2, naming the flags): they used to patch its first scenario only.
func TestQuickRequestFlagsOnManyScenariosRefused(t *testing.T) {
	t.Parallel()
	plan := planFile(t, `
target: http://127.0.0.1:9
load: {rates: [10], step: 200ms}
scenarios:
  - request: {url: /a}
  - request: {url: /b}
`)
	for _, flag := range [][]string{{"--url", "/dashboard"}, {"--method", "POST"}, {"--body", "x"}} {
		args := append([]string{"run", plan, "--quiet", "--out", filepath.Join(t.TempDir(), "r.json")}, flag...)
		code, _, stderr := ceiling(t, context.Background(), args...)
		if code != ExitBadInput || !strings.Contains(stderr, flag[0]) || !strings.Contains(stderr, "2 scenarios") && !strings.Contains(stderr, "has 2") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message naming the flag and the scenarios", flag, code, stderr)
		}
	}
}

// --header goes on every request of the plan: each scenario, each step of
// a flow, and a websocket's opening handshake (it used to land on the
// first scenario's request, and on a websocket plan to make an error
// blamed on a plan line).
func TestQuickHeaderOnEveryRequest(t *testing.T) {
	t.Parallel()
	var with, without atomic.Int64
	mux := http.NewServeMux()
	count := func(r *http.Request) {
		if r.Header.Get("X-Team") == "blue" {
			with.Add(1)
		} else {
			without.Add(1)
		}
	}
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { count(r) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) { count(r) })
	echo := testkit.WebSocket(websocket.Upgrader{}, testkit.Echo)
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		count(r)
		echo.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	plan := planFile(t, fmt.Sprintf(`
target: %s
load: {rates: [40], step: 300ms, warmup: 0s}
scenarios:
  - request: {url: /a}
  - name: flow
    steps:
      - request: {url: /a}
      - request: {url: /b}
  - name: socket
    websocket:
      url: /ws
      connections: 2
      send: '{"id":"{{uuid}}"}'
      ack: {json: id}
`, srv.URL))
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := ceiling(t, context.Background(), "run", plan, "--header", "X-Team: blue", "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if with.Load() < 10 || without.Load() != 0 {
		t.Errorf("%d requests and handshakes with the header, %d without; want all with it", with.Load(), without.Load())
	}
}

// A closed-model run refuses rate>=, in run and in validate, as bad input
// (exit 2). Why, and the absolute throughput>= judged instead, are run's
// TestClosedModelRefusesRate and TestClosedModelThroughputFloor.
func TestClosedModelThresholds(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{})
	code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--vus", "2", "--step", "200ms", "--slo", "rate>=0.95", "--quiet", "--out", filepath.Join(t.TempDir(), "r.json"))
	if code != ExitBadInput || !strings.Contains(stderr, "throughput>=") {
		t.Errorf("closed model with rate>=0.95: exit %d, stderr %q; want 2, pointing to throughput>=", code, stderr)
	}
	plan := planFile(t, "target: "+srv.URL+"\nload: {vus: [2], step: 200ms}\nslo: rate>=0.95\nscenarios: [{request: {url: /}}]\n")
	if code, _, stderr := ceiling(t, context.Background(), "validate", plan); code != ExitBadInput || !strings.Contains(stderr, "plan.yaml:3:") {
		t.Errorf("validate: exit %d, stderr %q; want 2 naming the slo line", code, stderr)
	}
}
