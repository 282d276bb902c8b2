package httpx

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

func newTestLoop(t *testing.T, c Config) transport.Loop {
	t.Helper()
	lp, err := NewLoop(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lp.Close)
	return lp
}

// finished is an exchange a loop ended.
type finished struct {
	tag        transport.Tag
	start, end time.Duration
	out        transport.Outcome
}

// pollUntil polls lp until n exchanges ended or 10 s passed.
func pollUntil(t *testing.T, lp transport.Loop, n int) []finished {
	t.Helper()
	var got []finished
	done := func(tag transport.Tag, start, end time.Duration, out *transport.Outcome) {
		o := *out
		o.Header = nil
		got = append(got, finished{tag, start, end, o})
	}
	for limit := time.Now().Add(10 * time.Second); len(got) < n && time.Now().Before(limit); {
		lp.Poll(50*time.Millisecond, done)
	}
	if len(got) != n {
		t.Fatalf("%d exchanges ended, want %d", len(got), n)
	}
	return got
}

func loopDo(t *testing.T, lp transport.Loop, r *transport.Request) transport.Outcome {
	t.Helper()
	if !lp.Can(r) {
		t.Fatalf("the loop cannot send %s %s", r.Method, r.URL)
	}
	if !lp.Send(r, transport.Tag{N: 7}) {
		t.Fatal("Send refused under the cap")
	}
	f := pollUntil(t, lp, 1)[0]
	if f.tag.N != 7 || f.end < f.start {
		t.Fatalf("ended %+v", f)
	}
	return f.out
}

// Every path of the test handler ends on the loop as it does on H1: the
// same class, status and body bytes.
func TestLoopOutcomesMatchH1(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	cfg := Config{Timeout: 500 * time.Millisecond, MaxBodyBytes: 64 << 10}
	ex := New(cfg)
	defer ex.Close()
	lp := newTestLoop(t, cfg)
	for _, path := range []string{"/ok", "/404", "/500", "/429", "/slow", "/big", "/reset", "/garbage", "/ok"} {
		r := &transport.Request{Static: true, Method: "GET", URL: srv.URL + path, Limited: []int{429}}
		var want transport.Outcome
		ex.Session().Do(r, &want)
		got := loopDo(t, lp, r)
		if got.Kind != want.Kind || got.Status != want.Status || got.BytesIn != want.BytesIn {
			t.Errorf("%s: loop %v %d %d bytes, H1 %v %d %d bytes", path, got.Kind, got.Status, got.BytesIn, want.Kind, want.Status, want.BytesIn)
		}
	}
	if lp.InFlight() != 0 {
		t.Errorf("in flight after all ended: %d", lp.InFlight())
	}
}

func TestLoopKeepAliveAndRefused(t *testing.T) {
	srv := httptest.NewServer(handler())
	lp := newTestLoop(t, Config{Timeout: time.Second})
	r := &transport.Request{Static: true, Method: "GET", URL: srv.URL + "/ok"}
	for range 20 {
		if out := loopDo(t, lp, r); out.Kind != transport.OK || out.BytesIn != 5 {
			t.Fatalf("GET /ok: %+v", out)
		}
	}
	if lp.Conns() != 1 {
		t.Errorf("20 exchanges one after another used %d connections, want 1", lp.Conns())
	}
	srv.Close() // closes the idle connection too: the loop sees it go
	if out := loopDo(t, lp, r); out.Kind != transport.Refused {
		t.Errorf("after the server closed: %v, want refused", out.Kind)
	}
	if lp.Conns() != 0 {
		t.Errorf("connections left: %d", lp.Conns())
	}
}

