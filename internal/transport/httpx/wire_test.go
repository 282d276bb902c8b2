package httpx

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

func read(raw string, isHead bool) (response, error) {
	return readResponse(bufio.NewReaderSize(strings.NewReader(raw), 64), isHead, 100, &capture{})
}

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		head   bool
		status int
		body   int64
		close  bool
		err    error
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, 5, false, nil},
		{"no reason", "HTTP/1.1 204\r\n\r\n", false, 204, 0, false, nil},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n3\r\nabc\r\n0\r\nTrailer: y\r\n\r\n", false, 200, 8, false, nil},
		{"chunked wins over length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", false, 200, 1, false, nil},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nabcdef", false, 200, 6, true, nil},
		{"http/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false, 200, 1, true, nil},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", false, 200, 1, false, nil},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n", false, 200, 0, true, nil},
		{"100 continue skipped", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", false, 201, 2, false, nil},
		{"head has no body", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", true, 200, 0, false, nil},
		{"304 has no body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", false, 304, 0, false, nil},
		{"body too large", "HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n", false, 200, 0, true, errBodyTooLarge},
		{"endless chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + strings.Repeat("x", 64) + "\r\n40\r\n" + strings.Repeat("x", 64) + "\r\n", false, 200, 64, true, errBodyTooLarge},
		{"endless until close", "HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("x", 500), false, 200, 101, true, errBodyTooLarge},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, 200, 3, false, io.ErrUnexpectedEOF},
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", false, 0, 0, false, errMalformed},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", false, 0, 0, false, errMalformed},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", false, 200, 0, false, errMalformed},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, 200, 0, false, errMalformed},
		{"gzip framing", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, 200, 0, false, errMalformed},
		{"folded header", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", false, 200, 0, false, errMalformed},
		{"header line too long", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLineBytes) + "\r\n\r\n", false, 200, 0, false, errMalformed},
		{"header line past the buffer", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 100) + "\r\nContent-Length: 0\r\n\r\n", false, 200, 0, false, nil},
		{"switching protocols", "HTTP/1.1 101 Switching\r\n\r\n", false, 101, 0, false, errMalformed},
		{"empty", "", false, 0, 0, false, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := read(tt.raw, tt.head)
			if !errors.Is(err, tt.err) {
				t.Fatalf("readResponse(%q) error = %v, want %v", tt.raw, err, tt.err)
			}
			if err != nil && tt.err != errBodyTooLarge {
				return // the connection is dropped; nothing else matters
			}
			if got.status != tt.status || got.body != tt.body || got.close != tt.close {
				t.Errorf("readResponse(%q) = status %d body %d close %v, want %d %d %v", tt.raw, got.status, got.body, got.close, tt.status, tt.body, tt.close)
			}
		})
	}
}

// Captured bodies and headers equal what a discarding read counts.
func TestCapture(t *testing.T) {
	for _, raw := range []string{
		"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("z", 90),
	} {
		c := &capture{keepBody: true}
		resp, err := readResponse(bufio.NewReaderSize(strings.NewReader(raw), 64), false, 100, c)
		defer c.done() // the budget whole again, as after an exchange
		if err != nil {
			t.Fatalf("readResponse(%q): %v", raw, err)
		}
		want := raw[strings.Index(raw, "\r\n\r\n")+4:]
		if strings.Contains(raw, "chunked") {
			want = "helloabc"
		}
		if string(c.body) != want || resp.body != int64(len(want)) {
			t.Errorf("body = %q (%d), want %q", c.body, resp.body, want)
		}
		o := transport.Outcome{Header: c.header}
		var cookies []string
		o.EachHeader("set-cookie", func(v []byte) bool { cookies = append(cookies, string(v)); return true })
		if strings.Contains(raw, "Set-Cookie") && strings.Join(cookies, ";") != "a=1;b=2" {
			t.Errorf("Set-Cookie values = %q, want a=1, b=2", cookies)
		}
	}
}

