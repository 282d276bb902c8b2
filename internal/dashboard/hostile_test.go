package dashboard

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// closedWithin reports whether the server closed c (a read ends with
// EOF or a reset) within d, rather than waiting for its request.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// dialAll opens n connections to addr, closed when the test ends.
func dialAll(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs
}

// Idle connections beyond the cap of one address are closed as soon as
// they are accepted; those within it are kept for their request; once
// the flood is gone the page answers again.
func TestConnectionCapPerAddress(t *testing.T) {
	t.Parallel()
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	flood := dialAll(t, s.ln.Addr().String(), 100)
	closed := 0
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if closedWithin(c, time.Second) {
				mu.Lock()
				closed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if kept := len(flood) - closed; kept > maxConnsPerAddr {
		t.Errorf("%d of %d idle connections from one address kept, want at most %d", kept, len(flood), maxConnsPerAddr)
	}
	for _, c := range flood {
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(s.URL())
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		if resp != nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not answer again after the flood: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openStream sends an event stream's request and never reads the answer.
func openStream(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /live/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	return c
}

// Viewers whose streams are not read are dropped within seconds, however
// much the page publishes, and no more streams are served at once than
// the cap, so that what they cost the run is bounded.
func TestSlowViewersDropped(t *testing.T) {
	t.Parallel()
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := s.ln.Addr().String()
	for range maxConnsPerAddr {
		openStream(t, addr)
	}
	big := strings.Repeat("<p>a body of the size of a page with plots</p>\n", 6000) // 290 KB
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				s.Publish("t", fmt.Sprintf("<p>%d</p>%s", i, big))
			}
		}
	}()
	streams := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.streams
	}
	peak := 0
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		peak = max(peak, streams())
	}
	if peak == 0 || peak > maxStreamsPerAddr {
		t.Errorf("%d streams from one address served at once, want 1 to %d", peak, maxStreamsPerAddr)
	}
	start := time.Now()
	for streams() > 0 {
		if time.Since(start) > 6*time.Second {
			t.Fatalf("%d streams that are not read were still served %v after they stopped reading", streams(), time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("streams not read: %d served at most, all dropped within %v", peak, time.Since(start).Round(time.Millisecond))
	// A viewer who reads still gets the page's stream.
	resp, err := http.Get(s.URL() + "live/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a reading viewer after the slow ones: %d", resp.StatusCode)
	}
	buf := make([]byte, 64)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Errorf("a reading viewer got no event: %v", err)
	}
}

// Without a token, the page answers only requests that name it by a
// loopback name or address: a page of another site whose name was
// pointed at 127.0.0.1 (DNS rebinding) is refused.
func TestHostMustBeLoopback(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	for host, want := range map[string]int{
		"127.0.0.1:" + port:      http.StatusOK,
		"localhost:" + port:      http.StatusOK,
		"LocalHost":              http.StatusOK,
		"[::1]:" + port:          http.StatusOK,
		"127.0.0.1":              http.StatusOK,
		"evil.example:" + port:   http.StatusMisdirectedRequest,
		"127.0.0.1.evil.example": http.StatusMisdirectedRequest,
		"localhost.evil.example": http.StatusMisdirectedRequest,
		"attacker.test":          http.StatusMisdirectedRequest,
	} {
		for _, path := range []string{"", "live/events", "live/report"} {
			req, err := http.NewRequest("GET", s.URL()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if path == "live/report" && want == http.StatusOK {
				want = http.StatusNotFound // no report before the end
			}
			if resp.StatusCode != want {
				t.Errorf("GET /%s with Host %q: %d, want %d", path, host, resp.StatusCode, want)
			}
		}
	}
}

// The token's cookie is scoped to the page's stream and report (Path
// /live/) and named after the port, so that two pages on one host do not
// take each other's; the page itself takes the token in its address.
func TestTokenCookieScoped(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	resp := get(t, s.URL())
	body(t, resp)
	cs := resp.Cookies()
	if len(cs) != 1 || cs[0].Path != "/live/" || cs[0].Name != "ceiling_dashboard_"+port || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("the token's cookie: %+v, want one, HttpOnly, SameSite=Strict, Path /live/, named after port %s", cs, port)
	}
	bare := strings.TrimSuffix(s.URL(), "?token=s3cret")
	s.End("t", "<p>done</p>", []byte("<h1>r</h1>"))
	if got := body(t, get(t, bare+"live/events", cs[0])); !strings.Contains(got, "event: end") || !strings.Contains(got, `<a href="live/report">`) {
		t.Errorf("the event stream with the cookie:\n%s", got)
	}
	if got := body(t, get(t, bare+"live/report", cs[0])); got != "<h1>r</h1>" {
		t.Errorf("the report with the cookie: %q", got)
	}
}

// The address printed is the one asked for, with the port the system
// gave: 0.0.0.0 is printed as 0.0.0.0, never as [::].
func TestPageURL(t *testing.T) {
	for _, tt := range []struct{ host, bound, want string }{
		{"0.0.0.0", "[::]:5665", "http://0.0.0.0:5665/"},
		{"::", "[::]:5665", "http://[::]:5665/"},
		{"127.0.0.1", "127.0.0.1:41000", "http://127.0.0.1:41000/"},
		{"localhost", "127.0.0.1:41000", "http://localhost:41000/"},
		{"::1", "[::1]:41000", "http://[::1]:41000/"},
	} {
		a, err := net.ResolveTCPAddr("tcp", tt.bound)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageURL(tt.host, a); got != tt.want {
			t.Errorf("pageURL(%q, %s) = %q, want %q", tt.host, tt.bound, got, tt.want)
		}
	}
}

// The help says how to ask for loopback with a port: :PORT.
func TestFlagHelpSaysColonPort(t *testing.T) {
	var f Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.Register(fs)
	usage := fs.Lookup("dashboard").Usage
	if !strings.Contains(usage, ":PORT") || strings.Contains(usage, "a port alone") {
		t.Errorf("--dashboard's help: %q, want it to say :PORT", usage)
	}
}
