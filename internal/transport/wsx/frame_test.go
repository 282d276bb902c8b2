package wsx

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The frame codec held to RFC 6455 by hand and to gorilla on the wire: a
// raw client (a handshake written by hand) captures the bytes a gorilla
// server writes, and writes frames made by appendFrame for a gorilla
// server to read.

// rfcKey is the sample nonce of RFC 6455 section 1.3 and its accept value.
const (
	rfcKey    = "dGhlIHNhbXBsZSBub25jZQ=="
	rfcAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
)

// gorillaServer serves one upgraded connection per request with fn, then
// closes it; it returns the server's host:port.
func gorillaServer(tb testing.TB, up websocket.Upgrader, fn func(c *websocket.Conn)) string {
	tb.Helper()
	srv := httptest.NewServer(testkit.WebSocket(up, fn))
	tb.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// rawHandshake opens a TCP connection to addr and upgrades it by hand; the
// reader returned reads what the server sends after its answer.
func rawHandshake(tb testing.TB, addr string) (net.Conn, *bufio.Reader) {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(4 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + rfcKey + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		tb.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != rfcAccept {
		tb.Fatalf("handshake answered %d, accept %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Accept"))
	}
	return conn, br
}

// capture returns the raw bytes a gorilla server running script sends
// after the handshake, to the end of the connection.
func capture(tb testing.TB, up websocket.Upgrader, script func(c *websocket.Conn)) []byte {
	tb.Helper()
	_, br := rawHandshake(tb, gorillaServer(tb, up, script))
	b, err := io.ReadAll(br)
	if err != nil {
		tb.Fatalf("reading the server's frames: %v (after %d bytes)", err, len(b))
	}
	return b
}

// pattern returns n bytes that differ from one offset to the next.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i/251) + seed
	}
	return b
}

// gorillaScript is what the captured server sends: messages of both kinds
// and of every length encoding (the 64-bit one when big), a message
// fragmented in 64-byte frames with a ping among them, pings and pongs,
// and a close 1001.
func gorillaScript(big bool) func(c *websocket.Conn) {
	return func(c *websocket.Conn) {
		dl := time.Now().Add(3 * time.Second)
		c.SetWriteDeadline(dl)
		c.WriteMessage(websocket.TextMessage, []byte("hello"))
		c.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2, 0xFF, 0x80, 0x7F})
		c.WriteMessage(websocket.TextMessage, nil)
		c.WriteMessage(websocket.BinaryMessage, pattern(125, 1))
		c.WriteMessage(websocket.BinaryMessage, pattern(126, 2))
		if big {
			c.WriteMessage(websocket.BinaryMessage, pattern(65535, 3))
			c.WriteMessage(websocket.BinaryMessage, pattern(65536, 4))
			c.WriteMessage(websocket.BinaryMessage, pattern(70000, 5))
		}
		w, err := c.NextWriter(websocket.TextMessage)
		if err != nil {
			return
		}
		frag := fragPayload()
		for i := 0; i < len(frag); i += 50 {
			w.Write(frag[i:min(i+50, len(frag))])
			if i == 500 {
				c.WriteControl(websocket.PingMessage, []byte("mid"), dl)
			}
		}
		w.Close()
		c.WriteControl(websocket.PingMessage, []byte("ping-1"), dl)
		c.WriteControl(websocket.PongMessage, []byte("pong-1"), dl)
		c.WriteMessage(websocket.TextMessage, []byte("after"))
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1001, "bye"), dl)
	}
}

