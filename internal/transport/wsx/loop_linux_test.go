//go:build linux

package wsx

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// The event loop end to end, against gorilla servers on 127.0.0.1.

// rec collects what a Poll hands on; it is used from the polling goroutine
// only.
type rec struct {
	frames []got
	downs  []down
}

type got struct {
	id, owner int
	p         []byte
	at        time.Duration
}

type down struct {
	id, owner int
	err       error
}

func (h *rec) Frame(id, owner int, p []byte, at time.Duration) {
	h.frames = append(h.frames, got{id, owner, bytes.Clone(p), at})
}

func (h *rec) Down(id, owner int, err error) { h.downs = append(h.downs, down{id, owner, err}) }

// testOwner is the owner the tests dial for; TestLoopOwner checks owners.
const testOwner = 7

func newTestLoop(t *testing.T) *Loop {
	t.Helper()
	sl, err := NewLoop(New(false))
	if err != nil {
		t.Fatal(err)
	}
	l, ok := sl.(*Loop)
	if !ok {
		t.Fatalf("NewLoop returned a %T", sl)
	}
	t.Cleanup(l.Close)
	return l
}

// loopServer serves every upgraded connection with fn; done is closed when
// the test ends, before the server closes. It returns the ws:// URL.
func loopServer(t *testing.T, up websocket.Upgrader, fn func(c *websocket.Conn, done <-chan struct{})) string {
	t.Helper()
	srv, done := startLoopServer(up, fn)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	return wsURL(srv)
}

func startLoopServer(up websocket.Upgrader, fn func(c *websocket.Conn, done <-chan struct{})) (*httptest.Server, chan struct{}) {
	done := make(chan struct{})
	srv := httptest.NewServer(testkit.WebSocket(up, func(c *websocket.Conn) { fn(c, done) }))
	return srv, done
}

func wsURL(srv *httptest.Server) string { return testkit.WSURL(srv.URL) }

func echo(c *websocket.Conn, _ <-chan struct{}) { testkit.Echo(c) }

// idle holds the connection without reading until the test ends.
func idle(_ *websocket.Conn, done <-chan struct{}) { <-done }

func dial(t *testing.T, l *Loop, c transport.SocketConfig) int {
	t.Helper()
	if c.Timeout == 0 {
		c.Timeout = 3 * time.Second
	}
	id, err := l.Dial(context.Background(), c, testOwner)
	if err != nil {
		t.Fatalf("Dial(%s): %v", c.URL, err)
	}
	return id
}

// pollUntil polls until cond holds, failing the test after 4 s.
func pollUntil(t *testing.T, l *Loop, h *rec, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 4 s for %s: %d frames, downs %v", what, len(h.frames), h.downs)
		}
		l.Poll(10*time.Millisecond, h)
	}
}

