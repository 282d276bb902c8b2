package scenario

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/wsx"
)

// onLoop opens s's sockets on a real event loop and returns its frames
// engine, whose offsets count from c's base.
func onLoop(t *testing.T, s *Set, c *clock) *Frames {
	t.Helper()
	lp, err := wsx.NewLoop(wsx.New(false))
	if err != nil {
		t.Fatal(err)
	}
	f := s.LoopFrames(lp)
	if f == nil {
		lp.Close()
		t.Fatal("the plan does not fit the loop")
	}
	f.SetBase(c.base)
	if err := s.OpenSockets(context.Background(), wsx.New(false), 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.CloseSockets)
	return f
}

// recording records every frame that ends into c, as the executor does
// (Record).
func recording(s *Set, c *clock) transport.Done {
	var it metrics.Iteration
	return func(tag transport.Tag, start, end time.Duration, out *transport.Outcome) {
		s.Record(c, &it, tag.N, tag.Intended, start, end, out)
	}
}

// pollUntil polls f until ok, or for at most limit.
func pollUntil(f *Frames, done transport.Done, limit time.Duration, ok func() bool) {
	for deadline := time.Now().Add(limit); !ok() && time.Now().Before(deadline); {
		f.Poll(20*time.Millisecond, done)
	}
}