// A GET that meets a keep-alive connection the server closed on reading it
// is sent once more on a new connection; a POST is not.
func TestLoopStaleRetry(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		addr, requests := rawServer(t, func(n int64) []byte {
			if n%2 == 1 {
				return nil
			}
			return []byte(okReply)
		})
		lp := newTestLoop(t, Config{Timeout: time.Second})
		r := &transport.Request{Static: true, Method: method, URL: "http://" + addr + "/"}
		failed, retried := 0, 0
		for range 10 {
			out := loopDo(t, lp, r)
			if out.Kind != transport.OK {
				failed++
			}
			if out.Retried {
				retried++
			}
		}
		switch method {
		case "GET":
			// The first on a new connection is answered; every later one
			// meets a close and is answered on the next connection.
			if failed != 0 || retried != 9 || requests.Load() != 19 {
				t.Errorf("GET: failed %d, retried %d, server saw %d; want 0, 9, 19", failed, retried, requests.Load())
			}
		case "POST":
			if failed != 5 || retried != 0 || requests.Load() != 10 {
				t.Errorf("POST: failed %d, retried %d, server saw %d; want 5, 0, 10", failed, retried, requests.Load())
			}
		}
	}
}

// Bytes after a whole response drop the connection; the next request goes
// out on a new one and is answered.
func TestLoopExtraBytesDropConnection(t *testing.T) {
	addr, _ := rawServer(t, func(int64) []byte { return []byte(okReply + "HTTP/1.1 200 OK\r\n\r\n") })
	lp := newTestLoop(t, Config{Timeout: time.Second})
	r := &transport.Request{Static: true, Method: "GET", URL: "http://" + addr + "/"}
	for range 3 {
		if out := loopDo(t, lp, r); out.Kind != transport.OK {
			t.Fatalf("%v", out.Kind)
		}
		if lp.Conns() != 0 {
			t.Fatalf("a connection out of step was kept")
		}
	}
}

// Past the cap Send starts nothing; the exchanges in flight all end.
func TestLoopCapAndConcurrency(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	lp := newTestLoop(t, Config{Timeout: 5 * time.Second})
	lp.Limit(40, 0)
	r := &transport.Request{Static: true, Method: "GET", URL: srv.URL + "/ok"}
	lp.Can(r)
	sent := 0
	for i := range 100 {
		if lp.Send(r, transport.Tag{N: i}) {
			sent++
		}
	}
	if sent != 40 || lp.Conns() != 40 {
		t.Fatalf("sent %d on %d connections, want 40 on 40", sent, lp.Conns())
	}
	seen := map[int]bool{}
	for _, f := range pollUntil(t, lp, 40) {
		if f.out.Kind != transport.OK || seen[f.tag.N] {
			t.Fatalf("exchange %d: %v (seen before: %v)", f.tag.N, f.out.Kind, seen[f.tag.N])
		}
		seen[f.tag.N] = true
	}
}

// Abort ends what is in flight as timeouts at once; Wake ends a long Poll.
func TestLoopAbortAndWake(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	lp := newTestLoop(t, Config{Timeout: 10 * time.Second})
	r := &transport.Request{Static: true, Method: "GET", URL: srv.URL + "/slow"}
	lp.Can(r)
	for i := range 3 {
		lp.Send(r, transport.Tag{N: i})
	}
	lp.Poll(50*time.Millisecond, func(transport.Tag, time.Duration, time.Duration, *transport.Outcome) {
		t.Error("ended before the abort")
	})
	n := 0
	lp.Abort(func(_ transport.Tag, _, _ time.Duration, out *transport.Outcome) {
		if out.Kind != transport.Timeout {
			t.Errorf("aborted as %v", out.Kind)
		}
		n++
	})
	if n != 3 || lp.InFlight() != 0 || lp.Conns() != 0 {
		t.Errorf("abort ended %d, left %d in flight on %d connections", n, lp.InFlight(), lp.Conns())
	}
	go func() { time.Sleep(50 * time.Millisecond); lp.Wake() }()
	start := time.Now()
	lp.Poll(5*time.Second, func(transport.Tag, time.Duration, time.Duration, *transport.Outcome) {})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Wake did not end the Poll: it took %v", d)
	}
}