func TestLoopEcho(t *testing.T) {
	l := newTestLoop(t)
	id := dial(t, l, transport.SocketConfig{URL: loopServer(t, websocket.Upgrader{}, echo)})
	h := &rec{}
	const n = 100
	special := []int{0, 1, 125, 126, 127, 1000, 65535, 65536, 70000, 70000}
	sent := make([][]byte, n)
	sendAt := make([]time.Duration, n)
	endAt := make([]time.Duration, 0, n) // the end of the Poll that handed on each frame
	poll := func(d time.Duration) {
		l.Poll(d, h)
		end := l.Now()
		for len(endAt) < len(h.frames) {
			endAt = append(endAt, end)
		}
	}
	for i := range n {
		size := (i * 997) % 5000
		if i%10 == 0 {
			size = special[i/10]
		}
		sent[i] = append([]byte(fmt.Sprintf("%03d:", i)), bytes.Repeat([]byte{byte('a' + i%26)}, size)...)[:size]
		sendAt[i] = l.Now()
		if err := l.Send(id, sent[i]); err != nil {
			t.Fatalf("Send %d (%d bytes): %v", i, size, err)
		}
		poll(0)
	}
	deadline := time.Now().Add(4 * time.Second)
	for len(h.frames) < n && len(h.downs) == 0 && time.Now().Before(deadline) {
		poll(10 * time.Millisecond)
	}
	if len(h.downs) != 0 || len(h.frames) != n {
		t.Fatalf("%d of %d echoes came, downs %v", len(h.frames), n, h.downs)
	}
	const slack = 50 * time.Millisecond // clocks read apart: judged loosely
	for i, f := range h.frames {
		if f.id != id || f.owner != testOwner {
			t.Fatalf("frame %d on socket %d for owner %d, want %d for %d", i, f.id, f.owner, id, testOwner)
		}
		if !bytes.Equal(f.p, sent[i]) {
			t.Fatalf("frame %d: %d bytes (%.10q), want %d (%.10q)", i, len(f.p), f.p, len(sent[i]), sent[i])
		}
		if f.at < sendAt[i]-slack || f.at > endAt[i]+slack {
			t.Errorf("frame %d: at %v, not between its send at %v and its Poll's end at %v", i, f.at, sendAt[i], endAt[i])
		}
		if i > 0 && f.at < h.frames[i-1].at-slack {
			t.Errorf("frame %d at %v, well before frame %d at %v", i, f.at, i-1, h.frames[i-1].at)
		}
	}
}

// A frame read after Sleep is timed when the kernel received it, in
// offsets from the base SetBase set.
func TestLoopKernelReceiveTime(t *testing.T) {
	wrote := make(chan struct{}, 1)
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ <-chan struct{}) {
		for {
			mt, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(mt, p) != nil {
				return
			}
			wrote <- struct{}{}
		}
	})
	l := newTestLoop(t)
	l.SetBase(time.Now().Add(-time.Hour))
	if now := l.Now(); now < time.Hour || now > time.Hour+time.Minute {
		t.Fatalf("Now() = %v after SetBase an hour ago", now)
	}
	// The kernel stamps packets only once some socket asked, and turns
	// stamping on a moment after the first one does (net_enable_timestamp
	// defers it to a work queue): a stamped socket held through the test,
	// and a few tries, keep that moment out of the measure.
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err == nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		defer unix.Close(fd)
	}
	id := dial(t, l, transport.SocketConfig{URL: url})
	h := &rec{}
	for try := 1; ; try++ {
		h.frames = h.frames[:0]
		sendAt := l.Now()
		if err := l.Send(id, []byte("stamp me")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wrote:
		case <-time.After(3 * time.Second):
			t.Fatal("the server did not echo")
		}
		wroteAt := l.Now()
		l.Sleep(200 * time.Millisecond)
		pollAt := l.Now()
		pollUntil(t, l, h, "the echo", func() bool { return len(h.frames) > 0 })
		at := h.frames[0].at
		if at < sendAt-20*time.Millisecond {
			t.Fatalf("at %v, before the send at %v", at, sendAt)
		}
		// The kernel had the echo when the server's write returned
		// (loopback), 200 ms before the Poll: a Poll-time stamp would be
		// after pollAt.
		if at <= wroteAt+50*time.Millisecond && at < pollAt-100*time.Millisecond {
			return
		}
		if try == 3 {
			t.Fatalf("at %v: sent at %v, written back by %v, polled at %v", at, sendAt, wroteAt, pollAt)
		}
		t.Logf("try %d: at %v: sent at %v, written back by %v, polled at %v", try, at, sendAt, wroteAt, pollAt)
	}
}