// framesRun sends n frames of scenario 0, one every gap, and polls until
// every one ended (or 5 s), recording each as the executor does (Record).
func framesRun(t *testing.T, s *Set, f *Frames, c *clock, n int, gap time.Duration) {
	t.Helper()
	done := recording(s, c)
	for i := range n {
		now := c.Now()
		if !f.Send(0, Mix(5, uint64(i)), transport.Tag{Intended: now}) {
			t.Fatal("Send refused a frame")
		}
		for end := now + gap; c.Now() < end; {
			f.Poll(end-c.Now(), done)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); f.InFlight() > 0 && time.Now().Before(deadline); {
		f.Poll(10*time.Millisecond, done)
	}
	if f.InFlight() != 0 {
		t.Fatalf("%d frames still in flight after 5 s", f.InFlight())
	}
	if len(c.iterations) != n {
		t.Fatalf("%d iterations recorded, want %d", len(c.iterations), n)
	}
}

// On the loop a frame is timed to its ack from its intended start, as on
// goroutines: 20 ms acks read at least 20 ms, and every socket held is
// open.
func TestFramesAckLatency(t *testing.T) {
	w := &widget{delay: 20 * time.Millisecond}
	s := wsPlan(t, w.start(t), "open", 3, "ack_timeout: 2s")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	framesRun(t, s, f, c, 10, 5*time.Millisecond)
	for i, it := range c.iterations {
		lat := it.End - it.Intended
		if it.Kind != transport.OK || lat < 20*time.Millisecond || lat > 500*time.Millisecond {
			t.Errorf("frame %d = %v in %v, want ok in ≈ 20ms", i, it.Kind, lat)
		}
		if it.BodyBytes == 0 || c.exchanges[i].BytesOut == 0 {
			t.Errorf("frame %d: %d bytes in, %d out; want both counted", i, it.BodyBytes, c.exchanges[i].BytesOut)
		}
	}
	tot, _ := s.SocketTotals()
	if tot.Open != 3 || tot.Opened != 3 || w.conns.Load() != 3 || tot.UnknownAcks != 0 {
		t.Errorf("sockets: %+v, server saw %d; want 3 open, no unknown acks", tot, w.conns.Load())
	}
}

// Acks, rejections and silence on the loop end as on goroutines (see
// TestWSReject): ok, limited at its real latency, ws_no_ack at the ack
// timeout; an answer that matches no frame in flight is counted unknown.
func TestFramesRejectNoAckUnknown(t *testing.T) {
	w := &widget{delay: 10 * time.Millisecond, answer: func(n int, id string) string {
		switch n {
		case 2:
			return fmt.Sprintf(`{"type":"rejected","ref":%q}`, id)
		case 3:
			return ""
		case 4:
			return `{"type":"ack","clientId":"nobody"}`
		}
		return fmt.Sprintf(`{"type":"ack","clientId":%q}`, id)
	}}
	s := wsPlan(t, w.start(t), "open", 1, "ack_timeout: 300ms\n      reject: {json: ref}")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	framesRun(t, s, f, c, 5, 50*time.Millisecond)
	want := []transport.Kind{transport.OK, transport.Limited, transport.WSNoAck, transport.WSNoAck, transport.OK}
	slices.SortFunc(c.iterations, func(a, b metrics.Iteration) int { return cmp.Compare(a.Intended, b.Intended) }) // they end out of order
	for i, it := range c.iterations {
		lat := it.End - it.Intended
		switch {
		case it.Kind != want[i]:
			t.Errorf("frame %d = %v after %v, want %v", i+1, it.Kind, lat, want[i])
		case it.Kind == transport.WSNoAck && lat < 300*time.Millisecond:
			t.Errorf("frame %d = ws_no_ack after %v, before the 300ms ack timeout", i+1, lat)
		case it.Kind != transport.WSNoAck && (lat < 10*time.Millisecond || lat > 280*time.Millisecond):
			t.Errorf("frame %d = %v after %v, want ≈ 10ms", i+1, it.Kind, lat)
		}
	}
	if tot, _ := s.SocketTotals(); tot.UnknownAcks != 1 || tot.Dropped != 0 {
		t.Errorf("sockets %+v, want one unknown ack and no drop", tot)
	}
}

// A socket the server closes fails its frame in flight as ws_closed, is
// counted dropped and is reopened; frames after the reopen are acked.
func TestFramesServerClosesAndReopen(t *testing.T) {
	w := &widget{closeAfter: 2}
	s := wsPlan(t, w.start(t), "open", 1, "ack_timeout: 2s")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	framesRun(t, s, f, c, 2, 20*time.Millisecond)
	if k := c.iterations[1].Kind; c.iterations[0].Kind != transport.OK || k != transport.WSClosed {
		t.Fatalf("frames = %v, %v; want ok, then ws_closed", c.iterations[0].Kind, k)
	}
	done := recording(s, c)
	pollUntil(f, done, 3*time.Second, func() bool { tot, _ := s.SocketTotals(); return tot.Open == 1 })
	tot, _ := s.SocketTotals()
	if tot.Dropped != 1 || tot.Opened != 2 || tot.Open != 1 {
		t.Fatalf("sockets %+v; want one drop and a reopen", tot)
	}
	c.iterations = nil
	framesRun(t, s, f, c, 1, 0)
	if k := c.iterations[0].Kind; k != transport.OK {
		t.Errorf("the frame after the reopen = %v, want ok", k)
	}
}

// Abort ends the frames in flight as ws_no_ack at once: the step gave up.
func TestFramesAbort(t *testing.T) {
	w := &widget{noAck: true}
	s := wsPlan(t, w.start(t), "open", 2, "ack_timeout: 10s")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	var kinds []transport.Kind
	done := func(_ transport.Tag, _, _ time.Duration, out *transport.Outcome) { kinds = append(kinds, out.Kind) }
	for i := range 4 {
		f.Send(0, uint64(i), transport.Tag{Intended: c.Now()})
	}
	f.Poll(20*time.Millisecond, done)
	f.Abort(done)
	if len(kinds) != 4 || f.InFlight() != 0 {
		t.Fatalf("ended %v, %d in flight; want 4 ws_no_ack, none left", kinds, f.InFlight())
	}
	for _, k := range kinds {
		if k != transport.WSNoAck {
			t.Errorf("aborted frame = %v, want ws_no_ack", k)
		}
	}
}

// Which plans' frames go over the loop: only those whose frames need no
// user and whose sockets are held over ws:// in the open model.
func TestLoopFramesFits(t *testing.T) {
	lp, err := wsx.NewLoop(wsx.New(false))
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	base := `
target: http://127.0.0.1:9
load: %s
scenarios:
  - name: widget
    websocket:
      url: %s
      connections: 2
      send: '%s'
      ack: {json: clientId}
`
	tests := []struct {
		name, load, url, send string
		fits                  bool
	}{
		{"seq", "{rates: [1]}", "ws://127.0.0.1:9/w", `{"clientId":"{{seq}}"}`, true},
		{"uuid", "{rates: [1]}", "ws://127.0.0.1:9/w", `{"clientId":"{{uuid}}"}`, true},
		{"a user's number", "{rates: [1]}", "ws://127.0.0.1:9/w", `{"clientId":"{{.vu}}-{{seq}}"}`, false},
		{"a template function", "{rates: [1]}", "ws://127.0.0.1:9/w", `{"clientId":"{{randInt 1 9}}"}`, false},
		{"the closed model", "{vus: [1]}", "ws://127.0.0.1:9/w", `{"clientId":"{{seq}}"}`, false},
		{"tls", "{rates: [1]}", "wss://127.0.0.1:9/w", `{"clientId":"{{seq}}"}`, false},
	}
	for _, tt := range tests {
		s := compile(t, fmt.Sprintf(base, tt.load, tt.url, tt.send))
		if got := s.LoopFrames(lp) != nil; got != tt.fits {
			t.Errorf("%s: fits the loop = %v, want %v", tt.name, got, tt.fits)
		}
	}
	idle := compile(t, fmt.Sprintf(`
target: http://127.0.0.1:9
load: {rates: [1]}
scenarios:
  - name: idle
    websocket: {url: %s, connections: 2}
`, "ws://127.0.0.1:9/w"))
	if idle.LoopFrames(lp) == nil {
		t.Error("an idle soak does not fit the loop; its sockets would each need a reader goroutine")
	}
}

// Idle sockets are held on the loop: an arrival of an idle scenario is
// counted idle (no exchange, no iteration), as on goroutines; no goroutine
// reads the sockets, the loop answers the server's pings, and a socket the
// server closes is reopened.
func TestFramesIdleSockets(t *testing.T) {
	var conns, pongs atomic.Int64
	srv := testkit.NewWebSocket(t, func(c *websocket.Conn) {
		n := conns.Add(1)
		c.SetPongHandler(func(string) error {
			pongs.Add(1)
			if n == 1 {
				return errors.New("the first socket closes after its pong")
			}
			return nil
		})
		if c.WriteControl(websocket.PingMessage, []byte("still there?"), time.Now().Add(time.Second)) != nil {
			return
		}
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	const n = 200
	s := compile(t, fmt.Sprintf(`
target: http://127.0.0.1:9
load: {rates: [1]}
scenarios:
  - name: idle
    websocket: {url: %s, connections: %d}
`, testkit.WSURL(srv.URL), n))
	before := runtime.NumGoroutine()
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	done := recording(s, c)
	for i := range 5 {
		if !f.Send(0, uint64(i), transport.Tag{Intended: c.Now()}) {
			t.Fatal("Send refused an idle arrival")
		}
	}
	pollUntil(f, done, 5*time.Second, func() bool {
		tot, _ := s.SocketTotals()
		return pongs.Load() >= n+1 && tot.Open == n && f.InFlight() == 0
	})
	if c.idles != 5 || len(c.iterations) != 0 || len(c.exchanges) != 0 || f.InFlight() != 0 {
		t.Errorf("%d idle, %d iterations, %d exchanges, %d in flight; want the 5 arrivals idle and nothing else",
			c.idles, len(c.iterations), len(c.exchanges), f.InFlight())
	}
	tot, _ := s.SocketTotals()
	if tot.Open != n || tot.Opened != n+1 || tot.Dropped != 1 || pongs.Load() != n+1 || conns.Load() != n+1 {
		t.Errorf("sockets %+v, %d pongs, %d connections; want %d open after one drop and its reopen, every ping answered",
			tot, pongs.Load(), conns.Load(), n)
	}
	// The server's side holds a goroutine per socket; ceiling's must not.
	if grew := runtime.NumGoroutine() - before; grew > n+n/2 {
		t.Errorf("%d more goroutines for %d idle sockets; the server's are %d of them", grew, n, n)
	}
}

// greeter is a websocket server that sends greeting on each socket right
// after the handshake, closes the first dropFirst sockets at once, and
// acks every {"clientId"} frame, unless deaf.
type greeter struct {
	greeting  string
	dropFirst int64
	deaf      bool
	conns     atomic.Int64
}

func (g *greeter) start(t *testing.T) string {
	t.Helper()
	srv := testkit.NewWebSocket(t, func(c *websocket.Conn) {
		if g.conns.Add(1) <= g.dropFirst {
			return
		}
		if g.greeting != "" && c.WriteMessage(websocket.TextMessage, []byte(g.greeting)) != nil {
			return
		}
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			var in struct {
				ClientID string `json:"clientId"`
			}
			json.Unmarshal(msg, &in)
			if !g.deaf && c.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf(`{"clientId":%q}`, in.ClientID))) != nil {
				return
			}
		}
	})
	return testkit.WSURL(srv.URL)
}

