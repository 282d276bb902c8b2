package httpx

import (
	"bufio"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// rawServer answers each request on a connection with reply(n, request),
// n counting requests over all connections from 0; a nil reply closes the
// connection without answering.
func rawServer(t *testing.T, reply func(n int64) []byte) (addr string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	ln := testkit.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break // the tests send no bodies
				}
			}
			n := requests.Add(1) - 1
			out := reply(n)
			if out == nil {
				return
			}
			c.Write(out)
		}
	})
	return ln.Addr().String(), requests
}

const okReply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// A server that reads a POST and closes without answering fails that POST:
// it may have acted on it, so it is never sent again behind the user's back.
func TestPostNotRetriedAfterSilentClose(t *testing.T) {
	addr, requests := rawServer(t, func(n int64) []byte {
		if n%2 == 1 {
			return nil
		}
		return []byte(okReply)
	})
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	req := &transport.Request{Method: "POST", URL: "http://" + addr + "/", Static: true}
	failed := 0 // the server reads each POST, so none carries a body here
	for range 20 {
		var out transport.Outcome
		s.Do(req, &out)
		if out.Kind != transport.OK {
			failed++
		}
		if out.Retried {
			t.Fatalf("a POST was retried")
		}
	}
	if failed != 10 || requests.Load() != 20 {
		t.Errorf("failed %d of 20, server saw %d; want 10 failed and 20 seen", failed, requests.Load())
	}
}

// An idle connection the server closed is noticed before it is used: even
// a POST goes out once, on a new connection, and nothing is retried.
func TestIdleCloseDetected(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	ln := testkit.ServeTCP(t, func(c net.Conn) { // answer one request, then close while idle
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
		}
		seen.Add(1)
		c.Write([]byte(okReply))
		time.Sleep(50 * time.Millisecond)
	})
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	req := &transport.Request{Method: "POST", URL: "http://" + ln.Addr().String() + "/", Static: true}
	for i := range 2 {
		var out transport.Outcome
		s.Do(req, &out)
		if out.Kind != transport.OK || out.Retried {
			t.Fatalf("POST %d = %v (retried %v), want ok, not retried", i, out.Kind, out.Retried)
		}
		time.Sleep(idleCheck + 100*time.Millisecond)
	}
	if n := seen.Load(); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

// Bytes after a complete response do not answer the next request.
func TestExtraResponseDropsConnection(t *testing.T) {
	addr, _ := rawServer(t, func(n int64) []byte {
		if n == 0 {
			return []byte(okReply + okReply) // two answers to one request
		}
		time.Sleep(100 * time.Millisecond)
		return []byte("HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")
	})
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	req := &transport.Request{Method: "GET", URL: "http://" + addr + "/", Static: true}
	var first, second transport.Outcome
	s.Do(req, &first)
	s.Do(req, &second)
	if first.Kind != transport.OK || second.Kind != transport.HTTP5xx {
		t.Errorf("outcomes = %v, %v; want ok, then the server's real 500", first.Kind, second.Kind)
	}
}

// A chunk size near the int64 limit is a protocol failure, captured or not,
// and never a crash.
func TestHugeChunkSize(t *testing.T) {
	addr, _ := rawServer(t, func(n int64) []byte {
		return []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n7fffffffffffffff\r\nxxxx")
	})
	ex := New(Config{Timeout: time.Second, MaxBodyBytes: 1024})
	defer ex.Close()
	for _, capture := range []bool{false, true} {
		var out transport.Outcome
		ex.Session().Do(&transport.Request{Method: "GET", URL: "http://" + addr + "/", Capture: capture}, &out)
		if out.Kind != transport.Protocol || out.BytesIn > 1024 {
			t.Errorf("capture=%v: %v with %d bytes in, want protocol within the cap", capture, out.Kind, out.BytesIn)
		}
	}
}

// The bodies kept for checks are bounded for the whole process, not only
// per exchange: a body that would take them past the budget fails in
// ceiling itself (generator), the budget is whole again once the exchange
// is over, and a body within it is kept as ever.
func TestKeptBodiesBudget(t *testing.T) {
	old := kept.limit.Load()
	kept.limit.Store(64 << 10)
	t.Cleanup(func() { kept.limit.Store(old) })
	big := make([]byte, 200<<10)
	addr, _ := rawServer(t, func(n int64) []byte {
		if n%2 == 0 {
			return append([]byte("HTTP/1.1 200 OK\r\nContent-Length: 204800\r\n\r\n"), big...)
		}
		return []byte(okReply)
	})
	ex := New(Config{Timeout: time.Second})
	defer ex.Close()
	s := ex.Session()
	var out transport.Outcome
	s.Do(&transport.Request{Method: "GET", URL: "http://" + addr + "/big", Capture: true}, &out)
	if out.Kind != transport.Generator || kept.used.Load() != 0 {
		t.Errorf("a body past the budget: %v, budget used %d after it; want generator, 0", out.Kind, kept.used.Load())
	}
	s.Do(&transport.Request{Method: "GET", URL: "http://" + addr + "/ok", Capture: true}, &out)
	if out.Kind != transport.OK || string(out.Body) != "ok" || kept.used.Load() != 0 {
		t.Errorf("a small body: %v %q, budget used %d after it; want ok, kept, 0", out.Kind, out.Body, kept.used.Load())
	}
}