func fragPayload() []byte {
	return []byte(strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz", 28)[:1000])
}

// gorillaWant is what parse must find in gorillaScript's bytes.
func gorillaWant(big bool) []event {
	want := []event{
		{op: opText, p: "hello"},
		{op: opText, p: string([]byte{0, 1, 2, 0xFF, 0x80, 0x7F})},
		{op: opText, p: ""},
		{op: opText, p: string(pattern(125, 1))},
		{op: opText, p: string(pattern(126, 2))},
	}
	if big {
		want = append(want,
			event{op: opText, p: string(pattern(65535, 3))},
			event{op: opText, p: string(pattern(65536, 4))},
			event{op: opText, p: string(pattern(70000, 5))})
	}
	return append(want,
		event{op: opPing, p: "mid"}, // it came among the fragments
		event{op: opText, p: string(fragPayload())},
		event{op: opPing, p: "ping-1"},
		event{op: opPong, p: "pong-1"},
		event{op: opText, p: "after"})
}

// event is what a sink got: a data message (op opText, whatever its
// frames said) or a control frame.
type event struct {
	op byte
	p  string
}

func (e event) String() string {
	p := e.p
	if len(p) > 20 {
		p = fmt.Sprintf("%q…(%d bytes)", p[:20], len(e.p))
	} else {
		p = fmt.Sprintf("%q", p)
	}
	return fmt.Sprintf("{op %d %s}", e.op, p)
}

// sink records what parse passes on, copying it (it is only lent).
type sink struct{ got []event }

func (s *sink) data(p []byte)             { s.got = append(s.got, event{op: opText, p: string(p)}) }
func (s *sink) control(op byte, p []byte) { s.got = append(s.got, event{op: op, p: string(p)}) }

// feed hands data to a message of limit limit in pieces of the lengths next
// returns, keeping the unused rest as the loop does; it returns what came
// out, the bytes used in all and the error that ended it.
func feed(t testing.TB, limit int64, data []byte, next func(left int) int) ([]event, int, error) {
	t.Helper()
	m := message{max: limit}
	var s sink
	var pending []byte
	total := 0
	for off := 0; off < len(data); {
		n := min(max(next(len(data)-off), 1), len(data)-off)
		pending = append(pending, data[off:off+n]...)
		off += n
		used, err := m.parse(pending, &s)
		if used < 0 || used > len(pending) {
			t.Fatalf("parse used %d of %d bytes", used, len(pending))
		}
		total += used
		if err != nil {
			return s.got, total, err
		}
		if used > 0 {
			pending = append(pending[:0], pending[used:]...)
		}
	}
	return s.got, total, nil
}

func sameEvents(t *testing.T, what string, got, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: event %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func wantClose(t *testing.T, what string, err error, code int) {
	t.Helper()
	var ce *closeError
	if !errors.As(err, &ce) || ce.code != code {
		t.Fatalf("%s: ended with %v, want a close %d", what, err, code)
	}
}

// The capture holds what the test means it to: a fragmented message of
// many frames, a ping among them, and every length encoding.
func TestGorillaCaptureShape(t *testing.T) {
	b := capture(t, websocket.Upgrader{WriteBufferSize: 64}, gorillaScript(true))
	ops := map[byte]int{}
	lens := map[int]int{}
	fragPing := false
	inFrag := false
	for off := 0; off < len(b); {
		h, ok, err := parseHeader(b[off:])
		if err != nil || !ok {
			t.Fatalf("header at %d: ok %v, %v", off, ok, err)
		}
		ops[h.op]++
		lens[h.len]++
		switch {
		case h.op <= opBinary && !h.fin:
			inFrag = true
		case h.op == opContinuation && h.fin:
			inFrag = false
		case h.op == opPing && inFrag:
			fragPing = true
		}
		off += h.len + int(h.size)
		if off > len(b) {
			t.Fatalf("the last frame runs past the capture (%d > %d)", off, len(b))
		}
	}
	if ops[opContinuation] < 10 || !fragPing || ops[opClose] != 1 || lens[2] == 0 || lens[4] == 0 || lens[10] == 0 {
		t.Fatalf("capture: opcodes %v, header lengths %v, ping among fragments %v", ops, lens, fragPing)
	}
}

// parse finds gorilla's messages, control frames and close, however the
// bytes are cut.
func TestParseGorillaFrames(t *testing.T) {
	small := capture(t, websocket.Upgrader{WriteBufferSize: 64}, gorillaScript(false))
	want := gorillaWant(false)
	check := func(what string, got []event, err error, used, total int) {
		t.Helper()
		sameEvents(t, what, got, want)
		wantClose(t, what, err, 1001)
		if used != total {
			t.Fatalf("%s: used %d of %d bytes", what, used, total)
		}
	}
	// Pieces of every size.
	for n := 1; n <= len(small); n++ {
		got, used, err := feed(t, 1<<20, small, func(int) int { return n })
		check(fmt.Sprintf("pieces of %d", n), got, err, used, len(small))
	}
	// Two pieces, cut everywhere.
	for cut := 0; cut <= len(small); cut++ {
		first := true
		got, used, err := feed(t, 1<<20, small, func(left int) int {
			if first {
				first = false
				return cut
			}
			return left
		})
		check(fmt.Sprintf("cut at %d", cut), got, err, used, len(small))
	}

	big := capture(t, websocket.Upgrader{WriteBufferSize: 64}, gorillaScript(true))
	want = gorillaWant(true)
	for _, n := range []int{1, 2, 3, 7, 64, 1000, 4096, 64 << 10, len(big)} {
		got, used, err := feed(t, 1<<20, big, func(int) int { return n })
		check(fmt.Sprintf("big, pieces of %d", n), got, err, used, len(big))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		got, used, err := feed(t, 1<<20, big, func(left int) int { return 1 + rng.IntN(min(left, 1+rng.IntN(20000))) })
		check(fmt.Sprintf("big, random pieces #%d", i), got, err, used, len(big))
	}
	// The limit is a message's, not a frame's: the 70,000-byte one passes
	// at exactly its size, and fails a byte under.
	if _, _, err := feed(t, 70000, big, func(left int) int { return left }); !isClose(err, 1001) {
		t.Fatalf("limit 70000: %v, want the close", err)
	}
	if got, _, err := feed(t, 69999, big, func(left int) int { return left }); !errors.Is(err, errTooLong) || len(got) != 7 {
		t.Fatalf("limit 69999: %v after %d events, want errTooLong after 7", err, len(got))
	}
}

func isClose(err error, code int) bool {
	var ce *closeError
	return errors.As(err, &ce) && ce.code == code
}

// srvFrame builds a server's (unmasked) frame by hand.
func srvFrame(fin bool, op byte, p []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	b := []byte{b0}
	switch n := len(p); {
	case n < 126:
		b = append(b, byte(n))
	case n <= 0xFFFF:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, p...)
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestParseErrors(t *testing.T) {
	x := func(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }
	cases := []struct {
		name string
		max  int64
		in   []byte
		want error
		// events before the error
		before int
	}{
		{"RSV1", 100, []byte{0xC1, 0x00}, errProtocol, 0},
		{"RSV2", 100, []byte{0xA1, 0x00}, errProtocol, 0},
		{"RSV3", 100, []byte{0x91, 0x00}, errProtocol, 0},
		{"RSV on a continuation", 100, cat(srvFrame(false, opText, x(1)), []byte{0x90, 0x00}), errProtocol, 0},
		{"masked", 100, []byte{0x81, 0x81, 1, 2, 3, 4, 'x'}, errProtocol, 0},
		{"masked, header only", 100, []byte{0x81, 0x80}, errProtocol, 0},
		{"opcode 3", 100, []byte{0x83, 0x00}, errProtocol, 0},
		{"opcode 7", 100, []byte{0x87, 0x00}, errProtocol, 0},
		{"opcode 0xB", 100, []byte{0x8B, 0x00}, errProtocol, 0},
		{"opcode 0xF", 100, []byte{0x8F, 0x00}, errProtocol, 0},
		{"unknown opcode after a message", 100, cat(srvFrame(true, opText, x(3)), []byte{0x84, 0x00}), errProtocol, 1},
		{"fragmented ping", 100, srvFrame(false, opPing, nil), errProtocol, 0},
		{"fragmented close", 100, srvFrame(false, opClose, []byte{3, 0xE8}), errProtocol, 0},
		{"ping of 126", 1000, srvFrame(true, opPing, x(126)), errProtocol, 0},
		{"pong of 126, header only", 1000, []byte{0x8A, 126, 0, 126}, errProtocol, 0},
		{"continuation without a start", 100, srvFrame(true, opContinuation, x(2)), errProtocol, 0},
		{"continuation after a whole message", 100, cat(srvFrame(true, opText, x(2)), srvFrame(true, opContinuation, x(2))), errProtocol, 1},
		{"text inside a fragmented text", 100, cat(srvFrame(false, opText, x(2)), srvFrame(true, opText, x(2))), errProtocol, 0},
		{"binary inside a fragmented text", 100, cat(srvFrame(false, opText, x(2)), srvFrame(false, opBinary, x(2))), errProtocol, 0},
		{"frame over max", 10, srvFrame(true, opText, x(11)), errTooLong, 0},
		{"frame over max, header only", 10, []byte{0x82, 126, 0xFF, 0xFF}, errTooLong, 0},
		{"64-bit frame over max, header only", 1 << 20, []byte{0x82, 127, 0, 0, 0, 1, 0, 0, 0, 0}, errTooLong, 0},
		{"fragments over max", 10, cat(srvFrame(false, opText, x(6)), srvFrame(true, opContinuation, x(5))), errTooLong, 0},
		{"many fragments over max", 10, cat(srvFrame(false, opBinary, x(3)), srvFrame(false, opContinuation, x(3)), srvFrame(false, opContinuation, x(3)), srvFrame(true, opContinuation, x(2))), errTooLong, 0},
		{"fragments over max, last header only", 10, cat(srvFrame(false, opText, x(6)), []byte{0x80, 5}), errTooLong, 0},
		{"length with the high bit", 1 << 20, []byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1}, errProtocol, 0},
		{"length of all ones", 1 << 20, []byte{0x82, 127, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, errProtocol, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := message{max: c.max}
			var s sink
			used, err := m.parse(c.in, &s)
			if !errors.Is(err, c.want) {
				t.Fatalf("parse(% x) = %d, %v; want %v", c.in, used, err, c.want)
			}
			if used < 0 || used > len(c.in) {
				t.Fatalf("used %d of %d", used, len(c.in))
			}
			if len(s.got) != c.before {
				t.Fatalf("%d events before the error (%v), want %d", len(s.got), s.got, c.before)
			}
			// Byte by byte, the same error, never a panic.
			got, _, err := feed(t, c.max, c.in, func(int) int { return 1 })
			if !errors.Is(err, c.want) || len(got) != c.before {
				t.Fatalf("byte by byte: %v after %d events, want %v after %d", err, len(got), c.want, c.before)
			}
		})
	}
}

// What is not an error: limits met exactly, control frames of 125 bytes,
// control frames among fragments, empty frames, closes without a code.
func TestParseEdges(t *testing.T) {
	x := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	cases := []struct {
		name string
		max  int64
		in   []byte
		want []event
		code int // of the close that ends it, -1: none
	}{
		{"a message of max", 10, srvFrame(true, opBinary, x(10, 'a')), []event{{opText, "aaaaaaaaaa"}}, -1},
		{"fragments summing to max", 10, cat(srvFrame(false, opText, x(6, 'a')), srvFrame(true, opContinuation, x(4, 'b'))), []event{{opText, "aaaaaabbbb"}}, -1},
		{"empty fragments", 10, cat(srvFrame(false, opText, nil), srvFrame(false, opContinuation, nil), srvFrame(true, opContinuation, []byte("z"))), []event{{opText, "z"}}, -1},
		{"ping of 125", 1000, srvFrame(true, opPing, x(125, 'p')), []event{{opPing, string(x(125, 'p'))}}, -1},
		{"ping and pong among fragments", 100, cat(srvFrame(false, opText, []byte("ab")), srvFrame(true, opPing, []byte("1")), srvFrame(false, opContinuation, []byte("cd")), srvFrame(true, opPong, []byte("2")), srvFrame(true, opContinuation, []byte("e"))),
			[]event{{opPing, "1"}, {opPong, "2"}, {opText, "abcde"}}, -1},
		{"two fragmented messages", 100, cat(srvFrame(false, opText, []byte("ab")), srvFrame(true, opContinuation, []byte("c")), srvFrame(false, opBinary, []byte("d")), srvFrame(true, opContinuation, []byte("ef"))),
			[]event{{opText, "abc"}, {opText, "def"}}, -1},
		{"16-bit length, short payload", 1 << 20, cat([]byte{0x82, 126, 0, 3}, []byte("abc")), []event{{opText, "abc"}}, -1},
		{"64-bit length, short payload", 1 << 20, cat([]byte{0x82, 127, 0, 0, 0, 0, 0, 0, 0, 3}, []byte("abc")), []event{{opText, "abc"}}, -1},
		{"close without a code", 100, cat(srvFrame(true, opText, []byte("a")), srvFrame(true, opClose, nil), srvFrame(true, opText, []byte("never"))), []event{{opText, "a"}}, 0},
		{"close 1000 with a reason", 100, cat(srvFrame(true, opClose, []byte{0x03, 0xE8, 'o', 'k'}), srvFrame(true, opText, []byte("never"))), nil, 1000},
		{"close inside a fragmented message", 100, cat(srvFrame(false, opText, []byte("a")), srvFrame(true, opClose, []byte{0x0F, 0xA0})), nil, 4000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range []int{1, 2, 3, len(c.in)} {
				got, used, err := feed(t, c.max, c.in, func(int) int { return n })
				sameEvents(t, fmt.Sprintf("pieces of %d", n), got, c.want)
				if c.code < 0 {
					if err != nil || used != len(c.in) {
						t.Fatalf("pieces of %d: used %d of %d, %v", n, used, len(c.in), err)
					}
					continue
				}
				wantClose(t, fmt.Sprintf("pieces of %d", n), err, c.code)
				if c.name != "close inside a fragmented message" && used != len(c.in)-len(srvFrame(true, opText, []byte("never"))) {
					t.Fatalf("pieces of %d: used %d of %d: not to the close's end", n, used, len(c.in))
				}
			}
		})
	}
}

func TestParseHeaderIncomplete(t *testing.T) {
	for _, full := range [][]byte{
		{0x81, 5},
		{0x82, 126, 0x01, 0x00},
		{0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0},
	} {
		for n := range len(full) {
			if _, ok, err := parseHeader(full[:n]); ok || err != nil {
				t.Errorf("parseHeader(% x) = ok %v, %v; want not yet", full[:n], ok, err)
			}
		}
		h, ok, err := parseHeader(full)
		if !ok || err != nil || h.len != len(full) || !h.fin {
			t.Errorf("parseHeader(% x) = %+v, %v, %v", full, h, ok, err)
		}
	}
	if h, _, _ := parseHeader([]byte{0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0}); h.size != 65536 || h.op != opBinary {
		t.Errorf("64-bit length: %+v", h)
	}
	if h, _, _ := parseHeader([]byte{0x01, 126, 0x01, 0x00}); h.size != 256 || h.fin || h.op != opText {
		t.Errorf("16-bit length: %+v", h)
	}
}

// appendFrame's frames, read as RFC 6455 section 5.2 draws them.
func TestAppendFrameHeader(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 125, 126, 127, 65535, 65536, 70000} {
		for _, key := range []uint32{0, 0xFFFFFFFF, 0x01020304, rng.Uint32()} {
			p := pattern(n, byte(n))
			prefix := []byte("kept")
			b := appendFrame(append([]byte(nil), prefix...), opText, p, key)
			if !bytes.HasPrefix(b, prefix) {
				t.Fatalf("n %d: dst's bytes were overwritten", n)
			}
			b = b[len(prefix):]
			if b[0] != 0x81 {
				t.Fatalf("n %d: first byte %#x, want FIN and text (0x81)", n, b[0])
			}
			if b[1]&0x80 == 0 {
				t.Fatalf("n %d: the mask bit is clear", n)
			}
			var size uint64
			var hl int
			switch l7 := b[1] & 0x7F; {
			case n < 126:
				size, hl = uint64(l7), 2
			case n <= 0xFFFF:
				if l7 != 126 {
					t.Fatalf("n %d: 7-bit length %d, want 126", n, l7)
				}
				size, hl = uint64(b[2])<<8|uint64(b[3]), 4
			default:
				if l7 != 127 {
					t.Fatalf("n %d: 7-bit length %d, want 127", n, l7)
				}
				for _, c := range b[2:10] {
					size = size<<8 | uint64(c)
				}
				hl = 10
			}
			if size != uint64(n) {
				t.Fatalf("n %d: length says %d", n, size)
			}
			k := b[hl : hl+4]
			if got := uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3]); got != key {
				t.Fatalf("n %d: key %#x, want %#x", n, got, key)
			}
			payload := b[hl+4:]
			if len(payload) != n {
				t.Fatalf("n %d: %d payload bytes", n, len(payload))
			}
			for i := range payload {
				if payload[i]^k[i%4] != p[i] {
					t.Fatalf("n %d key %#x: byte %d unmasks to %#x, want %#x", n, key, i, payload[i]^k[i%4], p[i])
				}
			}
		}
	}
	// Other opcodes keep FIN.
	if b := appendFrame(nil, opPong, []byte("x"), 7); b[0] != 0x8A {
		t.Errorf("pong's first byte %#x", b[0])
	}
}

func TestMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 200)
	for off := range 9 {
		for n := range 70 {
			key := rng.Uint32()
			b := buf[off : off+n]
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			orig := append([]byte(nil), b...)
			mask(b, key)
			kb := binary.BigEndian.AppendUint32(nil, key)
			for i := range b {
				if b[i] != orig[i]^kb[i%4] {
					t.Fatalf("off %d n %d: byte %d = %#x, want %#x", off, n, i, b[i], orig[i]^kb[i%4])
				}
			}
			mask(b, key)
			if !bytes.Equal(b, orig) {
				t.Fatalf("off %d n %d: masking twice is not the identity", off, n)
			}
		}
	}
}

// echoes parses, one event at a time, the frames a server sends on a raw
// connection.
type echoes struct {
	br      *bufio.Reader
	m       message
	s       sink
	pending []byte // read, not yet parsed
	buf     []byte
	err     error // the error that ended parsing
}

// next reads until parse finds one more event, or returns the error that
// ended parsing once every event before it was taken.
func (r *echoes) next() (event, error) {
	for len(r.s.got) == 0 && r.err == nil {
		used, err := r.m.parse(r.pending, &r.s)
		r.pending = append(r.pending[:0], r.pending[used:]...)
		r.err = err
		if len(r.s.got) > 0 || r.err != nil {
			break
		}
		n, err := r.br.Read(r.buf)
		if err != nil {
			return event{}, err
		}
		r.pending = append(r.pending, r.buf[:n]...)
	}
	if len(r.s.got) == 0 {
		return event{}, r.err
	}
	e := r.s.got[0]
	r.s.got = r.s.got[1:]
	return e, nil
}