// A message that comes before any frame was sent (a welcome carrying the
// ack's field) is an unknown ack, on every socket, and the frames after
// it are acked.
func TestFramesGreetingBeforeAnyFrame(t *testing.T) {
	g := &greeter{greeting: `{"type":"welcome","clientId":"server"}`}
	s := wsPlan(t, g.start(t), "open", 4, "ack_timeout: 2s")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	done := recording(s, c)
	pollUntil(f, done, 3*time.Second, func() bool { tot, _ := s.SocketTotals(); return tot.UnknownAcks == 4 })
	if tot, _ := s.SocketTotals(); tot.UnknownAcks != 4 {
		t.Fatalf("sockets %+v, want the 4 greetings counted unknown", tot)
	}
	framesRun(t, s, f, c, 8, time.Millisecond)
	for i, it := range c.iterations {
		if it.Kind != transport.OK {
			t.Errorf("frame %d = %v, want ok", i, it.Kind)
		}
	}
}

// A server that closes each socket right after its handshake: whether the
// loop reads the close before the slot knows its socket or after, the
// socket is counted dropped and reopened, and frames then go through.
func TestFramesDroppedRightAfterHandshake(t *testing.T) {
	g := &greeter{dropFirst: 3}
	s := wsPlan(t, g.start(t), "open", 3, "ack_timeout: 2s")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	done := recording(s, c)
	pollUntil(f, done, 5*time.Second, func() bool { tot, _ := s.SocketTotals(); return tot.Open == 3 && g.conns.Load() == 6 })
	tot, _ := s.SocketTotals()
	if tot.Open != 3 || tot.Dropped != 3 || tot.Opened != 6 {
		t.Fatalf("sockets %+v, server saw %d; want 3 open after 3 drops and 3 reopens", tot, g.conns.Load())
	}
	framesRun(t, s, f, c, 6, time.Millisecond)
	for i, it := range c.iterations {
		if it.Kind != transport.OK {
			t.Errorf("frame %d = %v, want ok", i, it.Kind)
		}
	}
}