// Frames a server writes right after its 101, before reading anything,
// reach the loop: the handshake's reader took nothing past the answer.
func TestLoopFramesRightAfterUpgrade(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 200)
	for _, pad := range []int{0, 300, 500, 1000, 5000} {
		t.Run(fmt.Sprint("answer padded by ", pad), func(t *testing.T) {
			hdr := http.Header{}
			if pad > 0 {
				hdr.Set("X-Pad", strings.Repeat("p", pad))
			}
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := (&websocket.Upgrader{}).Upgrade(w, r, hdr)
				if err != nil {
					return
				}
				defer c.Close()
				c.WriteMessage(websocket.TextMessage, []byte("first"))
				c.WriteMessage(websocket.BinaryMessage, big)
				c.WriteMessage(websocket.TextMessage, []byte("third"))
				<-done
			}))
			defer srv.Close()
			defer close(done)
			l := newTestLoop(t)
			id := dial(t, l, transport.SocketConfig{URL: wsURL(srv)})
			h := &rec{}
			pollUntil(t, l, h, "three frames", func() bool { return len(h.frames) >= 3 || len(h.downs) > 0 })
			if len(h.downs) > 0 || len(h.frames) != 3 {
				t.Fatalf("frames %d, downs %v", len(h.frames), h.downs)
			}
			for i, want := range [][]byte{[]byte("first"), big, []byte("third")} {
				if f := h.frames[i]; f.id != id || !bytes.Equal(f.p, want) {
					t.Fatalf("frame %d: socket %d, %d bytes; want socket %d, %d bytes", i, f.id, len(f.p), id, len(want))
				}
			}
		})
	}
}

// headConn, read in pieces of every size, takes the answer to its blank
// line and leaves what follows in the socket.
func TestHeadConnStopsAtBlankLine(t *testing.T) {
	head := []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-A: \r\n\r\n")
	rest := append([]byte{0x81, 5}, "hello\r\n\r\nmore"...)
	ln := testkit.Listen(t)
	for size := 1; size <= len(head)+len(rest)+1; size++ {
		cc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		// The answer in two writes, the second cutting the blank line, and
		// what follows in the same write as its end.
		sc.Write(head[:len(head)-3])
		go func() {
			time.Sleep(time.Millisecond)
			sc.Write(append(append([]byte(nil), head[len(head)-3:]...), rest...))
		}()
		cc.SetDeadline(time.Now().Add(3 * time.Second))
		hc := newHeadConn(cc).(*headConn)
		var taken []byte
		buf := make([]byte, size)
		for !hc.done {
			n, err := hc.Read(buf)
			if err != nil {
				t.Fatalf("size %d: %v after %q", size, err, taken)
			}
			taken = append(taken, buf[:n]...)
		}
		if !bytes.Equal(taken, head) {
			t.Fatalf("reads of %d took %q, want %q", size, taken, head)
		}
		left := make([]byte, len(rest))
		if _, err := io.ReadFull(cc, left); err != nil || !bytes.Equal(left, rest) {
			t.Fatalf("reads of %d left %q, %v; want %q", size, left, err, rest)
		}
		cc.Close()
		sc.Close()
	}
}

func TestLoopAnswersPings(t *testing.T) {
	pongs := make(chan string, 4)
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, done <-chan struct{}) {
		c.SetPongHandler(func(s string) error { pongs <- s; return nil })
		c.WriteControl(websocket.PingMessage, []byte("ping-42"), time.Now().Add(2*time.Second))
		c.WriteControl(websocket.PingMessage, nil, time.Now().Add(2*time.Second))
		c.WriteMessage(websocket.TextMessage, []byte("after the pings"))
		c.SetReadDeadline(time.Now().Add(4 * time.Second))
		c.ReadMessage() // runs the pong handler
	})
	l := newTestLoop(t)
	dial(t, l, transport.SocketConfig{URL: url})
	h := &rec{}
	var got []string
	pollUntil(t, l, h, "two pongs", func() bool {
		for {
			select {
			case s := <-pongs:
				got = append(got, s)
			default:
				return len(got) == 2
			}
		}
	})
	if got[0] != "ping-42" || got[1] != "" {
		t.Fatalf("pongs %q, want [ping-42 \"\"]", got)
	}
	pollUntil(t, l, h, "the frame", func() bool { return len(h.frames) > 0 })
	if len(h.frames) != 1 || string(h.frames[0].p) != "after the pings" || len(h.downs) != 0 {
		t.Fatalf("frames %d (%q), downs %v: the pings were handed on?", len(h.frames), h.frames[0].p, h.downs)
	}
}