// The loop sends only what it can: no TLS, no templated or captured
// requests.
func TestLoopCan(t *testing.T) {
	lp := newTestLoop(t, Config{Timeout: time.Second})
	for _, r := range []*transport.Request{
		{Static: true, Method: "GET", URL: "https://127.0.0.1:1/"},
		{Static: false, Method: "GET", URL: "http://127.0.0.1:1/"},
		{Static: true, Capture: true, Method: "GET", URL: "http://127.0.0.1:1/"},
		{Static: true, Method: "GET", URL: "ftp://127.0.0.1:1/"},
	} {
		if lp.Can(r) {
			t.Errorf("Can(%+v) = true", r)
		}
	}
	if _, err := NewLoop(Config{HTTP2: true}); err == nil {
		t.Error("NewLoop accepted HTTP/2")
	}
}

// Requests to one address share its idle connections; at the cap, an idle
// connection to another address makes room.
func TestLoopPoolsByAddress(t *testing.T) {
	a := httptest.NewServer(handler())
	defer a.Close()
	b := httptest.NewServer(handler())
	defer b.Close()
	lp := newTestLoop(t, Config{Timeout: time.Second})
	lp.Limit(1, 0)
	for _, url := range []string{a.URL + "/ok", a.URL + "/404", b.URL + "/ok", a.URL + "/ok"} {
		r := &transport.Request{Static: true, Method: "GET", URL: url}
		if out := loopDo(t, lp, r); out.Status == 0 {
			t.Fatalf("%s: %v", url, out.Kind)
		}
		if lp.Conns() != 1 {
			t.Fatalf("after %s: %d connections, want 1 (shared, and the cap is 1)", url, lp.Conns())
		}
	}
}

// An answer that comes before the request was all sent (a 413 to a big
// body) ends the exchange, and the connection is not used again: the
// server still waits for the rest of the body.
func TestLoopEarlyAnswerDropsConnection(t *testing.T) {
	ln := testkit.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		c.Write([]byte("HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n"))
		time.Sleep(2 * time.Second) // reads no body
	})
	lp := newTestLoop(t, Config{Timeout: 5 * time.Second})
	r := &transport.Request{Static: true, Method: "POST", URL: "http://" + ln.Addr().String() + "/", Body: make([]byte, 32<<20)}
	if out := loopDo(t, lp, r); out.Status != 413 {
		t.Fatalf("status %d (%v), want 413", out.Status, out.Kind)
	}
	if lp.Conns() != 0 {
		t.Errorf("a connection answered mid-request was kept")
	}
}

// A done that sends again at once, to a port that refuses, is called once
// per Poll for what had ended, not in a loop that never reads the network.
func TestLoopRefusedResendIsBounded(t *testing.T) {
	lp := newTestLoop(t, Config{Timeout: time.Second})
	addr := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	r := &transport.Request{Static: true, Method: "GET", URL: "http://" + addr + "/"}
	lp.Can(r)
	calls := 0
	done := func(transport.Tag, time.Duration, time.Duration, *transport.Outcome) {
		calls++
		lp.Send(r, transport.Tag{})
	}
	lp.Send(r, transport.Tag{})
	for i := range 3 {
		calls = 0
		lp.Poll(10*time.Millisecond, done)
		if calls != 1 || lp.InFlight() != 1 {
			t.Fatalf("poll %d: done called %d times, %d in flight; want 1, 1", i, calls, lp.InFlight())
		}
	}
}