// Each scenario's frames time out at its own ack timeout: a short one is
// not held behind a long one sent earlier.
func TestFramesTimeoutPerScenario(t *testing.T) {
	url := (&greeter{deaf: true}).start(t)
	s := compile(t, fmt.Sprintf(`
target: http://127.0.0.1:9
load: {rates: [1]}
scenarios:
  - name: patient
    weight: 1
    websocket: {url: %s, connections: 1, send: '{"clientId":"{{seq}}"}', ack: {json: clientId}, ack_timeout: 10s}
  - name: hasty
    weight: 1
    websocket: {url: %s, connections: 1, send: '{"clientId":"{{seq}}"}', ack: {json: clientId}, ack_timeout: 200ms}
`, url, url))
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	var ended []transport.Tag
	var lat []time.Duration
	done := func(tag transport.Tag, _, end time.Duration, out *transport.Outcome) {
		if out.Kind != transport.WSNoAck {
			t.Errorf("frame of scenario %d = %v, want ws_no_ack", tag.N, out.Kind)
		}
		ended, lat = append(ended, tag), append(lat, end-tag.Intended)
	}
	f.Send(0, 1, transport.Tag{Intended: c.Now(), N: 0})
	f.Send(1, 2, transport.Tag{Intended: c.Now(), N: 1})
	for deadline := time.Now().Add(3 * time.Second); len(ended) == 0 && time.Now().Before(deadline); {
		f.Poll(50*time.Millisecond, done)
	}
	if len(ended) != 1 || ended[0].N != 1 || lat[0] < 200*time.Millisecond || lat[0] > 2*time.Second {
		t.Fatalf("ended %v after %v; want the hasty frame alone, at its 200ms timeout", ended, lat)
	}
	f.Abort(done)
}

// An answer the kernel received after the frame's ack timeout ends it as
// ws_no_ack at the timeout, and is itself unknown; one received before the
// frame was sent answers an earlier frame with the same key, not this one.
func TestFramesAnswerOutsideTheFrame(t *testing.T) {
	g := &greeter{deaf: true}
	s := wsPlan(t, g.start(t), "open", 1, "ack_timeout: 300ms")
	c := &clock{base: time.Now()}
	f := onLoop(t, s, c)
	type end struct {
		kind     transport.Kind
		start, e time.Duration
	}
	var ends []end
	f.done = func(_ transport.Tag, start, e time.Duration, out *transport.Outcome) {
		ends = append(ends, end{out.Kind, start, e})
	}
	f.Send(0, 1, transport.Tag{Intended: c.Now()})
	var p framePending
	for _, x := range f.pend {
		if x.live {
			p = x
		}
	}
	ev := (*frameEvents)(f)
	ev.Frame(0, p.owner, []byte(`{"clientId":"`+p.key+`"}`), p.start-time.Millisecond)
	if len(ends) != 0 || f.InFlight() != 1 {
		t.Fatalf("an answer from before the frame was sent ended it: %v", ends)
	}
	ev.Frame(0, p.owner, []byte(`{"clientId":"`+p.key+`"}`), p.deadline+time.Millisecond)
	if len(ends) != 1 || ends[0].kind != transport.WSNoAck || ends[0].e != p.deadline || f.InFlight() != 0 {
		t.Fatalf("a late answer ended the frame as %v, want ws_no_ack at its deadline %v", ends, p.deadline)
	}
	if tot, _ := s.SocketTotals(); tot.UnknownAcks != 2 {
		t.Errorf("unknown acks = %d, want both answers", tot.UnknownAcks)
	}
}