func TestLoopFragmentedMessage(t *testing.T) {
	payload := bytes.Repeat([]byte("fragment!"), 112)[:1000]
	pongs := make(chan string, 1)
	url := loopServer(t, websocket.Upgrader{WriteBufferSize: 64}, func(c *websocket.Conn, done <-chan struct{}) {
		c.SetPongHandler(func(s string) error { pongs <- s; return nil })
		// In 10-byte writes: 64-byte frames, a ping among them.
		w, err := c.NextWriter(websocket.TextMessage)
		if err != nil {
			return
		}
		for i := 0; i < len(payload); i += 10 {
			w.Write(payload[i : i+10])
			if i == 500 {
				c.WriteControl(websocket.PingMessage, []byte("among"), time.Now().Add(2*time.Second))
			}
		}
		w.Close()
		// In one write: a frame of 1000 and an empty last one.
		w, err = c.NextWriter(websocket.BinaryMessage)
		if err != nil {
			return
		}
		w.Write(payload)
		w.Close()
		c.SetReadDeadline(time.Now().Add(4 * time.Second))
		c.ReadMessage()
	})
	l := newTestLoop(t)
	id := dial(t, l, transport.SocketConfig{URL: url, MaxFrameBytes: 1000})
	h := &rec{}
	pollUntil(t, l, h, "two messages", func() bool { return len(h.frames) >= 2 || len(h.downs) > 0 })
	if len(h.downs) != 0 || len(h.frames) != 2 {
		t.Fatalf("%d frames, downs %v", len(h.frames), h.downs)
	}
	for i, f := range h.frames {
		if f.id != id || !bytes.Equal(f.p, payload) {
			t.Fatalf("message %d: socket %d, %d bytes, want %d", i, f.id, len(f.p), len(payload))
		}
	}
	select {
	case s := <-pongs:
		if s != "among" {
			t.Fatalf("pong %q", s)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the ping among the fragments was not answered")
	}
}

func TestLoopServerCloses(t *testing.T) {
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, done <-chan struct{}) {
		c.WriteMessage(websocket.TextMessage, []byte("last words"))
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye"), time.Now().Add(2*time.Second))
	})
	l := newTestLoop(t)
	id := dial(t, l, transport.SocketConfig{URL: url})
	h := &rec{}
	pollUntil(t, l, h, "the Down", func() bool { return len(h.downs) > 0 })
	if len(h.downs) != 1 || h.downs[0].id != id || h.downs[0].owner != testOwner || h.downs[0].err == nil {
		t.Fatalf("downs %v, want one of socket %d with an error", h.downs, id)
	}
	var ce *closeError
	if !errors.As(h.downs[0].err, &ce) || ce.code != websocket.CloseGoingAway {
		t.Errorf("Down's error %v, want the close 1001", h.downs[0].err)
	}
	if len(h.frames) != 1 || string(h.frames[0].p) != "last words" {
		t.Errorf("frames %d, want the one before the close", len(h.frames))
	}
	if err := l.Send(id, []byte("anyone?")); err == nil {
		t.Fatal("Send on a socket that went down succeeded")
	}
	for range 5 {
		l.Poll(0, h)
	}
	if len(h.downs) != 1 {
		t.Fatalf("downs %v: reported again", h.downs)
	}

	// The loop goes on: a new socket (perhaps of the same number) echoes.
	id2 := dial(t, l, transport.SocketConfig{URL: loopServer(t, websocket.Upgrader{}, echo)})
	if err := l.Send(id2, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, l, h, "the echo", func() bool { return len(h.frames) > 1 })
	if f := h.frames[1]; f.id != id2 || string(f.p) != "still here" {
		t.Fatalf("echo on socket %d: %q", f.id, f.p)
	}
}

