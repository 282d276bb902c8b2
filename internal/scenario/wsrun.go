package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// connects times handshakes.
type connects struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func (c *connects) add(d time.Duration) {
	c.mu.Lock()
	_ = c.h.RecordValue(min(max(int64(d/time.Microsecond), metrics.LowestUS), metrics.HighestUS))
	c.mu.Unlock()
}

// OpenSockets prepares the plan's websocket scenarios: in the open model it
// opens every scenario's held sockets now, before the first step, at most
// concurrency at a time; in the closed model each virtual user opens its
// own on first use. It fails when a scenario could open none of its
// sockets (partial failures are counted, see SocketTotals, and reopened
// with backoff), and when ctx ends first (an error that wraps ctx.Err()).
// Call CloseSockets afterwards either way.
func (s *Set) OpenSockets(ctx context.Context, d transport.SocketDialer, concurrency int) error {
	for _, c := range s.scenarios {
		ws := c.ws
		if ws == nil {
			continue
		}
		ws.sockets = &sockets{ws: ws, dialer: d, quit: make(chan struct{})}
		if s.frames != nil {
			ws.sockets.loop = s.frames.sl
		}
		ws.sockets.ctx, ws.sockets.cancel = context.WithCancel(context.Background())
	}
	for _, c := range s.scenarios {
		if c.ws == nil || s.closed {
			continue
		}
		if err := s.openHeld(ctx, c.ws, max(concurrency, 1)); err != nil {
			return fmt.Errorf("open sockets of %s: %w", c.name, err)
		}
	}
	return nil
}

func (s *Set) openHeld(ctx context.Context, ws *wsScenario, concurrency int) error {
	ss := ws.sockets
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	r := s.newVU(0, socketStream, socketStream, nil) // renders every socket's URL and headers with .vu = i, on its own random stream
	for i := range ws.conns {
		if ctx.Err() != nil {
			break // interrupted: open no more
		}
		r.id = i
		r.base() // no login: only the vars that need none
		if err := r.evalVars(false); err != nil {
			return err
		}
		sl, err := s.newSlot(ws, r)
		if err != nil {
			return err
		}
		ss.slots = append(ss.slots, sl)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			took, err := sl.openOrRetry(ctx)
			if err != nil {
				mu.Lock()
				first = cmpErr(first, err)
				mu.Unlock()
				return
			}
			s.connects.add(took)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if ss.stats.Opened.Load() == 0 && first != nil {
		return first
	}
	return nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// newSlot renders a socket's URL and headers with v's current data.
func (s *Set) newSlot(ws *wsScenario, v *VU) (*slot, error) {
	cfg := ws.cfg
	var err error
	if cfg.URL, err = v.renderString(ws.url); err != nil {
		return nil, fmt.Errorf("render websocket url: %w", err)
	}
	for _, h := range ws.headers {
		val, err := v.renderString(h.value)
		if err != nil {
			return nil, fmt.Errorf("render websocket header %s: %w", h.name, err)
		}
		cfg.Header = append(cfg.Header, [2]string{h.name, val})
	}
	sl := &slot{s: ws.sockets, cfg: cfg, early: -1}
	sl.lid.Store(-1)
	if s.frames != nil {
		s.frames.own(sl)
	}
	return sl, nil
}

// CloseSockets closes every socket and waits for their readers, and
// closes the event loop the set was handed (LoopFrames).
func (s *Set) CloseSockets() {
	var held []*sockets
	for _, c := range s.scenarios {
		if c.ws != nil && c.ws.sockets != nil {
			held = append(held, c.ws.sockets)
		}
	}
	for _, ss := range held { // every scenario's first: the loop is theirs together
		close(ss.quit)
		ss.cancel()
		for _, sl := range ss.allSlots() {
			sl.mu.Lock()
			if sl.sock != nil {
				sl.sock.Close()
			}
			sl.mu.Unlock()
		}
	}
	if s.frames != nil {
		s.frames.sl.Close() // closes its sockets
		for _, ss := range held {
			for _, sl := range ss.allSlots() {
				if sl.lid.Swap(-1) >= 0 {
					ss.stats.Open.Add(-1)
				}
			}
		}
	}
	for _, ss := range held {
		ss.wg.Wait()
	}
}

func (ss *sockets) allSlots() []*slot {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]*slot(nil), ss.slots...)
}

