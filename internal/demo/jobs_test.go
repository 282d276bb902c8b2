package demo

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// hook is a webhook on loopback that counts posts per clientId.
type hook struct {
	*httptest.Server
	mu       sync.Mutex
	got      map[string]int // 2xx answers per clientId
	attempts int
	times    []time.Time // when each 2xx answer was sent
	bad      []string    // bodies that were not the expected shape
}

// newHook starts a webhook whose answer to the n-th post (from 1) of a
// clientId is answer(w, n); a nil answer means 200 after delay.
func newHook(t *testing.T, delay time.Duration, answer func(w http.ResponseWriter, n int) bool) *hook {
	h := &hook{got: map[string]int{}}
	tries := map[string]int{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(b, "clientId").String()
		h.mu.Lock()
		h.attempts++
		tries[id]++
		n := tries[id]
		if r.Header.Get("Content-Type") != "application/json" || !gjson.GetBytes(b, "channel").Exists() || !gjson.GetBytes(b, "text").Exists() {
			h.bad = append(h.bad, string(b))
		}
		h.mu.Unlock()
		if answer != nil && answer(w, n) {
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		h.mu.Lock()
		h.got[id]++
		h.times = append(h.times, time.Now())
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) delivered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.times)
}

// The delivery ceiling is lanes ÷ webhook latency: 4 lanes and a 50 ms
// webhook post 80 a second. Loaded at 3× that for a second, the queue
// backs up, posts go out at that rate, and the backlog drains with every
// message delivered exactly once.
func TestDeliveryCeilingIsLanesOverLatency(t *testing.T) {
	t.Parallel()
	const (
		lanes   = 4
		latency = 50 * time.Millisecond
		rate    = 240 // 3 × 80/s
		n       = 240 // for one second
	)
	h := newHook(t, latency, nil)
	s, c := start(t, Config{Webhook: h.URL, JobLanes: lanes, FloodRate: -1})
	begin := time.Now()
	for i := range n {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * time.Second / rate)))
		code, _, body := call(t, c, http.MethodPost, s.URL()+fmt.Sprintf("/api/sites/s-%d/messages", i%7), fmt.Sprintf(`{"clientId":"m%d","text":"hi"}`, i))
		if code != 200 {
			t.Fatalf("POST message %d = %d %s", i, code, body)
		}
	}
	loadTime := time.Since(begin)
	depth := value(t, scrape(t, s, c), "demo_queue_depth")
	// After loadTime at most lanes/latency×loadTime went out; the rest waits.
	if want := 0.5 * (n - float64(lanes)/latency.Seconds()*loadTime.Seconds()); depth < want {
		t.Errorf("queue depth after %v of load = %v, want a backlog ≥ %.0f", loadTime.Round(time.Millisecond), depth, want)
	}
	if !waitFor(5*time.Second, func() bool { return h.delivered() >= n }) {
		t.Fatalf("delivered %d of %d within 5 s of the load's end", h.delivered(), n)
	}
	time.Sleep(2 * latency) // a duplicate post would arrive in this time
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range n {
		if k := h.got[fmt.Sprintf("m%d", i)]; k != 1 {
			t.Errorf("message m%d arrived %d times, want once", i, k)
		}
	}
	if len(h.bad) > 0 {
		t.Errorf("posts not shaped {channel, clientId, text} as JSON: %q", h.bad[0])
	}
	// The lanes were never idle between the first and the last answer.
	span := h.times[len(h.times)-1].Sub(h.times[0]).Seconds()
	got, want := float64(len(h.times)-lanes)/span, float64(lanes)/latency.Seconds()
	if got < 0.75*want || got > 1.25*want {
		t.Errorf("webhook saw %.1f posts/s, want %v ± 25%% (lanes ÷ latency)", got, want)
	}
	t.Logf("backlog %v after the load, %.1f posts/s, drained %v after the load", depth, got, time.Since(begin)-loadTime)
}

// A 429 is obeyed and retried: delivered once, counted retried once. A
// webhook that always answers 500 gets the first try and three retries,
// then the post counts as failed.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		answer               func(w http.ResponseWriter, n int) bool
		ok, retried, failed  float64
		attempts, deliveries int
	}{
		{"429 once", func(w http.ResponseWriter, n int) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			}
			return false
		}, 1, 1, 0, 2, 1},
		{"always 500", func(w http.ResponseWriter, _ int) bool {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}, 0, 3, 1, 4, 0},
		{"404 fails at once", func(w http.ResponseWriter, _ int) bool {
			w.WriteHeader(http.StatusNotFound)
			return true
		}, 0, 0, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHook(t, 0, tt.answer)
			s, c := start(t, Config{Webhook: h.URL, JobLanes: 2})
			if code, _, body := call(t, c, http.MethodPost, s.URL()+"/api/sites/s/messages", `{"clientId":"r1","text":"hi"}`); code != 200 {
				t.Fatalf("POST = %d %s", code, body)
			}
			var fams = scrape(t, s, c)
			done := func() bool {
				fams = scrape(t, s, c)
				return value(t, fams, "demo_webhook_posts_total", "result", "ok")+value(t, fams, "demo_webhook_posts_total", "result", "failed") >= 1
			}
			if !waitFor(3*time.Second, done) {
				t.Fatal("no final answer within 3 s")
			}
			got := [3]float64{
				value(t, fams, "demo_webhook_posts_total", "result", "ok"),
				value(t, fams, "demo_webhook_posts_total", "result", "retried"),
				value(t, fams, "demo_webhook_posts_total", "result", "failed"),
			}
			if want := [3]float64{tt.ok, tt.retried, tt.failed}; got != want {
				t.Errorf("posts ok, retried, failed = %v, want %v", got, want)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.attempts != tt.attempts || h.got["r1"] != tt.deliveries {
				t.Errorf("webhook saw %d attempts and %d deliveries, want %d and %d", h.attempts, h.got["r1"], tt.attempts, tt.deliveries)
			}
		})
	}
}

// Close does not wait for the backlog or for a slow webhook.
func TestCloseStopsLanesPromptly(t *testing.T) {
	h := newHook(t, time.Minute, nil)
	s, err := Start(Config{Webhook: h.URL, JobLanes: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{}
	for i := range 10 {
		call(t, c, http.MethodPost, s.URL()+"/api/sites/s/messages", fmt.Sprintf(`{"clientId":"c%d"}`, i))
	}
	c.CloseIdleConnections()
	waitFor(2*time.Second, func() bool { return s.chat.count.inFlight.Load() == 2 })
	begin := time.Now()
	s.Close()
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Close took %v with two posts in flight and a backlog, want < 1s", d)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 9, 26, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"2", 2 * time.Second},
		{"120", maxRetryAfter},
		{"-3", 0},
		{"", noRetryAfter},
		{"soon", noRetryAfter},
		{now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second},
		{now.Add(time.Hour).Format(http.TimeFormat), maxRetryAfter},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