// A server that just hangs up (no close frame) is a Down too.
func TestLoopServerHangsUp(t *testing.T) {
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ <-chan struct{}) {})
	l := newTestLoop(t)
	id := dial(t, l, transport.SocketConfig{URL: url})
	h := &rec{}
	pollUntil(t, l, h, "the Down", func() bool { return len(h.downs) > 0 })
	if len(h.downs) != 1 || h.downs[0].id != id || h.downs[0].err == nil {
		t.Fatalf("downs %v", h.downs)
	}
}

func TestLoopReadLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		up   websocket.Upgrader
		send func(c *websocket.Conn)
	}{
		{"one frame", websocket.Upgrader{}, func(c *websocket.Conn) {
			c.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 1024)) // at the limit: passes
			c.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 4096))
		}},
		{"fragments", websocket.Upgrader{WriteBufferSize: 64}, func(c *websocket.Conn) {
			c.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 1024))
			w, err := c.NextWriter(websocket.TextMessage)
			if err != nil {
				return
			}
			for range 200 {
				w.Write([]byte("0123456789"))
			}
			w.Close()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := loopServer(t, c.up, func(conn *websocket.Conn, done <-chan struct{}) {
				conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
				c.send(conn)
				<-done
			})
			l := newTestLoop(t)
			id := dial(t, l, transport.SocketConfig{URL: url, MaxFrameBytes: 1024})
			h := &rec{}
			pollUntil(t, l, h, "the Down", func() bool { return len(h.downs) > 0 })
			if len(h.frames) != 1 || len(h.frames[0].p) != 1024 {
				t.Errorf("%d frames, want the 1024-byte one", len(h.frames))
			}
			if d := h.downs[0]; d.id != id || d.err == nil || !strings.Contains(d.err.Error(), "read limit") {
				t.Fatalf("Down(%d, %v), want socket %d and the read limit", d.id, d.err, id)
			}
		})
	}
}

// stall dials a server that never reads and sends 1 MB frames until the
// kernel takes no more; it returns the socket and the frame.
func stall(t *testing.T, l *Loop, url string, wto time.Duration) (int, *wsock, []byte) {
	t.Helper()
	id := dial(t, l, transport.SocketConfig{URL: url, WriteTimeout: wto})
	frame := bytes.Repeat([]byte("s"), 1<<20)
	if err := l.Send(id, frame); err != nil {
		t.Fatalf("the first Send: %v", err)
	}
	s := l.sock(id)
	if s == nil {
		t.Fatal("the socket is not in the loop after a Send")
	}
	for i := 0; len(s.out) == 0; i++ {
		if i == 64 {
			t.Fatal("the kernel took 64 MB for a target that does not read")
		}
		if err := l.Send(id, frame); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	return id, s, frame
}

// A target that stops reading: the unsent bytes wait past WriteTimeout and
// the socket goes down, leaking nothing.
func TestLoopWriteTimeout(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	srv, done := startLoopServer(websocket.Upgrader{}, idle)
	sl, err := NewLoop(New(false))
	if err != nil {
		t.Fatal(err)
	}
	l := sl.(*Loop)
	id, s, _ := stall(t, l, wsURL(srv), 200*time.Millisecond)
	if len(s.out) > maxUnsent {
		t.Fatalf("%d bytes kept, over maxUnsent", len(s.out))
	}
	start := time.Now()
	h := &rec{}
	pollUntil(t, l, h, "the Down", func() bool { return len(h.downs) > 0 })
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Errorf("down after %v, before the 200 ms write timeout", el)
	}
	if d := h.downs[0]; d.id != id || !errors.Is(d.err, os.ErrDeadlineExceeded) {
		t.Errorf("Down(%d, %v), want socket %d and a deadline", d.id, d.err, id)
	}
	if err := l.Send(id, []byte("x")); err == nil {
		t.Error("Send after the Down succeeded")
	}
	l.Close()
	close(done)
	srv.Close()
	goleak.VerifyNone(t, leaks)
}

