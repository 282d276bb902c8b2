package httpx

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

func handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Want") != "" && r.Header.Get("X-Want") != "yes" {
			w.WriteHeader(400)
			return
		}
		w.Write([]byte("hello"))
	})
	mux.HandleFunc("/proto", func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/404", http.NotFound)
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 4096))
		for range 64 { // 256 KiB, past the 64 KiB cap in the tests
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := w.(http.Hijacker).Hijack()
		buf.WriteString("HTTP/1.1 abc nonsense\r\n\x00\x01\r\n\r\n")
		buf.Flush()
		conn.Close()
	})
	return mux
}

func do(t *testing.T, ex transport.Exchanger, url string, hdr [][2]string) transport.Outcome {
	t.Helper()
	var out transport.Outcome
	ex.Session().Do(&transport.Request{Method: "GET", URL: url, Header: hdr, Limited: []int{429}}, &out)
	return out
}

func TestH1Outcomes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(handler())
	defer srv.Close()
	ex := New(Config{Timeout: 500 * time.Millisecond, MaxBodyBytes: 64 << 10})
	defer ex.Close()
	tests := []struct {
		path string
		hdr  [][2]string
		want transport.Kind
	}{
		{"/ok", [][2]string{{"X-Want", "yes"}}, transport.OK},
		{"/ok", [][2]string{{"X-Want", "no"}}, transport.HTTP4xx},
		{"/redirect", nil, transport.Redirect},
		{"/404", nil, transport.HTTP4xx},
		{"/500", nil, transport.HTTP5xx},
		{"/429", nil, transport.Limited},
		{"/slow", nil, transport.Timeout},
		{"/big", nil, transport.Protocol},
		{"/reset", nil, transport.Reset},
		{"/garbage", nil, transport.Protocol},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := do(t, ex, srv.URL+tt.path, tt.hdr); got.Kind != tt.want {
				t.Errorf("Do(%s) kind = %v (status %d), want %v", tt.path, got.Kind, got.Status, tt.want)
			}
		})
	}
}

func TestH1BodyBytesAndReuse(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	req := &transport.Request{Method: "POST", URL: srv.URL + "/ok", Body: []byte("abc")}
	for range 3 { // the cached request is sent again, unchanged
		var out transport.Outcome
		s.Do(req, &out)
		if out.Kind != transport.OK || out.BytesIn != 5 || out.BytesOut != 3 {
			t.Fatalf("Do = %+v, want ok with 5 bytes in and 3 out", out)
		}
	}
}

func TestFollowRedirects(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	for _, h2 := range []bool{false, true} {
		ex := New(Config{Timeout: time.Second, FollowRedirects: true, HTTP2: h2})
		s := ex.Session()
		req := &transport.Request{Method: "GET", URL: srv.URL + "/redirect"}
		for range 2 {
			var out transport.Outcome
			s.Do(req, &out)
			if h2 {
				// The plain httptest server speaks HTTP/1.1 only: h2c must fail, not fall back.
				if out.Kind == transport.OK {
					t.Errorf("h2c against an HTTP/1.1-only server = ok, want a failure")
				}
				continue
			}
			if out.Kind != transport.OK || out.Status != 200 {
				t.Errorf("followed redirect = %+v, want ok 200", out)
			}
		}
		ex.Close()
	}
}

func TestRefused(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)) // nothing listens there
	for _, h2 := range []bool{false, true} {
		ex := New(Config{Timeout: time.Second, HTTP2: h2})
		if got := do(t, ex, "http://"+addr+"/", nil); got.Kind != transport.Refused {
			t.Errorf("http2=%v: Do(closed port) = %v, want refused", h2, got.Kind)
		}
		ex.Close()
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(handler())
	defer srv.Close()
	strict := New(Config{Timeout: time.Second})
	defer strict.Close()
	if got := do(t, strict, srv.URL+"/ok", nil); got.Kind != transport.TLS {
		t.Errorf("self-signed, verified: %v, want tls", got.Kind)
	}
	loose := New(Config{Timeout: time.Second, Insecure: true})
	defer loose.Close()
	if got := do(t, loose, srv.URL+"/ok", nil); got.Kind != transport.OK {
		t.Errorf("self-signed, insecure: %v, want ok", got.Kind)
	}
}

