package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/wsx"
)

// widget is a websocket server that acks each {"clientId": ...} frame after
// delay with a frame carrying the same clientId. noAck drops every frame;
// closeAfter closes a socket after that many frames. answer, when set,
// says what to send back for a socket's nth frame (from 1) carrying id
// instead of the ack: "" sends nothing.
type widget struct {
	delay      time.Duration
	noAck      bool
	answer     func(n int, id string) string
	closeAfter int
	refuse     int64 // answer the first refuse handshakes 503
	handshakes atomic.Int64
	conns      atomic.Int64
}

func (wg *widget) start(t *testing.T) string {
	t.Helper()
	sockets := testkit.WebSocket(websocket.Upgrader{}, func(c *websocket.Conn) {
		wg.conns.Add(1)
		for n := 1; ; n++ {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if wg.closeAfter > 0 && n >= wg.closeAfter {
				return
			}
			if wg.noAck {
				continue
			}
			var in struct {
				ClientID string `json:"clientId"`
			}
			json.Unmarshal(msg, &in)
			time.Sleep(wg.delay)
			out := fmt.Sprintf(`{"type":"ack","clientId":%q}`, in.ClientID)
			if wg.answer != nil {
				out = wg.answer(n, in.ClientID)
			}
			if out != "" {
				c.WriteMessage(websocket.TextMessage, []byte(out))
			}
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wg.handshakes.Add(1) <= wg.refuse {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		sockets.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return testkit.WSURL(srv.URL)
}

// clock records with real offsets from its creation.
type clock struct {
	log
	base time.Time
}

func (c *clock) Now() time.Duration { return time.Since(c.base) }

func wsPlan(t *testing.T, url, model string, conns int, extra string) *Set {
	t.Helper()
	load := "{rates: [1]}"
	if model == "closed" {
		load = "{vus: [1]}"
	}
	return compile(t, fmt.Sprintf(`
target: http://127.0.0.1:9
load: %s
scenarios:
  - name: widget
    websocket:
      url: %s
      connections: %d
      send: '{"type":"message","clientId":"{{uuid}}","text":"hi"}'
      ack: {json: clientId}
      %s
`, load, url, conns, extra))
}

func TestWSAckLatency(t *testing.T) {
	w := &widget{delay: 20 * time.Millisecond}
	s := wsPlan(t, w.start(t), "open", 3, "ack_timeout: 2s")
	if err := s.OpenSockets(context.Background(), wsx.New(false), 2); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	c := &clock{base: time.Now()}
	v := s.NewVU(0, nil)
	for i := range 10 {
		start := c.Now()
		v.Iterate(context.Background(), c, start, Mix(1, uint64(i)))
	}
	for _, it := range c.iterations {
		// At least the widget's 20 ms; the upper bound only says the ack
		// was matched, not waited out (ack_timeout is 2 s): a busy
		// neighbour under -race has delayed a read by 47 ms.
		lat := it.End - it.Intended
		if it.Kind != transport.OK || lat < 20*time.Millisecond || lat > 500*time.Millisecond {
			t.Errorf("frame = %v in %v, want ok in ≈ 20ms", it.Kind, lat)
		}
	}
	tot, _ := s.SocketTotals()
	if tot.Open != 3 || tot.Opened != 3 || w.conns.Load() != 3 {
		t.Errorf("sockets: %+v, server saw %d; want 3 open", tot, w.conns.Load())
	}
}

func TestWSNoAck(t *testing.T) {
	w := &widget{noAck: true}
	s := wsPlan(t, w.start(t), "open", 1, "ack_timeout: 100ms")
	if err := s.OpenSockets(context.Background(), wsx.New(false), 1); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	c := &clock{base: time.Now()}
	v := s.NewVU(0, nil)
	v.Iterate(context.Background(), c, c.Now(), 1)
	if it := c.iterations[0]; it.Kind != transport.WSNoAck || it.End-it.Intended < 100*time.Millisecond {
		t.Errorf("frame = %v after %v, want ws_no_ack after 100ms", it.Kind, it.End-it.Intended)
	}
}

// Frames the target rejects by design, with a frame the scenario's reject
// names, count as limited with their real latency, far below the ack
// timeout; an ack is still ok, and a frame that gets no answer at all is
// still ws_no_ack at the timeout. No received frame is left unmatched.
func TestWSReject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reject string
		rejection    func(id string) string
	}{
		{"json, as the demo target's flood brake", "reject: {json: ref}", func(id string) string {
			return fmt.Sprintf(`{"type":"rejected","ref":%q,"reason":"flood"}`, id)
		}},
		{"regex on a text frame, with a json ack", `reject: {regex: '^rejected (\S+)$'}`, func(id string) string {
			return "rejected " + id
		}},
		{"one that carries the id where acks do too", `reject: {regex: '"error":"[^"]*","clientId":"([^"]+)"'}`, func(id string) string {
			return fmt.Sprintf(`{"error":"flood","clientId":%q}`, id)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Frames 2 and 4 are rejected, 5 gets no answer, the rest are acked.
			w := &widget{delay: 10 * time.Millisecond, answer: func(n int, id string) string {
				switch n {
				case 2, 4:
					return tt.rejection(id)
				case 5:
					return ""
				}
				return fmt.Sprintf(`{"type":"ack","clientId":%q}`, id)
			}}
			s := wsPlan(t, w.start(t), "open", 1, "ack_timeout: 1s\n      "+tt.reject)
			if err := s.OpenSockets(context.Background(), wsx.New(false), 1); err != nil {
				t.Fatal(err)
			}
			defer s.CloseSockets()
			c := &clock{base: time.Now()}
			v := s.NewVU(0, nil)
			for i := range 6 {
				v.Iterate(context.Background(), c, c.Now(), Mix(3, uint64(i)))
			}
			want := []transport.Kind{transport.OK, transport.Limited, transport.OK, transport.Limited, transport.WSNoAck, transport.OK}
			if len(c.iterations) != len(want) {
				t.Fatalf("%d iterations, want %d", len(c.iterations), len(want))
			}
			for i, it := range c.iterations {
				lat := it.End - it.Intended
				switch {
				case it.Kind != want[i]:
					t.Errorf("frame %d = %v after %v, want %v", i+1, it.Kind, lat, want[i])
				case it.Kind == transport.WSNoAck && lat < time.Second:
					t.Errorf("frame %d = ws_no_ack after %v, want it at the 1s ack timeout", i+1, lat)
				case it.Kind != transport.WSNoAck && (lat < 10*time.Millisecond || lat > 500*time.Millisecond):
					t.Errorf("frame %d = %v after %v, want ≈ 10ms, well under the 1s ack timeout", i+1, it.Kind, lat)
				}
				if k := c.exchanges[i].Kind; k != want[i] {
					t.Errorf("exchange %d = %v, want %v", i+1, k, want[i])
				}
			}
			if tot, _ := s.SocketTotals(); tot.UnknownAcks != 0 || tot.Dropped != 0 {
				t.Errorf("sockets %+v, want no unmatched frame and no drop", tot)
			}
		})
	}
}

// A frame waiting for its ack stops waiting when the iteration's context
// ends (its step gave up on it), long before its ack timeout, and a frame
// whose context has already ended is not sent.
func TestWSAckWaitEndsWithContext(t *testing.T) {
	w := &widget{noAck: true}
	s := wsPlan(t, w.start(t), "open", 1, "ack_timeout: 30s")
	if err := s.OpenSockets(context.Background(), wsx.New(false), 1); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	c := &clock{base: time.Now()}
	v := s.NewVU(0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	v.Iterate(ctx, c, c.Now(), 1)
	if it := c.iterations[0]; it.Kind != transport.WSNoAck || time.Since(start) > 5*time.Second {
		t.Errorf("frame = %v after %v, want ws_no_ack once the context ended (100ms), not at the 30s ack timeout", it.Kind, time.Since(start))
	}
	v.Iterate(ctx, c, c.Now(), 2)
	if len(c.exchanges) != 1 || len(c.iterations) != 2 || c.iterations[1].Kind != transport.WSNoAck {
		t.Errorf("after the context ended: exchanges %+v, iterations %+v; want a ws_no_ack iteration that sent nothing", c.exchanges, c.iterations)
	}
}

// A server that closes its sockets: frames in flight are ws_closed, the
// drop is counted, and the socket is reopened.
func TestWSServerCloses(t *testing.T) {
	w := &widget{noAck: true, closeAfter: 1}
	s := wsPlan(t, w.start(t), "open", 1, "ack_timeout: 2s")
	if err := s.OpenSockets(context.Background(), wsx.New(false), 1); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	c := &clock{base: time.Now()}
	v := s.NewVU(0, nil)
	v.Iterate(context.Background(), c, c.Now(), 1)
	if it := c.iterations[0]; it.Kind != transport.WSClosed {
		t.Errorf("frame = %v, want ws_closed", it.Kind)
	}
	deadline := time.Now().Add(2 * time.Second)
	for w.conns.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	tot, _ := s.SocketTotals()
	if tot.Dropped != 1 || w.conns.Load() < 2 {
		t.Errorf("sockets %+v, server saw %d connections; want one drop and a reopen", tot, w.conns.Load())
	}
}

// In the closed model each user opens its own socket on first use.
func TestWSClosedModelOwnSocket(t *testing.T) {
	w := &widget{}
	s := wsPlan(t, w.start(t), "closed", 1, "")
	if err := s.OpenSockets(context.Background(), wsx.New(false), 1); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	c := &clock{base: time.Now()}
	for id := range 3 {
		v := s.NewVU(id, nil)
		for range 2 {
			v.Iterate(context.Background(), c, c.Now(), 1)
		}
	}
	if w.conns.Load() != 3 || len(c.iterations) != 6 {
		t.Errorf("server saw %d sockets, %d iterations; want 3 and 6", w.conns.Load(), len(c.iterations))
	}
	for _, it := range c.iterations {
		if it.Kind != transport.OK {
			t.Errorf("frame = %v, want ok", it.Kind)
		}
	}
}

func TestAckKey(t *testing.T) {
	tests := []struct {
		name    string
		m       plan.Ack
		frame   string
		want    string
		wantHas bool
	}{
		{"json string, by its value", plan.Ack{JSON: "id"}, `{"id":"a\/b"}`, "a/b", true},
		{"json number, as written", plan.Ack{JSON: "id"}, `{"id":12}`, "12", true},
		{"json empty string, as written", plan.Ack{JSON: "id"}, `{"id":""}`, `""`, true},
		{"json missing", plan.Ack{JSON: "id"}, `{"ref":"x"}`, "", false},
		{"regex group", plan.Ack{Regex: `^rejected (\S+)$`}, "rejected a/b", "a/b", true},
		{"regex whole match", plan.Ack{Regex: `[0-9]+`}, "id 42", "42", true},
		{"regex no match", plan.Ack{Regex: `^rejected (\S+)$`}, "ok a", "", false},
	}
	for _, tt := range tests {
		m, err := compileAck(&tt.m)
		if err != nil {
			t.Fatal(err)
		}
		if got, has := m.key([]byte(tt.frame)); got != tt.want || has != tt.wantHas {
			t.Errorf("%s: key(%q) = %q, %v, want %q, %v", tt.name, tt.frame, got, has, tt.want, tt.wantHas)
		}
	}
}

func FuzzAckKey(f *testing.F) {
	f.Add([]byte(`{"clientId":"abc","x":1}`), "clientId", `"id":"([^"]+)"`)
	f.Add([]byte(`not json`), "a.b", `(`)
	f.Fuzz(func(t *testing.T, frame []byte, path, re string) {
		m := ackMatcher{path: path}
		if k, ok := m.key(frame); ok && k == "" {
			t.Fatalf("key(%q, %q) = empty but found", frame, path)
		}
		if r, err := compileAck(&plan.Ack{Regex: re}); err == nil {
			r.key(frame)
		}
	})
}

// echoSocket acks every frame by sending it back; a deaf one's writes block
// until it is closed.
type echoSocket struct {
	deaf   bool
	acks   chan []byte
	closed chan struct{}
	once   sync.Once
}

func (s *echoSocket) WriteText(frame []byte) error {
	if s.deaf {
		<-s.closed
		return errors.New("write on a closed socket")
	}
	s.acks <- append([]byte(nil), frame...)
	return nil
}

func (s *echoSocket) Read() ([]byte, error) {
	select {
	case f := <-s.acks:
		return f, nil
	case <-s.closed:
		return nil, io.EOF
	}
}

func (s *echoSocket) Close() error { s.once.Do(func() { close(s.closed) }); return nil }

// echoDialer's first socket is deaf, the later ones echo.
type echoDialer struct {
	mu      sync.Mutex
	sockets []*echoSocket
}

func (d *echoDialer) Dial(context.Context, transport.SocketConfig) (transport.Socket, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &echoSocket{deaf: len(d.sockets) == 0, acks: make(chan []byte, 16), closed: make(chan struct{})}
	d.sockets = append(d.sockets, s)
	return s, nil
}

func (d *echoDialer) dialled() int { d.mu.Lock(); defer d.mu.Unlock(); return len(d.sockets) }

// A write that fails after the socket's reader already failed the frame
// (the socket dropped while the write was blocked) must not leave that
// answer behind for the user's next frame: the next frame, on the reopened
// socket, gets its own ack.
func TestWSFailedWriteLeavesNoStaleAnswer(t *testing.T) {
	s := wsPlan(t, "ws://127.0.0.1:9/widget", "open", 1, "ack_timeout: 5s")
	d := &echoDialer{}
	if err := s.OpenSockets(context.Background(), d, 1); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	c := &clock{base: time.Now()}
	v := s.NewVU(0, nil)
	time.AfterFunc(100*time.Millisecond, func() { d.sockets[0].Close() })
	v.Iterate(context.Background(), c, c.Now(), 1)
	if k := c.iterations[0].Kind; k != transport.WSClosed {
		t.Fatalf("frame on the dropped socket = %v, want ws_closed", k)
	}
	for deadline := time.Now().Add(3 * time.Second); d.dialled() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	v.Iterate(context.Background(), c, c.Now(), 1)
	if k := c.iterations[1].Kind; k != transport.OK {
		t.Errorf("next frame, on the reopened socket = %v, want ok (its own ack, not the last frame's answer)", k)
	}
}

// Held sockets whose first handshake failed (a target that answers 503 for
// its first seconds) are reopened with backoff, as dropped ones are.
func TestWSFailedHandshakesReopen(t *testing.T) {
	w := &widget{refuse: 2}
	s := wsPlan(t, w.start(t), "open", 4, "ack_timeout: 2s")
	if err := s.OpenSockets(context.Background(), wsx.New(false), 4); err != nil {
		t.Fatal(err)
	}
	defer s.CloseSockets()
	open := func() int64 { tot, _ := s.SocketTotals(); return tot.Open }
	for deadline := time.Now().Add(5 * time.Second); open() < 4 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if tot, _ := s.SocketTotals(); tot.Open != 4 || tot.Failed != 2 {
		t.Errorf("sockets %+v, want all 4 open after 2 failed handshakes", tot)
	}
}
