package scenario

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// wsScenario is a compiled websocket scenario: frames over held sockets,
// each timed to its matching ack.
type wsScenario struct {
	cfg     transport.SocketConfig
	url     text
	headers []header
	send    text
	idle    bool // no send: hold the sockets, send nothing
	ack     ackMatcher
	reject  *ackMatcher // nil: the plan names no rejection frames
	timeout time.Duration
	conns   int
	sockets *sockets // the held sockets of the open model
}

func compileWS(p *plan.Plan, ts *templates, where string, w *plan.WebSocket) (*wsScenario, error) {
	ws := &wsScenario{
		cfg: transport.SocketConfig{
			Subprotocols: w.Subprotocols, MaxFrameBytes: w.MaxFrameBytes, Timeout: p.HTTP.Timeout.Duration,
			WriteTimeout: w.AckTimeout.Duration,
		},
		idle: w.Send == "", timeout: w.AckTimeout.Duration, conns: max(w.Connections, 1),
	}
	if ws.cfg.MaxFrameBytes == 0 {
		ws.cfg.MaxFrameBytes = 1 << 20
	}
	if ws.timeout == 0 {
		ws.timeout = 10 * time.Second
	}
	if ws.cfg.WriteTimeout == 0 {
		ws.cfg.WriteTimeout = ws.timeout
	}
	var err error
	if ws.url, err = ts.text(where+".websocket.url", p.WebSocketURL(w)); err != nil {
		return nil, err
	}
	for _, h := range p.WebSocketHeaders(w) {
		t, err := ts.text(where+".websocket.headers."+h[0], h[1])
		if err != nil {
			return nil, err
		}
		ws.headers = append(ws.headers, header{name: h[0], value: t})
	}
	if ws.send, err = ts.text(where+".websocket.send", w.Send); err != nil {
		return nil, err
	}
	if w.Ack != nil {
		if ws.ack, err = compileAck(w.Ack); err != nil {
			return nil, fmt.Errorf("%s.websocket.ack: %w", where, err)
		}
	}
	if w.Reject != nil {
		r, err := compileAck(w.Reject)
		if err != nil {
			return nil, fmt.Errorf("%s.websocket.reject: %w", where, err)
		}
		ws.reject = &r
	}
	return ws, nil
}

// ackMatcher finds the key that pairs a sent frame with its ack (or, as a
// scenario's reject, with its rejection).
type ackMatcher struct {
	path string
	re   *regexp.Regexp
}

func compileAck(a *plan.Ack) (ackMatcher, error) {
	if a.Regex != "" {
		re, err := regexp.Compile(a.Regex)
		return ackMatcher{re: re}, err
	}
	return ackMatcher{path: a.JSON}, nil
}

// key returns frame's key, and false when the frame has none. A non-empty
// JSON string is its value, unquoted, so that a JSON ack and a regex
// reject find the same key; any other JSON value is its text.
func (a ackMatcher) key(frame []byte) (string, bool) {
	if a.re != nil {
		m := a.re.FindSubmatch(frame)
		switch {
		case m == nil:
			return "", false
		case len(m) > 1:
			return string(m[1]), true
		}
		return string(m[0]), true
	}
	r := gjson.GetBytes(frame, a.path)
	switch {
	case !r.Exists():
		return "", false
	case r.Type == gjson.String && r.Str != "":
		return r.Str, true
	}
	return r.Raw, true
}

// sockets is a set of held sockets of one websocket scenario, with what
// they amounted to.
type sockets struct {
	ws     *wsScenario
	dialer transport.SocketDialer
	mu     sync.Mutex // guards slots while closed-model users add theirs
	slots  []*slot
	quit   chan struct{}
	ctx    context.Context // done with quit: ends a reopening handshake
	cancel context.CancelFunc
	wg     sync.WaitGroup
	stats  SocketStats
	loop   transport.SocketLoop // non-nil: the sockets are the event loop's (Frames)
}

// SocketStats counts what happened to a plan's sockets since the run began.
type SocketStats struct {
	// Open is how many sockets are open now.
	Open atomic.Int64
	// Opened counts successful handshakes, reconnections included.
	Opened atomic.Int64
	// Failed counts handshakes that failed.
	Failed atomic.Int64
	// Dropped counts open sockets that closed under the run.
	Dropped atomic.Int64
	// UnknownAcks counts received frames that matched no frame in flight,
	// neither as its ack nor as its rejection.
	UnknownAcks atomic.Int64
}