func TestH2(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(handler())
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ex := New(Config{Timeout: time.Second, HTTP2: true, Insecure: true, MaxBodyBytes: 64 << 10})
	defer ex.Close()
	for path, want := range map[string]transport.Kind{
		"/proto": transport.OK, "/redirect": transport.Redirect, "/500": transport.HTTP5xx,
		"/big": transport.Protocol, "/slow": transport.Timeout,
	} {
		if got := do(t, ex, srv.URL+path, nil); got.Kind != want {
			t.Errorf("h2 %s = %v (status %d), want %v", path, got.Kind, got.Status, want)
		}
	}
}

func TestH2C(t *testing.T) {
	srv := httptest.NewUnstartedServer(handler())
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	defer srv.Close()
	ex := New(Config{Timeout: time.Second, HTTP2: true})
	defer ex.Close()
	if got := do(t, ex, srv.URL+"/proto", nil); got.Kind != transport.OK {
		t.Errorf("h2c /proto = %v (status %d), want ok over HTTP/2", got.Kind, got.Status)
	}
}

// slowBegins is handler, telling began of each /slow request it starts
// serving: a test waits for the exchange in flight on it, not a sleep.
func slowBegins(began chan<- struct{}) http.Handler {
	h := handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			began <- struct{}{}
		}
		h.ServeHTTP(w, r)
	})
}

// A server that accepts and never answers still times out within bounds.
func TestSilentServer(t *testing.T) {
	ln := testkit.ServeTCP(t, func(c net.Conn) { bufio.NewReader(c).ReadString(0); c.Close() })
	ex := New(Config{Timeout: 200 * time.Millisecond})
	defer ex.Close()
	start := time.Now()
	if got := do(t, ex, "http://"+ln.Addr().String()+"/", nil); got.Kind != transport.Timeout {
		t.Errorf("silent server = %v, want timeout", got.Kind)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %v, want about 200ms", d)
	}
}