func TestEncodeRequest(t *testing.T) {
	line, err := parseRequestLine("POST", "http://example.test:8080/a%20b?x=1")
	if err != nil {
		t.Fatal(err)
	}
	got := string(encodeRequest(nil, &line, [][2]string{{"X-K", "v"}, {"Content-Length", "99"}}, []byte("hi")))
	want := "POST /a%20b?x=1 HTTP/1.1\r\nX-K: v\r\nHost: example.test:8080\r\nUser-Agent: ceiling\r\nContent-Length: 2\r\n\r\nhi"
	if got != want {
		t.Errorf("encodeRequest = %q, want %q", got, want)
	}
	if line.addr != "example.test:8080" || line.tls {
		t.Errorf("addr, tls = %q, %v", line.addr, line.tls)
	}
	tl, _ := parseRequestLine("GET", "https://[::1]")
	if tl.addr != "[::1]:443" || !tl.tls || tl.target != "/" {
		t.Errorf("parseRequestLine(https://[::1]) = %+v", tl)
	}
	if _, err := parseRequestLine("GET", "ftp://x/"); err == nil {
		t.Errorf("ftp URL accepted")
	}
}

// A server that closes idle keep-alive connections: the next request on the
// stale connection is sent again on a new one, not counted as a failure.
func TestStaleKeepAliveIsRetried(t *testing.T) {
	accepted := make(chan struct{}, 10)
	ln := testkit.ServeTCP(t, func(c net.Conn) { // answer one request, then close the connection unannounced
		accepted <- struct{}{}
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		time.Sleep(20 * time.Millisecond)
	})
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	req := &transport.Request{Method: "GET", URL: "http://" + ln.Addr().String() + "/"}
	for i := range 3 {
		var out transport.Outcome
		s.Do(req, &out)
		if out.Kind != transport.OK || out.Retried != (i > 0) {
			t.Fatalf("request %d = %v (retried %v), want ok, retried after the first", i, out.Kind, out.Retried)
		}
		time.Sleep(60 * time.Millisecond) // the server closes the idle connection, sooner than idleCheck
	}
	if n := len(accepted); n != 3 {
		t.Errorf("connections = %d, want 3 (one per request after each was closed)", n)
	}
}

// Pipelined answers on one connection stay in step: the second response is
// read from the buffer the first read filled.
func TestKeepAliveReuse(t *testing.T) {
	var conns atomic.Int64
	ln := testkit.ServeTCP(t, func(c net.Conn) {
		conns.Add(1)
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
		}
	})
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	req := &transport.Request{Method: "GET", URL: "http://" + ln.Addr().String() + "/"}
	for i := range 50 {
		var out transport.Outcome
		s.Do(req, &out)
		if out.Kind != transport.OK || out.BytesIn != 2 {
			t.Fatalf("request %d = %+v, want ok with 2 bytes", i, out)
		}
	}
	s.Close()
	if n := conns.Load(); n != 1 {
		t.Errorf("connections = %d, want 1 (keep-alive)", n)
	}
}

func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.0 302 Found\r\nLocation: /x\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nabc",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, isHead bool) {
		c := &capture{keepBody: len(raw)%2 == 0}
		resp, err := readResponse(bufio.NewReaderSize(strings.NewReader(raw), 64), isHead, 100, c)
		defer c.done() // the budget whole again, as after an exchange
		if resp.body < 0 || resp.body > 101 {
			t.Fatalf("body = %d outside [0, 101]", resp.body)
		}
		if c.keepBody && int64(len(c.body)) != resp.body {
			t.Fatalf("kept %d body bytes, counted %d", len(c.body), resp.body)
		}
		if err == nil && (resp.status < 200 || resp.status > 999) {
			t.Fatalf("accepted status %d", resp.status)
		}
	})
}

