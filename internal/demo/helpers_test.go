package demo

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// start starts a demo target for one test and closes it, and the test
// client's idle connections, at the end.
func start(t testing.TB, cfg Config) (*Server, *http.Client) {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start(%+v) = %v", cfg, err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s, c
}

// call sends one request and returns the status, header and body.
func call(t testing.TB, c *http.Client, method, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, url, err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// dial opens a widget socket on path (e.g. "/widget?site=s-1"), closed at
// the end of the test.
func dial(t testing.TB, s *Server, path string) *websocket.Conn {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.URL(), "http")+path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return conn
}

// exchange sends frame and returns the next frame received (within 5 s).
func exchange(t testing.TB, conn *websocket.Conn, frame string) string {
	t.Helper()
	send(t, conn, frame)
	return receive(t, conn)
}

func send(t testing.TB, conn *websocket.Conn, frame string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatalf("send %s: %v", frame, err)
	}
}

func receive(t testing.TB, conn *websocket.Conn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return string(b)
}

// scrape reads GET /metrics with the reference parser.
func scrape(t testing.TB, s *Server, c *http.Client) map[string]*dto.MetricFamily {
	t.Helper()
	code, h, body := call(t, c, http.MethodGet, s.URL()+"/metrics", "")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d %s, want 200 text/plain", code, h.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// value is the value of the family's series whose labels include the
// given name=value pairs: a counter, gauge or untyped value, or a
// summary's count.
func value(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount())
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// waitFor polls cond every 20 ms until it holds or d has passed, and
// reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