// Closing the exchanger while a session is mid-exchange (an interrupt after
// the grace) ends that exchange without a race or a crash.
func TestCloseDuringExchange(t *testing.T) {
	began := make(chan struct{}, 1)
	srv := httptest.NewServer(slowBegins(began))
	defer srv.Close()
	ex := New(Config{Timeout: 5 * time.Second})
	s := ex.Session()
	done := make(chan transport.Outcome)
	go func() {
		var out transport.Outcome
		s.Do(&transport.Request{Method: "GET", URL: srv.URL + "/ok"}, &out) // dials
		s.Do(&transport.Request{Method: "GET", URL: srv.URL + "/slow"}, &out)
		done <- out
	}()
	<-began
	ex.Close()
	select {
	case out := <-done:
		if out.Kind == transport.OK {
			t.Errorf("exchange on a closed connection = ok, want a failure")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("exchange did not end when the exchanger closed")
	}
	s.Close()
}

// One request value reused with new contents (as a virtual user renders
// into it) is encoded afresh each time.
func TestReusedDynamicRequest(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	var req transport.Request
	for path, want := range map[string]transport.Kind{"/ok": transport.OK, "/404": transport.HTTP4xx, "/500": transport.HTTP5xx} {
		req = transport.Request{Method: "GET", URL: srv.URL + path}
		var out transport.Outcome
		s.Do(&req, &out)
		if out.Kind != want {
			t.Errorf("GET %s = %v, want %v", path, out.Kind, want)
		}
	}
}

// Abort, from another goroutine, ends a session's exchange in progress at
// once, and the session's next exchange succeeds on a new connection.
func TestAbortDuringExchange(t *testing.T) {
	began := make(chan struct{}, 1)
	srv := httptest.NewServer(slowBegins(began))
	defer srv.Close()
	ex := New(Config{Timeout: 5 * time.Second})
	defer ex.Close()
	s := ex.Session()
	defer s.Close()
	var out transport.Outcome
	s.Do(&transport.Request{Method: "GET", URL: srv.URL + "/ok"}, &out) // a keep-alive connection
	done := make(chan transport.Kind)
	go func() {
		var out transport.Outcome
		s.Do(&transport.Request{Method: "GET", URL: srv.URL + "/slow"}, &out)
		done <- out.Kind
	}()
	<-began
	start := time.Now()
	s.(transport.Aborter).Abort()
	select {
	case k := <-done:
		if k == transport.OK {
			t.Errorf("aborted exchange = ok, want a failure")
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("aborted exchange ended after %v, want at once", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("exchange did not end when aborted")
	}
	s.Do(&transport.Request{Method: "GET", URL: srv.URL + "/ok"}, &out)
	if out.Kind != transport.OK || out.Retried {
		t.Errorf("exchange after the abort = %v (retried %v), want ok on a new connection", out.Kind, out.Retried)
	}
}

// credentialServer records the Authorization and Cookie headers of the
// requests to /landing, and redirects /go to where ?to= says.
func credentialServer(t *testing.T) (*httptest.Server, func() (auth, cookie string)) {
	t.Helper()
	var mu sync.Mutex
	var auth, cookie string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/go":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/landing":
			mu.Lock()
			auth, cookie = r.Header.Get("Authorization"), r.Header.Get("Cookie")
			mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() (string, string) { mu.Lock(); defer mu.Unlock(); return auth, cookie }
}

// Following a redirect to another host drops the credentials (as browsers,
// curl and Go's client do); to the same host it keeps them.
func TestRedirectDropsCredentialsAcrossHosts(t *testing.T) {
	srv, seen := credentialServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	ex := New(Config{Timeout: 2 * time.Second, FollowRedirects: true})
	defer ex.Close()
	for _, tt := range []struct {
		to       string
		withCred bool
	}{
		{fmt.Sprintf("http://localhost:%d/landing", port), false}, // 127.0.0.1 → localhost: another host
		{"/landing", true}, // the same host
	} {
		var out transport.Outcome
		hdr := [][2]string{{"Authorization", "Bearer secret"}, {"Cookie", "sid=secret"}}
		ex.Session().Do(&transport.Request{Method: "GET", URL: srv.URL + "/go?to=" + url.QueryEscape(tt.to), Header: hdr}, &out)
		auth, cookie := seen()
		if out.Kind != transport.OK || (auth != "") != tt.withCred || (cookie != "") != tt.withCred {
			t.Errorf("redirect to %s: %v, landing saw Authorization %q, Cookie %q; want credentials %v", tt.to, out.Kind, auth, cookie, tt.withCred)
		}
	}
}

// The user information of a URL is sent as Basic authentication, unless the
// request has its own Authorization.
func TestURLUserInfoIsBasicAuth(t *testing.T) {
	srv, seen := credentialServer(t)
	ex := New(Config{Timeout: 2 * time.Second})
	defer ex.Close()
	u := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1) + "/landing"
	var out transport.Outcome
	ex.Session().Do(&transport.Request{Method: "GET", URL: u}, &out)
	if auth, _ := seen(); auth != "Basic YWxpY2U6czNjcmV0" {
		t.Errorf("Authorization = %q, want Basic alice:s3cret", auth)
	}
	ex.Session().Do(&transport.Request{Method: "GET", URL: u, Header: [][2]string{{"Authorization", "Bearer x"}}}, &out)
	if auth, _ := seen(); auth != "Bearer x" {
		t.Errorf("Authorization = %q, want the request's own", auth)
	}
}

// A session of the goroutine engine holds a few kilobytes once its
// connection is open: its read buffer (readBufferSize) and the socket's
// structures. Measured with a server of this process whose side of each
// connection holds a 256-byte buffer, both sides counted: about 6 KB a
// session; a 16 KB read buffer made it 19 KB (a user of the goroutine
// engine then cost 25 KB on a plan of 200 tagged scenarios).
func TestSessionCostsKilobytes(t *testing.T) {
	const n = 300
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	ln := testkit.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		go func() { <-stop; c.Close() }()
		buf := make([]byte, 256)
		var got []byte
		for {
			k, err := c.Read(buf)
			if err != nil {
				return
			}
			if got = append(got[:0], buf[:k]...); strings.Contains(string(got), "\r\n\r\n") {
				if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
					return
				}
			}
		}
	})
	ex := New(Config{Timeout: 5 * time.Second})
	defer ex.Close()
	req := &transport.Request{Method: "GET", URL: "http://" + ln.Addr().String() + "/"}
	sessions := make([]transport.Session, n)
	before := liveHeap()
	for i := range sessions {
		sessions[i] = ex.Session()
		var out transport.Outcome
		if sessions[i].Do(req, &out); out.Kind != transport.OK {
			t.Fatalf("session %d: %+v", i, out)
		}
	}
	per := float64(liveHeap()-before) / n
	t.Logf("%.0f bytes a session with its connection open (both sides)", per)
	if per > 12<<10 {
		t.Errorf("a session with its connection costs %.0f bytes, want at most 12 KiB", per)
	}
	runtime.KeepAlive(sessions)
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