var (
	errSocketsClosed = errors.New("sockets closed")
	errDroppedAtOnce = errors.New("websocket: the server closed the socket right after its handshake")
)

// slot is one socket, reopened with backoff when it drops. Frames in flight
// wait in pending, by ack key.
type slot struct {
	s       *sockets
	cfg     transport.SocketConfig
	mu      sync.Mutex
	sock    transport.Socket // nil while down
	pending map[string]*waiter
	lid     atomic.Int64 // on an event loop: the socket's number there, -1 while down
	owner   int          // on an event loop: the slot's number there (Frames.own)
	early   int          // on an event loop: a socket the loop dropped before open had its number, or -1
}

// waiter is a frame waiting for its ack; the reader sends the outcome. A
// virtual user reuses its waiter, and its timer, for every frame.
type waiter struct {
	ch    chan ack
	timer *time.Timer
}

func newWaiter() *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{ch: make(chan ack, 1), timer: t}
}

type ack struct {
	at       time.Time // when the ack was read
	bytes    int
	closed   bool // the socket closed before the ack came
	rejected bool // the frame read was the plan's reject, not an ack
}

// open dials the slot's socket once (ctx ends the handshake); on success it
// starts the reader, which keeps the socket open (reopening it with
// backoff) until quit. A socket of an event loop has no reader: the loop
// reads it, and Frames reopens it (loopDown).
func (sl *slot) open(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	var sock transport.Socket
	id := -1 // on an event loop: the socket's number there
	var err error
	if lp := sl.s.loop; lp != nil {
		id, err = lp.Dial(ctx, sl.cfg, sl.owner)
	} else {
		sock, err = sl.s.dialer.Dial(ctx, sl.cfg)
	}
	took := time.Since(start)
	if err != nil {
		sl.s.stats.Failed.Add(1)
		return took, err
	}
	sl.mu.Lock()
	select {
	case <-sl.s.quit: // closed while dialling: CloseSockets has already been through this slot
		sl.mu.Unlock()
		if sock != nil { // a loop's socket closes with the loop
			sock.Close()
		}
		return took, errSocketsClosed
	default:
	}
	if sock == nil && sl.early == id { // the loop read its close before this: it opened, and dropped at once
		sl.early = -1
		sl.mu.Unlock()
		sl.s.stats.Opened.Add(1)
		sl.s.stats.Dropped.Add(1)
		return took, errDroppedAtOnce
	}
	if sock != nil {
		sl.sock = sock
		sl.s.wg.Add(1)
	} else {
		sl.lid.Store(int64(id))
	}
	sl.mu.Unlock()
	sl.s.stats.Opened.Add(1)
	sl.s.stats.Open.Add(1)
	if sock != nil {
		go sl.read(sock) // on a loop, the loop reads it
	}
	return took, nil
}

// loopDown marks the slot's socket, number id on the event loop, gone
// (the loop has closed it), and reopens it with backoff.
func (sl *slot) loopDown(id int) {
	sl.mu.Lock()
	if sl.lid.Load() != int64(id) {
		// Not its socket yet: the one open is dialling went down before
		// open had its number (a server that closes right after the
		// handshake). open sees it and reopens.
		sl.early = id
		sl.mu.Unlock()
		return
	}
	sl.lid.Store(-1)
	sl.s.stats.Open.Add(-1)
	select {
	case <-sl.s.quit:
		sl.mu.Unlock()
		return
	default:
	}
	sl.s.stats.Dropped.Add(1)
	sl.s.wg.Add(1)
	sl.mu.Unlock()
	go func() {
		defer sl.s.wg.Done()
		sl.reopen()
	}()
}

// openOrRetry opens the slot's socket; if that fails, it keeps trying in
// the background, with backoff, until it succeeds or the sockets are
// closed, as for a socket that dropped (a target that refuses handshakes
// for its first seconds must not leave the slot closed for the whole run).
func (sl *slot) openOrRetry(ctx context.Context) (time.Duration, error) {
	took, err := sl.open(ctx)
	if err != nil && !errors.Is(err, errSocketsClosed) {
		sl.mu.Lock() // as in open: CloseSockets has either not been through this slot, or quit is closed
		select {
		case <-sl.s.quit:
			sl.mu.Unlock()
			return took, err
		default:
		}
		sl.s.wg.Add(1)
		sl.mu.Unlock()
		go func() {
			defer sl.s.wg.Done()
			sl.reopen()
		}()
	}
	return took, err
}