// BenchmarkReadResponse is the parsing cost of a typical small response; it
// must not allocate.
func BenchmarkReadResponse(b *testing.B) {
	raw := "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 06:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n"
	sr := strings.NewReader(raw)
	br := bufio.NewReaderSize(sr, readBufferSize)
	c := &capture{}
	parse := func() {
		sr.Reset(raw)
		br.Reset(sr)
		if _, err := readResponse(br, false, 1<<20, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		parse()
	}
	if n := testing.AllocsPerRun(100, parse); n != 0 {
		b.Fatalf("readResponse allocates %v times", n)
	}
}

// splitCases are URLs for splitPlainURL: the common plain ones it splits,
// and ones it must leave to parseRequestLine (userinfo, fragments, bytes
// to escape, IPv6, https, no host or an empty port, a query with no path).
var splitCases = []struct {
	url   string
	split bool
}{
	{"http://127.0.0.1:8080/", true},
	{"http://127.0.0.1:8080", true},
	{"http://example.com", true},
	{"http://Example.COM/a/b", true},
	{"http://example.com/api/v1/items/42?id=7&x=a-b_c.d~e", true},
	{"http://h:80/p?", true},
	{"http://h/p??", true},
	{"http://h/p?a=%zz&b=/?:@!$'()*+,;=[]{}|\\^`\"<>", true},
	{"http://h//double//slash/", true},
	{"http://h/./../x", true},
	{"http://h:0080/x", true},
	{"http://h:99999/x", true},
	{"http://a-b.c-d.e/_~.-", true},
	{"http://-/", true},
	{"http://h/?q", true},
	{"http://h?q", false},
	{"http://h:/x", false},
	{"http://h:80:80/x", false},
	{"http://:80/x", false},
	{"http:///x", false},
	{"http://", false},
	{"http:/h/x", false},
	{"HTTP://h/x", false},
	{"https://h/x", false},
	{"ftp://h/x", false},
	{"http://user:pass@h/x", false},
	{"http://user@h/x", false},
	{"http://h/x#frag", false},
	{"http://h/x?a#frag", false},
	{"http://h/x?a b", false},
	{"http://h/a b", false},
	{"http://h/%41", false},
	{"http://h/%zz", false},
	{"http://h/a;b", false},
	{"http://h/a:b", false},
	{"http://h/a@b", false},
	{"http://h/é", false},
	{"http://h/x?é", false},
	{"http://h/x?\x7f", false},
	{"http://h/\x00", false},
	{"http://[::1]:8080/x", false},
	{"http://h_u/x", false},
	{"http://h%41/x", false},
	{"http://h\\x", false},
	{"", false},
}

// samePlainSplit fails t when splitPlainURL split raw to other than what
// parseRequestLine makes of it.
func samePlainSplit(t *testing.T, raw string) bool {
	t.Helper()
	authority, target, ok := splitPlainURL(raw)
	if !ok {
		return false
	}
	want, err := parseRequestLine("GET", raw)
	if err != nil {
		t.Fatalf("splitPlainURL(%q) = %q, %q; parseRequestLine: %v", raw, authority, target, err)
	}
	got := requestLine{method: "GET", target: target, host: authority, addr: plainAddr(authority)}
	if got != want {
		t.Fatalf("splitPlainURL(%q) = %+v, parseRequestLine %+v", raw, got, want)
	}
	return true
}

// The fast path splits the common URLs as parseRequestLine does, and
// leaves the others to it.
func TestSplitPlainURL(t *testing.T) {
	for _, tt := range splitCases {
		if got := samePlainSplit(t, tt.url); got != tt.split {
			t.Errorf("splitPlainURL(%q) ok = %v, want %v", tt.url, got, tt.split)
		}
	}
	var ok bool
	if n := testing.AllocsPerRun(100, func() { _, _, ok = splitPlainURL("http://example.com:8080/api/v1/items?id=7") }); n != 0 || !ok {
		t.Errorf("splitPlainURL allocates %v times (split: %v)", n, ok)
	}
}

func FuzzSplitPlainURL(f *testing.F) {
	for _, tt := range splitCases {
		f.Add(tt.url)
	}
	f.Fuzz(func(t *testing.T, raw string) { samePlainSplit(t, raw) })
}