// An answer read late is timed when the kernel received it: after a 100 ms
// Sleep, an answer written during the sleep reads as its own time, not
// the 100 ms it waited to be read.
func TestLoopReceiveTimeOfALateRead(t *testing.T) {
	var sent atomic.Int64 // when the request was sent, and when the answer was written, as UnixNano
	var answered atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
		answered.Store(time.Now().UnixNano())
	}))
	defer srv.Close()
	lp := newTestLoop(t, Config{Timeout: 5 * time.Second})
	r := &transport.Request{Static: true, Method: "GET", URL: srv.URL + "/"}
	loopDo(t, lp, r) // the connection, opened
	answered.Store(0)
	sent.Store(time.Now().UnixNano())
	lp.Send(r, transport.Tag{})
	lp.Sleep(100 * time.Millisecond)
	if d := time.Duration(time.Now().UnixNano() - sent.Load()); d < 100*time.Millisecond {
		t.Fatalf("Sleep(100ms) slept %v", d)
	}
	var took time.Duration
	for limit := time.Now().Add(5 * time.Second); took == 0 && time.Now().Before(limit); {
		lp.Poll(10*time.Millisecond, func(_ transport.Tag, start, end time.Duration, out *transport.Outcome) {
			if out.Kind != transport.OK {
				t.Fatalf("%v", out.Kind)
			}
			took = end - start
		})
	}
	server := time.Duration(answered.Load() - sent.Load())
	if server > 80*time.Millisecond {
		t.Skipf("the server answered %v after the request, during no sleep: a busy machine", server)
	}
	// Read at 100 ms or later; timed by the kernel, within a few ms of
	// when the server wrote it.
	if took <= 0 || took > server+20*time.Millisecond {
		t.Errorf("the answer, written %v after the request and read after 100 ms, took %v", server, took)
	}
}

// Past the bound on new connections between two Polls Send starts nothing;
// the next Poll gives a new allowance. Idle connections are reused freely.
func TestLoopDialsPerPoll(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	lp := newTestLoop(t, Config{Timeout: 5 * time.Second})
	lp.Limit(100, 10)
	r := &transport.Request{Static: true, Method: "GET", URL: srv.URL + "/ok"}
	lp.Can(r)
	sent := 0
	for i := range 30 {
		if lp.Send(r, transport.Tag{N: i}) {
			sent++
		}
	}
	if sent != 10 || lp.Conns() != 10 {
		t.Fatalf("sent %d on %d connections before a Poll, want 10 on 10", sent, lp.Conns())
	}
	pollUntil(t, lp, 10)
	sent = 0
	for i := range 30 {
		if lp.Send(r, transport.Tag{N: i}) {
			sent++
		}
	}
	// Ten idle connections reused, ten new ones.
	if sent != 20 || lp.Conns() != 20 {
		t.Fatalf("sent %d on %d connections after a Poll, want 20 on 20", sent, lp.Conns())
	}
	pollUntil(t, lp, 20)
}

// A target whose accept queue is full drops the handshakes: an exchange
// whose connection was never made by its deadline is a connect failure,
// not a timeout; the one whose connection was made and never answered is
// a timeout.
func TestLoopUnmadeConnectionIsConnect(t *testing.T) {
	addr := testkit.FullBacklog(t) // an accept queue of one, never accepted
	lp := newTestLoop(t, Config{Timeout: 300 * time.Millisecond})
	r := &transport.Request{Static: true, Method: "GET", URL: "http://" + addr + "/"}
	lp.Can(r)
	for i := range 6 {
		// One at a time, so that the queue is full before the next.
		if !lp.Send(r, transport.Tag{N: i}) {
			t.Fatal("Send refused under the cap")
		}
		lp.Poll(20*time.Millisecond, func(tag transport.Tag, _, _ time.Duration, out *transport.Outcome) {
			t.Errorf("exchange %d ended before its deadline: %v", tag.N, out.Kind)
		})
	}
	kinds := map[transport.Kind]int{}
	for _, f := range pollUntil(t, lp, 6) {
		kinds[f.out.Kind]++
	}
	if kinds[transport.Connect] < 3 || kinds[transport.Connect]+kinds[transport.Timeout] != 6 {
		t.Fatalf("classes %v: want the unmade connections (most) as connect, the made ones as timeout", kinds)
	}
}