// A target that stops reading while frames keep coming: past maxUnsent,
// Send fails and the socket goes down, with no write timeout set.
func TestLoopWriteBufferFull(t *testing.T) {
	l := newTestLoop(t)
	id, s, frame := stall(t, l, loopServer(t, websocket.Upgrader{}, idle), 0)
	var err error
	for i := 0; err == nil; i++ {
		if i > maxUnsent/len(frame)+2 {
			t.Fatalf("%d MB kept and Send still succeeds", len(s.out)>>20)
		}
		err = l.Send(id, frame)
	}
	if !strings.Contains(err.Error(), "buffer full") {
		t.Errorf("Send: %v, want the write buffer full", err)
	}
	h := &rec{}
	l.Poll(0, h)
	if len(h.downs) != 1 || h.downs[0].id != id || h.downs[0].err != err {
		t.Fatalf("downs %v, want socket %d with %v", h.downs, id, err)
	}
	if err := l.Send(id, frame); err == nil {
		t.Fatal("Send after the Down succeeded")
	}
}

// A target that reads slowly drains what was kept, in order.
func TestLoopDrainsKeptBytes(t *testing.T) {
	release := make(chan struct{})
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, done <-chan struct{}) {
		select {
		case <-release:
		case <-done:
			return
		}
		echo(c, done)
	})
	l := newTestLoop(t)
	id, s, frame := stall(t, l, url, 3*time.Second)
	kept := len(s.out)
	tail := []byte("the last one")
	if err := l.Send(id, tail); err != nil {
		t.Fatal(err)
	}
	if len(s.out) <= kept {
		t.Fatal("a frame sent behind kept bytes was not kept behind them")
	}
	close(release)
	h := &rec{}
	pollUntil(t, l, h, "the echoes", func() bool {
		return len(h.downs) > 0 || len(h.frames) > 0 && bytes.Equal(h.frames[len(h.frames)-1].p, tail)
	})
	if len(h.downs) > 0 {
		t.Fatalf("downs %v", h.downs)
	}
	for i, f := range h.frames[:len(h.frames)-1] {
		if !bytes.Equal(f.p, frame) {
			t.Fatalf("echo %d: %d bytes, want %d", i, len(f.p), len(frame))
		}
	}
	if len(s.out) != 0 {
		t.Fatalf("%d bytes still kept", len(s.out))
	}
}

func TestLoopWake(t *testing.T) {
	l := newTestLoop(t)
	h := &rec{}
	go func() {
		time.Sleep(50 * time.Millisecond)
		l.Wake()
	}()
	start := time.Now()
	l.Poll(time.Second, h)
	if el := time.Since(start); el > 900*time.Millisecond {
		t.Fatalf("Poll(1 s) woken after 50 ms returned after %v", el)
	}
	// A Wake before the Poll ends it at once too.
	l.Wake()
	start = time.Now()
	l.Poll(time.Second, h)
	if el := time.Since(start); el > 900*time.Millisecond {
		t.Fatalf("Poll(1 s) after a Wake returned after %v", el)
	}
	// Wakes from many goroutines while Polls run.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				l.Wake()
			}
		}()
	}
	for range 20 {
		l.Poll(time.Millisecond, h)
	}
	wg.Wait()
	if len(h.frames)+len(h.downs) != 0 {
		t.Fatalf("a Wake was handed on: %v %v", h.frames, h.downs)
	}
}