// A gorilla server reads what appendFrame writes (text and binary of every
// length encoding, a ping it answers, a close it echoes), and parse reads
// its echoes.
func TestAppendFrameGorillaReads(t *testing.T) {
	type msg struct {
		mt int
		p  []byte
	}
	read := make(chan msg, 64)
	closed := make(chan error, 1)
	addr := gorillaServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		c.SetReadDeadline(time.Now().Add(4 * time.Second))
		for {
			mt, p, err := c.ReadMessage()
			if err != nil {
				closed <- err
				return
			}
			read <- msg{mt, p}
			c.WriteMessage(mt, p)
		}
	})
	conn, br := rawHandshake(t, addr)
	echo := &echoes{br: br, m: message{max: 1 << 20}, buf: make([]byte, 32<<10)}
	rng := rand.New(rand.NewPCG(7, 8))
	for i, n := range []int{0, 1, 125, 126, 65535, 65536, 70000} {
		op, mt := byte(opText), websocket.TextMessage
		if i%2 == 1 {
			op, mt = opBinary, websocket.BinaryMessage
		}
		p := []byte(strings.Repeat("wsx", n/3+1)[:n])
		if _, err := conn.Write(appendFrame(nil, op, p, rng.Uint32())); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-read:
			if got.mt != mt || !bytes.Equal(got.p, p) {
				t.Fatalf("n %d: gorilla read type %d, %d bytes; want %d, %d", n, got.mt, len(got.p), mt, n)
			}
		case err := <-closed:
			t.Fatalf("n %d: gorilla failed: %v", n, err)
		case <-time.After(4 * time.Second):
			t.Fatalf("n %d: gorilla read nothing", n)
		}
		e, err := echo.next()
		if err != nil || e.op != opText || e.p != string(p) {
			t.Fatalf("n %d: the echo parsed as %v, %v", n, e, err)
		}
	}
	// A ping: gorilla answers with a pong of its payload.
	conn.Write(appendFrame(nil, opPing, []byte("are you there"), rng.Uint32()))
	if e, err := echo.next(); err != nil || e != (event{opPong, "are you there"}) {
		t.Fatalf("the ping's answer parsed as %v, %v", e, err)
	}
	// A close: gorilla reads its code and echoes it.
	conn.Write(appendFrame(nil, opClose, websocket.FormatCloseMessage(4321, "done"), rng.Uint32()))
	select {
	case err := <-closed:
		if !websocket.IsCloseError(err, 4321) {
			t.Fatalf("gorilla read the close as %v", err)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("gorilla did not read the close")
	}
	if _, err := echo.next(); !isClose(err, 4321) {
		t.Fatalf("the close's echo parsed as %v", err)
	}
}

