package run

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The tests of websocket scenarios against servers on loopback: what a
// frame and its ack are is the wire's.

// widgetServer acks every {"clientId"} frame after 2 ms on /widget, and
// answers GET /api with 200.
func widgetServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	ack := testkit.Ack{Delay: 2 * time.Millisecond, Reply: `{"clientId":%q,"saved":true}`}
	mux.Handle("/widget", testkit.WebSocket(websocket.Upgrader{}, ack.Serve))
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Frames at a rate spread over 100 held sockets: the rate is held, every
// frame is acked, and the latency is the server's ack delay.
func TestWebSocketRateOver100Sockets(t *testing.T) {
	t.Parallel()
	p := parsePlan(t, `
target: %s
load: {rates: [400], step: 1s, warmup: 200ms}
scenarios:
  - name: widget
    websocket:
      url: /widget
      connections: 100
      send: '{"type":"message","clientId":"{{uuid}}","text":"hi"}'
      ack: {json: clientId}
      ack_timeout: 2s
`, widgetServer(t).URL)
	res, err := runPlan(t, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	passedOrBusy(t, res)
	s := res.Steps[0]
	if s.AchievedRate < 390 || s.AchievedRate > 410 || s.Failed != 0 {
		t.Errorf("achieved %v/s with %d failed %v, want 400/s and none", s.AchievedRate, s.Failed, s.Errors)
	}
	if s.LatencyMS.P50 < 2 || s.LatencyMS.P50 > 20 {
		t.Errorf("p50 = %v ms, want ≈ the 2 ms ack delay", s.LatencyMS.P50)
	}
	if s.WebSocket == nil || s.WebSocket.Open != 100 || s.WebSocket.Dropped != 0 {
		t.Errorf("sockets = %+v, want 100 open", s.WebSocket)
	}
}

// HTTP and websocket scenarios in one plan, by weight: both run, none
// fails, and the table has a row for each.
func TestMixedHTTPAndWebSocket(t *testing.T) {
	t.Parallel()
	p := parsePlan(t, `
target: %s
load: {vus: [4], step: 500ms, warmup: 0s}
scenarios:
  - name: api
    weight: 1
    request: {url: /api}
  - name: widget
    weight: 1
    websocket:
      url: /widget
      send: '{"clientId":"{{seq}}"}'
      ack: {regex: '"clientId":"?([0-9]+)'}
`, widgetServer(t).URL)
	res, err := runPlan(t, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	passedOrBusy(t, res)
	s := res.Steps[0]
	if len(s.Scenarios) != 2 || s.Scenarios[0].OK == 0 || s.Scenarios[1].OK == 0 || s.Failed != 0 {
		t.Errorf("scenarios = %+v, failed %d; want both ok", s.Scenarios, s.Failed)
	}
	if text := table(t, res); !strings.Contains(text, "widget") || !strings.Contains(text, "api") {
		t.Errorf("no per-scenario table:\n%s", text)
	}
}

// Frames the demo target's flood brake rejects count as limited, with their
// real latency, when the scenario names the brake's answer as the demo's
// own plan does: not ws_no_ack at the ack timeout, and no warning about
// frames that matched nothing.
func TestWebSocketRejectionsAreLimited(t *testing.T) {
	t.Parallel()
	srv, err := demo.Start(demo.Config{FloodRate: 0.1, FloodBurst: 3}) // a token every 10 s: the site stays flooded
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dp, err := plan.Parse("demo.yaml", []byte(demo.Plan(demo.PlanConfig{
		Exe: "ceiling", File: "plan.yaml", TargetPort: 1, SinkPort: 2, Step: time.Second, Warmup: time.Second, Precision: 0.05, DeliveredPct: 95,
	})))
	if err != nil {
		t.Fatalf("demo plan: %v", err)
	}
	rej := dp.Scenarios[0].WebSocket.Reject
	if rej == nil || rej.Regex == "" {
		t.Fatalf("demo plan's reject = %+v, want the flood brake's answer as a regex", rej)
	}
	p := parsePlan(t, `
target: %s
load: {rates: [50], step: 1s, warmup: 200ms}
scenarios:
  - name: widget
    websocket:
      url: /widget?site=flooded
      connections: 5
      send: '{"type":"message","clientId":"{{uuid}}","text":"hi"}'
      ack: {json: clientId}
      reject: {regex: '%s'}
      ack_timeout: 2s
`, srv.URL(), strings.ReplaceAll(rej.Regex, "'", "''"))
	res, err := runPlan(t, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	passedOrBusy(t, res)
	s := res.Steps[0]
	if s.Limited < 30 || s.Failed != 0 || s.Errors["ws_no_ack"] != 0 {
		t.Errorf("limited %d, failed %d %v; want ≈ 50 limited and no ws_no_ack", s.Limited, s.Failed, s.Errors)
	}
	if s.LatencyMS.P99 > 1000 {
		t.Errorf("p99 = %v ms, want the rejections' own latency, well under the 2 s ack timeout", s.LatencyMS.P99)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "matched no frame") {
			t.Errorf("warning %q: the rejections are matched", w)
		}
	}
}

// deafServer accepts websockets and never reads from them: once the
// connection's buffers fill, every write to it blocks.
func deafServer(t *testing.T) string {
	t.Helper()
	held := make(chan struct{})
	srv := httptest.NewServer(testkit.WebSocket(websocket.Upgrader{}, func(c *websocket.Conn) {
		if tc, ok := c.NetConn().(*net.TCPConn); ok {
			tc.SetReadBuffer(4096)
		}
		<-held
	}))
	t.Cleanup(func() { close(held); srv.Close() })
	return testkit.WSURL(srv.URL)
}

// A websocket target that stops reading cannot hold a run: writes have a
// deadline (the ack timeout), a socket whose write failed is dropped and
// reopened, and two 1 s steps of 200 KB frames end within their windows
// and drains. Every frame fails: no step passed.
func TestDeafWebSocketTargetEndsOnTime(t *testing.T) {
	long(t)
	t.Parallel()
	p := parsePlan(t, `
target: http://127.0.0.1:9
load: {rates: [100, 100], step: 1s, warmup: 0s}
scenarios:
  - name: widget
    websocket:
      url: %s
      connections: 2
      send: '{"clientId":"{{uuid}}","pad":"%s"}'
      ack: {json: clientId}
      ack_timeout: 500ms
`, deafServer(t), strings.Repeat("x", 200_000))
	start := time.Now()
	s, err := Open(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(context.Background())
	// each step: window 1s + drain (500ms + grace 2s) at most
	if took := time.Since(start); took > 9*time.Second {
		t.Errorf("the run took %v, want at most about 7s", took)
	}
	if err != nil || res.Passed {
		t.Fatalf("Run = %v, passed %v; want a run that does not pass", err, res.Passed)
	}
	for _, st := range res.Steps {
		if st.Failed == 0 || st.OK != 0 {
			t.Errorf("step %d: ok %d, failed %d %v; want every frame failed", st.Index+1, st.OK, st.Failed, st.Errors)
		}
	}
	if ws := res.Steps[len(res.Steps)-1].WebSocket; ws == nil || ws.Dropped == 0 {
		t.Errorf("sockets = %+v, want the sockets whose writes failed dropped (and reopened)", ws)
	}
}