// Sockets dialed from several goroutines while the loop polls are each
// their own.
func TestLoopConcurrentDials(t *testing.T) {
	url := loopServer(t, websocket.Upgrader{}, echo)
	l := newTestLoop(t)
	const n = 8
	ids := make(chan int, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			id, err := l.Dial(context.Background(), transport.SocketConfig{URL: url, Timeout: 3 * time.Second}, testOwner)
			if err != nil {
				errs <- err
				return
			}
			ids <- id
		}()
	}
	h := &rec{}
	want := map[int]string{}
	deadline := time.Now().Add(4 * time.Second)
	for len(want) < n {
		select {
		case id := <-ids:
			if _, dup := want[id]; dup {
				t.Fatalf("socket %d dialed twice", id)
			}
			want[id] = fmt.Sprint("socket ", id)
			if err := l.Send(id, []byte(want[id])); err != nil {
				t.Fatal(err)
			}
		case err := <-errs:
			t.Fatal(err)
		default:
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d dials in 4 s", len(want), n)
			}
			l.Poll(time.Millisecond, h)
		}
	}
	pollUntil(t, l, h, "the echoes", func() bool { return len(h.frames) >= n || len(h.downs) > 0 })
	if len(h.downs) > 0 || len(h.frames) != n {
		t.Fatalf("%d frames, downs %v", len(h.frames), h.downs)
	}
	for _, f := range h.frames {
		if want[f.id] != string(f.p) {
			t.Fatalf("socket %d got %q, want %q", f.id, f.p, want[f.id])
		}
		delete(want, f.id)
	}
}

func TestLoopSendUnknownSocket(t *testing.T) {
	l := newTestLoop(t)
	for _, id := range []int{-1, 0, 1, 2, 1 << 20} {
		if err := l.Send(id, []byte("x")); err == nil {
			t.Errorf("Send(%d) on an empty loop succeeded", id)
		}
	}
	l.Poll(0, &rec{})
}

func TestLoopDialFailures(t *testing.T) {
	t.Run("wss", func(t *testing.T) {
		l := newTestLoop(t)
		start := time.Now()
		if _, err := l.Dial(context.Background(), transport.SocketConfig{URL: "wss://127.0.0.1:1/", Timeout: 3 * time.Second}, testOwner); err == nil {
			t.Fatal("a wss:// Dial succeeded")
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("the wss:// Dial failed after %v, not at once", el)
		}
	})
	t.Run("403", func(t *testing.T) {
		srv := testkit.NewTarget(t, testkit.TargetConfig{Status: http.StatusForbidden})
		l := newTestLoop(t)
		_, err := l.Dial(context.Background(), transport.SocketConfig{URL: testkit.WSURL(srv.URL), Timeout: 3 * time.Second}, testOwner)
		var he *transport.HandshakeError
		if !errors.As(err, &he) || he.Status != http.StatusForbidden {
			t.Fatalf("Dial: %v, want a HandshakeError of 403", err)
		}
		if k := transport.ClassifySocketError(err); k != transport.HTTP4xx {
			t.Errorf("classified %v", k)
		}
	})
	// A server that accepts and never answers: the handshake's timeout, or
	// its context, ends the read of the answer.
	silent := func(t *testing.T) string {
		var mu sync.Mutex
		var conns []net.Conn
		ln := testkit.ServeTCP(t, func(c net.Conn) { // kept open until the test ends
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		})
		t.Cleanup(func() {
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
		return "ws://" + ln.Addr().String() + "/"
	}
	t.Run("handshake timeout", func(t *testing.T) {
		l := newTestLoop(t)
		start := time.Now()
		_, err := l.Dial(context.Background(), transport.SocketConfig{URL: silent(t), Timeout: 200 * time.Millisecond}, testOwner)
		if err == nil {
			t.Fatal("a Dial to a silent server succeeded")
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Fatalf("the handshake's 200 ms timeout ended it after %v", el)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		l := newTestLoop(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := l.Dial(ctx, transport.SocketConfig{URL: silent(t)}, testOwner)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial: %v, want the context's cancel", err)
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Fatalf("the cancel ended the handshake after %v", el)
		}
	})
}

// Close closes every socket, adopted or not; a later Dial fails and closes
// its connection; Close and Wake after Close are harmless.
func TestLoopClose(t *testing.T) {
	ended := make(chan error, 4)
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ <-chan struct{}) {
		c.SetReadDeadline(time.Now().Add(4 * time.Second))
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				ended <- err
				return
			}
		}
	})
	sl, err := NewLoop(New(false))
	if err != nil {
		t.Fatal(err)
	}
	l := sl.(*Loop)
	a := dial(t, l, transport.SocketConfig{URL: url})
	if err := l.Send(a, []byte{}); err != nil { // a is adopted, b is not
		t.Fatal(err)
	}
	dial(t, l, transport.SocketConfig{URL: url})
	l.Close()
	l.Close()
	l.Wake()
	for range 2 {
		select {
		case err := <-ended:
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("Close left a connection open")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close left a connection open")
		}
	}
	if _, err := l.Dial(context.Background(), transport.SocketConfig{URL: url, Timeout: 3 * time.Second}, testOwner); err == nil {
		t.Fatal("a Dial after Close succeeded")
	}
	select {
	case <-ended:
	case <-time.After(3 * time.Second):
		t.Fatal("the Dial after Close left its connection open")
	}
}

