package testkit

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TargetConfig is how a Target answers until the test changes it.
type TargetConfig struct {
	// Delay is how long the target waits before it answers each request;
	// zero answers at once. A request whose client goes away stops
	// waiting.
	Delay time.Duration
	// Status is the status of every answer; zero means 200.
	Status int
	// Body is the body of every answer; empty writes none.
	Body string
}

// Target is an HTTP server on loopback that answers every path and method
// with its configured delay, status and body, and counts the requests.
type Target struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	srv    *httptest.Server
	body   string
	delay  atomic.Int64 // time.Duration
	status atomic.Int64
	hits   atomic.Int64
}

// NewTarget starts a Target answering as c says; the test's cleanup closes
// it.
func NewTarget(tb testing.TB, c TargetConfig) *Target {
	tb.Helper()
	t := &Target{body: c.Body}
	t.SetDelay(c.Delay)
	t.SetStatus(c.Status)
	t.srv = httptest.NewServer(http.HandlerFunc(t.serve))
	t.URL = t.srv.URL
	tb.Cleanup(t.srv.Close)
	return t
}

func (t *Target) serve(w http.ResponseWriter, r *http.Request) {
	t.hits.Add(1)
	if d := time.Duration(t.delay.Load()); d > 0 {
		wait := time.NewTimer(d)
		select {
		case <-wait.C:
		case <-r.Context().Done():
			wait.Stop()
			return
		}
	}
	w.WriteHeader(int(t.status.Load()))
	if t.body != "" {
		w.Write([]byte(t.body))
	}
}

// SetDelay changes how long the target waits before each answer from now
// on; zero answers at once.
func (t *Target) SetDelay(d time.Duration) { t.delay.Store(int64(d)) }

// SetStatus changes the status of the answers from now on; zero means 200.
func (t *Target) SetStatus(code int) {
	if code == 0 {
		code = http.StatusOK
	}
	t.status.Store(int64(code))
}

// Hits returns how many requests the target has received.
func (t *Target) Hits() int64 { return t.hits.Load() }

// Close stops the server before the test ends (the cleanup would).
func (t *Target) Close() { t.srv.Close() }