// parse never panics, never says it used more than it had, and gives the
// same messages and end fed whole or in two pieces.
func FuzzMessageParse(f *testing.F) {
	g := capture(f, websocket.Upgrader{WriteBufferSize: 64}, gorillaScript(false))
	f.Add(g, uint(100), uint32(1<<20))
	f.Add(g, uint(3), uint32(200))
	f.Add(g, uint(len(g)/2), uint32(999))
	f.Add(cat(srvFrame(false, opText, []byte("ab")), srvFrame(true, opPing, []byte("1")), srvFrame(true, opContinuation, []byte("cd"))), uint(5), uint32(10))
	f.Add([]byte{0x82, 126, 0x01, 0x00}, uint(2), uint32(1000))
	f.Add([]byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1}, uint(9), uint32(1000))
	f.Add([]byte{0xC1, 0x00}, uint(1), uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, cut uint, limit uint32) {
		cut %= uint(len(b) + 1)
		mx := int64(limit)

		m1 := message{max: mx}
		var s1 sink
		used1, err1 := m1.parse(b, &s1)
		if used1 < 0 || used1 > len(b) {
			t.Fatalf("whole: used %d of %d", used1, len(b))
		}

		m2 := message{max: mx}
		var s2 sink
		usedA, errA := m2.parse(b[:cut], &s2)
		if usedA < 0 || usedA > int(cut) {
			t.Fatalf("first piece: used %d of %d", usedA, cut)
		}
		used2, err2 := usedA, errA
		if errA == nil {
			rest := append([]byte(nil), b[usedA:]...) // the loop's kept start, then what came next
			usedB, errB := m2.parse(rest, &s2)
			if usedB < 0 || usedB > len(rest) {
				t.Fatalf("second piece: used %d of %d", usedB, len(rest))
			}
			used2, err2 = usedA+usedB, errB
		}

		if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("whole ends with %v, two pieces (cut %d) with %v", err1, cut, err2)
		}
		if used1 != used2 {
			t.Fatalf("whole used %d, two pieces %d", used1, used2)
		}
		if len(s1.got) != len(s2.got) {
			t.Fatalf("whole gave %d events, two pieces %d", len(s1.got), len(s2.got))
		}
		for i := range s1.got {
			if s1.got[i] != s2.got[i] {
				t.Fatalf("event %d: whole %v, two pieces %v", i, s1.got[i], s2.got[i])
			}
		}
		if err1 == nil && (m1.frag != m2.frag || m1.frag && !bytes.Equal(m1.buf, m2.buf)) {
			t.Fatalf("the message under way differs: %v %d bytes, %v %d bytes", m1.frag, len(m1.buf), m2.frag, len(m2.buf))
		}
		for _, e := range s1.got {
			if int64(len(e.p)) > mx {
				t.Fatalf("a %d-byte event passed a limit of %d", len(e.p), mx)
			}
		}
	})
}