// A server that cuts the connection while frames are still coming: the
// socket goes down (a reset or a broken pipe), the process lives on.
func TestLoopPeerResets(t *testing.T) {
	url := loopServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ <-chan struct{}) {
		c.ReadMessage()
		// Unread bytes make the close a reset.
		c.NetConn().(*net.TCPConn).SetLinger(0)
	})
	l := newTestLoop(t)
	id := dial(t, l, transport.SocketConfig{URL: url})
	h := &rec{}
	frame := bytes.Repeat([]byte("r"), 64<<10)
	deadline := time.Now().Add(4 * time.Second)
	for len(h.downs) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no Down in 4 s from a server that hung up")
		}
		l.Send(id, frame)
		l.Poll(time.Millisecond, h)
	}
	if d := h.downs[0]; d.id != id || d.err == nil {
		t.Fatalf("Down(%d, %v)", d.id, d.err)
	}
	if err := l.Send(id, frame); err == nil {
		t.Fatal("Send after the Down succeeded")
	}
}

// bareLFServer answers a handshake with a 101 whose lines end in a bare
// LF, as HTTP lets a client accept (net/http and so gorilla do), and sends
// a frame "hi" in the same write; it returns the ws:// URL.
func bareLFServer(t *testing.T) string {
	ln := testkit.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		c.SetDeadline(time.Now().Add(4 * time.Second))
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		answer := "HTTP/1.1 101 Switching Protocols\nUpgrade: websocket\nConnection: Upgrade\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(sum[:]) + "\n\n"
		c.Write(append([]byte(answer), 0x81, 2, 'h', 'i'))
		io.Copy(io.Discard, c)
	})
	return "ws://" + ln.Addr().String() + "/"
}

func TestLoopBareLFAnswer(t *testing.T) {
	// The goroutine socket reads the frame.
	s, err := New(false).Dial(context.Background(), transport.SocketConfig{URL: bareLFServer(t), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatalf("goroutine Dial: %v", err)
	}
	s.(*socket).c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if p, err := s.Read(); err != nil || string(p) != "hi" {
		t.Fatalf("the goroutine socket read %q, %v", p, err)
	}
	s.Close()

	l := newTestLoop(t)
	id, err := l.Dial(context.Background(), transport.SocketConfig{URL: bareLFServer(t), Timeout: 3 * time.Second}, testOwner)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	h := &rec{}
	deadline := time.Now().Add(time.Second)
	for len(h.frames)+len(h.downs) == 0 && time.Now().Before(deadline) {
		l.Poll(10*time.Millisecond, h)
	}
	if len(h.frames) != 1 || h.frames[0].id != id || string(h.frames[0].p) != "hi" {
		t.Fatalf("frames %d, downs %v; want the frame sent with the answer", len(h.frames), h.downs)
	}
}