// read matches received frames to waiters until the socket fails, then
// fails what was in flight and reopens the socket with backoff.
func (sl *slot) read(sock transport.Socket) {
	defer sl.s.wg.Done()
	for {
		frame, err := sock.Read()
		if err != nil {
			sl.down(sock)
			sl.reopen()
			return
		}
		at := time.Now()
		rejected := false
		var w *waiter
		if r := sl.s.ws.reject; r != nil {
			// A rejection first: one that also carries the id where acks
			// do must not be taken for an ack.
			if key, ok := r.key(frame); ok {
				w = sl.take(key)
				rejected = w != nil
			}
		}
		if w == nil {
			if key, ok := sl.s.ws.ack.key(frame); ok {
				w = sl.take(key)
			}
		}
		if w == nil {
			sl.s.stats.UnknownAcks.Add(1)
			continue
		}
		w.ch <- ack{at: at, bytes: len(frame), rejected: rejected}
	}
}

// take removes and returns the frame in flight keyed key, or nil.
func (sl *slot) take(key string) *waiter {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	w := sl.pending[key]
	delete(sl.pending, key)
	return w
}

// down marks the slot's socket gone and fails its frames in flight.
func (sl *slot) down(sock transport.Socket) {
	sock.Close()
	sl.mu.Lock()
	if sl.sock == sock {
		sl.sock = nil
		sl.s.stats.Open.Add(-1)
		select {
		case <-sl.s.quit:
		default:
			sl.s.stats.Dropped.Add(1)
		}
	}
	for k, w := range sl.pending {
		w.ch <- ack{closed: true}
		delete(sl.pending, k)
	}
	sl.mu.Unlock()
}

// reopen dials again after 100 ms, doubling to 5 s between attempts, until
// it succeeds or the sockets are closed.
func (sl *slot) reopen() {
	backoff := 100 * time.Millisecond
	for {
		t := time.NewTimer(backoff)
		select {
		case <-sl.s.quit:
			t.Stop()
			return
		case <-t.C:
		}
		if _, err := sl.open(sl.s.ctx); err == nil {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// send writes frame, keyed key, and waits up to timeout for its ack, or
// until done is closed (the step gave up on its in-flight work).
func (sl *slot) send(frame []byte, key string, w *waiter, timeout time.Duration, done <-chan struct{}) (ack, transport.Kind) {
	sl.mu.Lock()
	sock := sl.sock
	if sock == nil {
		sl.mu.Unlock()
		return ack{}, transport.WSClosed
	}
	if sl.pending == nil {
		sl.pending = map[string]*waiter{}
	}
	sl.pending[key] = w
	sl.mu.Unlock()
	if err := sock.WriteText(frame); err != nil {
		if !sl.forget(key) {
			<-w.ch // the reader failed it first (the socket went down): take that answer, or the next frame would get it
		}
		// A failed write (a target that stopped reading) leaves the socket
		// unusable: closing it makes its reader count the drop and reopen it.
		sock.Close()
		return ack{}, transport.WSClosed
	}
	t := w.timer
	t.Reset(timeout)
	defer t.Stop()
	select {
	case a := <-w.ch:
		return a, a.kind()
	case <-done:
	case <-t.C:
	}
	if !sl.forget(key) {
		a := <-w.ch // the reader got there first: take its answer
		return a, a.kind()
	}
	return ack{}, transport.WSNoAck
}

// kind is how a frame that got answer a ended: ok for its ack, limited for
// its rejection, ws_closed when its socket closed first.
func (a ack) kind() transport.Kind {
	switch {
	case a.closed:
		return transport.WSClosed
	case a.rejected:
		return transport.Limited
	}
	return transport.OK
}

// forget removes key from pending and reports whether it was still there.
func (sl *slot) forget(key string) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	_, ok := sl.pending[key]
	delete(sl.pending, key)
	return ok
}