// SocketTotals is a snapshot of what happened to the plan's sockets.
type SocketTotals struct {
	Open, Opened, Failed, Dropped, UnknownAcks int64
	// Connect summarises handshake times.
	Connect metrics.Latency
}

// SocketTotals sums the plan's sockets so far; ok is false for a plan
// without websocket scenarios.
func (s *Set) SocketTotals() (t SocketTotals, ok bool) {
	for _, c := range s.scenarios {
		if c.ws == nil || c.ws.sockets == nil {
			continue
		}
		ok = true
		st := &c.ws.sockets.stats
		t.Open += st.Open.Load()
		t.Opened += st.Opened.Load()
		t.Failed += st.Failed.Load()
		t.Dropped += st.Dropped.Load()
		t.UnknownAcks += st.UnknownAcks.Load()
	}
	s.connects.mu.Lock()
	t.Connect = metrics.Summarize(s.connects.h)
	s.connects.mu.Unlock()
	return t, ok
}

// slotFor returns the socket a frame goes over: in the open model one of
// the held sockets, chosen from u; in the closed model the user's own,
// opened on first use.
func (v *VU) slotFor(ws *wsScenario, u uint64) (*slot, error) {
	ss := ws.sockets
	if ss == nil {
		return nil, errors.New("sockets not opened")
	}
	if !v.set.closed {
		return ss.slots[Mix(u, 1)%uint64(len(ss.slots))], nil
	}
	if sl := v.own[ws]; sl != nil {
		return sl, nil
	}
	sl, err := v.set.newSlot(ws, v)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	ss.slots = append(ss.slots, sl)
	ss.mu.Unlock()
	if v.own == nil {
		v.own = map[*wsScenario]*slot{}
	}
	v.own[ws] = sl
	took, err := sl.openOrRetry(ss.ctx)
	if err == nil {
		v.set.connects.add(took)
	}
	return sl, nil // a socket that failed to open reopens itself; frames meanwhile are ws_closed
}

// frame sends one frame of ws and times it, from intended, to its ack (ok)
// or to the frame the scenario's reject names (limited).
func (v *VU) frame(rec Recorder, ws *wsScenario, intended time.Duration, u uint64) (time.Duration, transport.Kind, int64) {
	sl, err := v.slotFor(ws, u)
	if err != nil {
		return rec.Now(), transport.Check, 0
	}
	if ws.idle {
		return rec.Now(), transport.OK, 0
	}
	frame, err := v.render(v.frameBuf[:0], ws.send)
	v.frameBuf = frame
	if err != nil {
		return rec.Now(), transport.Check, 0
	}
	key, ok := ws.ack.key(frame)
	if !ok {
		return rec.Now(), transport.Check, 0 // the sent frame carries no ack key
	}
	if v.waiter == nil {
		v.waiter = newWaiter()
	}
	start := rec.Now()
	if v.cut() {
		return start, transport.WSNoAck, 0
	}
	a, kind := sl.send(frame, key, v.waiter, ws.timeout, v.done)
	end := rec.Now()
	if kind == transport.OK || kind == transport.Limited {
		end -= time.Since(a.at) // the ack (or rejection) arrived when the reader read it, not when this user woke
	}
	v.o = transport.Outcome{Kind: kind, BytesOut: int64(len(frame)), BytesIn: int64(a.bytes)}
	rec.Exchange(v.of, intended, start, end, &v.o)
	return end, kind, int64(a.bytes)
}
