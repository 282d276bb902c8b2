package testkit

import (
	"net/http"
	"net/http/httptest"
	"sync"
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
	// Capacity, when above zero, is how many requests a second the target
	// answers (a token bucket of 20 ms of them, one at least): past it, it
	// answers 503 at once, as a service at its capacity sheds load, a
	// target whose edge is known. Zero: no bound.
	Capacity float64
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

	capacity float64
	mu       sync.Mutex // guards the bucket
	tokens   float64
	last     time.Time
}

// NewTarget starts a Target answering as c says; the test's cleanup closes
// it.
func NewTarget(tb testing.TB, c TargetConfig) *Target {
	tb.Helper()
	t := &Target{body: c.Body, capacity: c.Capacity, tokens: max(1, c.Capacity*0.02), last: time.Now()}
	t.SetDelay(c.Delay)
	t.SetStatus(c.Status)
	t.srv = httptest.NewServer(http.HandlerFunc(t.serve))
	t.URL = t.srv.URL
	tb.Cleanup(t.srv.Close)
	return t
}

func (t *Target) serve(w http.ResponseWriter, r *http.Request) {
	t.hits.Add(1)
	if !t.take() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
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

// take takes a token of the bucket, if the target has a capacity: false
// when it is empty.
func (t *Target) take() bool {
	if t.capacity <= 0 {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.tokens = min(max(1, t.capacity*0.02), t.tokens+now.Sub(t.last).Seconds()*t.capacity)
	t.last = now
	if t.tokens < 1 {
		return false
	}
	t.tokens--
	return true
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
