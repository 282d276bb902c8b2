package scenario

import (
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Frames sends the open model's websocket frames from an event loop
// (transport.SocketLoop), in the scheduler's goroutine: no worker renders a
// frame, no reader goroutine matches its ack, nothing waits on a channel:
// a frame costs about half the CPU it does on goroutines. A frame is what Iterate would make of it, and is recorded as
// Iterate records it (Record): its ack, or the plan's reject, matched by
// key on the socket it went over; ws_no_ack past the ack timeout;
// ws_closed when its socket went down first. A socket that goes down is
// reopened with backoff, as on goroutines.
//
// Its methods are the executor's (load's) loop engine: Send, Poll, Sleep,
// Wake, InFlight, Limit and Abort, from one goroutine.
type Frames struct {
	set *Set
	sl  transport.SocketLoop
	v   *VU // renders every frame: the plans that fit read no user data

	owners []*slot            // the held sockets, by their owner number on the loop (slot.owner)
	bySlot []map[string]int32 // frames in flight on each held socket, by ack key
	queues []frameQueue       // frames in flight, by ack timeout
	qOf    []int              // each scenario's queue
	pend   []framePending
	free   []int32
	ended  []framePending // frames that ended at Send, passed on by the next Poll
	spare  []framePending
	flight int
	out    transport.Outcome
	done   transport.Done // during Poll
}

// frameQueue holds the frames of one ack timeout in the order they were
// sent: their deadlines in order.
type frameQueue struct {
	timeout time.Duration
	fifo    []frameRef
	head    int
}

// framePending is a frame in flight.
type framePending struct {
	tag      transport.Tag
	start    time.Duration
	deadline time.Duration
	owner    int // the held socket it went over
	key      string
	bytes    int64
	kind     transport.Kind // of a frame that ended at Send
	gen      uint32
	live     bool
}

type frameRef struct {
	idx int32
	gen uint32
}

// LoopFrames returns the frames engine over sl when the plan's frames can
// go over an event loop, and hands sl to the set (CloseSockets closes it);
// else nil, and the set does not use sl. They can when the load is open,
// every scenario is a websocket over ws:// (no HTTP) that either sends
// frames to be acked or holds its sockets idle, and nothing of a frame
// needs a user: no login, vars, tags or delivery, and a send template of
// text, seq and uuid only. An idle socket on the loop has no reader
// goroutine, whose stack is about half of what it costs on goroutines.
// Call it before OpenSockets.
func (s *Set) LoopFrames(sl transport.SocketLoop) *Frames {
	if sl == nil || s.closed || len(s.login) > 0 || len(s.vars) > 0 || len(s.tagKeys) > 0 {
		return nil
	}
	for _, c := range s.scenarios {
		ws := c.ws
		if ws == nil || c.delivery != nil || !strings.HasPrefix(strings.ToLower(ws.url.s), "ws://") {
			return nil
		}
		if !ws.idle && !ws.send.static() {
			if ws.send.fast == nil {
				return nil
			}
			for _, p := range ws.send.fast {
				if p.field != nil {
					return nil
				}
			}
		}
	}
	f := &Frames{set: s, sl: sl, v: s.newVU(0, framesStream, s.made.Add(1)<<32|framesStream&0xFFFFFFFF, nil)}
	for _, c := range s.scenarios {
		q := slices.IndexFunc(f.queues, func(q frameQueue) bool { return q.timeout == c.ws.timeout })
		if q < 0 {
			q = len(f.queues)
			f.queues = append(f.queues, frameQueue{timeout: c.ws.timeout})
		}
		f.qOf = append(f.qOf, q)
	}
	s.frames = f
	return f
}

// own numbers a held socket for the loop (its owner there).
func (f *Frames) own(sl *slot) {
	sl.owner = len(f.owners)
	f.owners = append(f.owners, sl)
	f.bySlot = append(f.bySlot, map[string]int32{})
}

// Frames returns the frames engine LoopFrames made, or nil.
func (s *Set) Frames() *Frames { return s.frames }

// framesStream is the random stream of the frames engine's renderer.
const framesStream = ^uint64(0) - 2

// SetBase sets the time the loop's offsets count from.
func (f *Frames) SetBase(t time.Time) { f.sl.SetBase(t) }

// Limit does nothing: a frame needs no connection of its own.
func (f *Frames) Limit(int, int) {}

// InFlight counts the frames sent and not ended.
func (f *Frames) InFlight() int { return f.flight }

// Sleep sleeps d without watching the network.
func (f *Frames) Sleep(d time.Duration) { f.sl.Sleep(d) }

// Wake ends a Poll in progress.
func (f *Frames) Wake() { f.sl.Wake() }

// Send sends a frame of scenario sc, tagged tag, over the held socket pick
// chooses (as Iterate's u). It always starts one: a frame that cannot go
// (no ack key in it, its socket down) ends at the next Poll, as does an
// arrival of an idle scenario, which holds its sockets and sends nothing.
func (f *Frames) Send(sc int, pick uint64, tag transport.Tag) bool {
	ws := f.set.scenarios[sc].ws
	f.flight++
	start := f.sl.Now()
	if ws.idle { // an idle soak's arrival sends nothing: Record counts it idle, as Iterate does
		f.endNow(tag, start, transport.OK, 0)
		return true
	}
	slots := ws.sockets.slots
	sl := slots[Mix(pick, 1)%uint64(len(slots))]
	frame, err := f.v.render(f.v.frameBuf[:0], ws.send)
	f.v.frameBuf = frame
	if err != nil {
		f.endNow(tag, start, transport.Check, 0)
		return true
	}
	key, ok := ws.ack.key(frame)
	if !ok {
		f.endNow(tag, start, transport.Check, 0) // the sent frame carries no ack key
		return true
	}
	id := int(sl.lid.Load())
	if id < 0 || f.sl.Send(id, frame) != nil {
		f.endNow(tag, start, transport.WSClosed, int64(len(frame)))
		return true
	}
	idx := f.alloc()
	p := &f.pend[idx]
	p.tag, p.start, p.deadline, p.owner, p.key, p.bytes, p.live = tag, start, start+ws.timeout, sl.owner, key, int64(len(frame)), true
	f.bySlot[sl.owner][key] = idx // a frame sent earlier with the same key is left to time out, as on goroutines
	q := &f.queues[f.qOf[sc]]
	q.fifo = append(q.fifo, frameRef{idx: idx, gen: p.gen})
	return true
}

func (f *Frames) alloc() int32 {
	if n := len(f.free); n > 0 {
		idx := f.free[n-1]
		f.free = f.free[:n-1]
		return idx
	}
	f.pend = append(f.pend, framePending{})
	return int32(len(f.pend) - 1)
}

// endNow queues a frame that ended at Send. A Check ends one that was
// never sent (nothing to record as an exchange, see Record).
func (f *Frames) endNow(tag transport.Tag, start time.Duration, kind transport.Kind, bytes int64) {
	f.ended = append(f.ended, framePending{tag: tag, start: start, kind: kind, bytes: bytes})
}

// Poll waits up to d for acks, and passes every frame that ended to done.
func (f *Frames) Poll(d time.Duration, done transport.Done) {
	f.done = done
	f.flush()
	if len(f.ended) > 0 {
		d = 0
	}
	now := f.sl.Now()
	for i := range f.queues {
		if q := &f.queues[i]; f.trim(q) {
			d = min(d, f.pend[q.fifo[q.head].idx].deadline-now)
		}
	}
	f.sl.Poll(max(d, 0), (*frameEvents)(f))
	f.expire(f.sl.Now())
	f.flush()
	f.done = nil
}

// flush passes the frames that ended at Send on; those done itself starts
// and ends wait for the next flush.
func (f *Frames) flush() {
	batch := f.ended
	f.ended = f.spare[:0]
	for i := range batch {
		p := &batch[i]
		f.flight--
		f.out = transport.Outcome{Kind: p.kind, BytesOut: p.bytes}
		f.done(p.tag, p.start, max(f.sl.Now(), p.start), &f.out)
	}
	f.spare = batch[:0]
}

// trim drops the ended frames from the head of q, and reports whether
// one in flight is left at its head.
func (f *Frames) trim(q *frameQueue) bool {
	for q.head < len(q.fifo) {
		if r := q.fifo[q.head]; f.pend[r.idx].gen == r.gen && f.pend[r.idx].live {
			break
		}
		q.head++
	}
	if q.head == len(q.fifo) || q.head > 1024 && q.head > len(q.fifo)/2 {
		q.fifo = q.fifo[:copy(q.fifo, q.fifo[q.head:])]
		q.head = 0
	}
	return q.head < len(q.fifo)
}

// expire ends the frames past their ack timeout as ws_no_ack, at it.
func (f *Frames) expire(now time.Duration) {
	for i := range f.queues {
		q := &f.queues[i]
		for f.trim(q) {
			p := &f.pend[q.fifo[q.head].idx]
			if p.deadline > now {
				break
			}
			f.end(q.fifo[q.head].idx, transport.WSNoAck, 0, p.deadline)
		}
	}
}

// end ends frame idx as kind, its answer in bytes long, at at.
func (f *Frames) end(idx int32, kind transport.Kind, in int64, at time.Duration) {
	p := &f.pend[idx]
	if m := f.bySlot[p.owner]; m[p.key] == idx {
		delete(m, p.key)
	}
	tag, start, bytes := p.tag, p.start, p.bytes
	p.live, p.key = false, ""
	p.gen++
	f.free = append(f.free, idx)
	f.flight--
	f.out = transport.Outcome{Kind: kind, BytesOut: bytes, BytesIn: in}
	f.done(tag, start, max(at, start), &f.out)
}

// Abort ends every frame in flight as ws_no_ack: the step gave up on it.
func (f *Frames) Abort(done transport.Done) {
	f.done = done
	f.flush()
	now := f.sl.Now()
	for i := range f.queues {
		for q := &f.queues[i]; f.trim(q); {
			f.end(q.fifo[q.head].idx, transport.WSNoAck, 0, now)
		}
	}
	f.done = nil
}

// frameEvents is Frames as the loop's SocketHandler.
type frameEvents Frames

// Frame matches a received frame to the frame in flight it answers: the
// plan's reject first, then its ack.
func (e *frameEvents) Frame(_, owner int, data []byte, at time.Duration) {
	f := (*Frames)(e)
	if owner < 0 || owner >= len(f.owners) {
		return
	}
	ws := f.owners[owner].s.ws
	if r := ws.reject; r != nil {
		if key, ok := r.key(data); ok && f.answer(owner, key, transport.Limited, len(data), at) {
			return
		}
	}
	if key, ok := ws.ack.key(data); ok && f.answer(owner, key, transport.OK, len(data), at) {
		return
	}
	ws.sockets.stats.UnknownAcks.Add(1)
}

// answer ends the frame in flight on held socket owner keyed key as kind,
// answered at at by n bytes, and reports whether there was one. An answer
// received before the frame was sent is an earlier frame's (the same key
// sent twice): not this one's. One received after its ack timeout ends it
// as ws_no_ack at the timeout, and is itself unknown, as on goroutines.
func (f *Frames) answer(owner int, key string, kind transport.Kind, n int, at time.Duration) bool {
	idx, ok := f.bySlot[owner][key]
	if !ok {
		return false
	}
	switch p := &f.pend[idx]; {
	case at < p.start:
		return false
	case at > p.deadline:
		f.end(idx, transport.WSNoAck, 0, p.deadline)
		return false
	}
	f.end(idx, kind, int64(n), at)
	return true
}

// Down fails the frames in flight on held socket owner as ws_closed, and
// has the socket reopened with backoff.
func (e *frameEvents) Down(id, owner int, _ error) {
	f := (*Frames)(e)
	if owner < 0 || owner >= len(f.owners) {
		return
	}
	now := f.sl.Now()
	for _, idx := range f.bySlot[owner] {
		f.end(idx, transport.WSClosed, 0, now)
	}
	f.owners[owner].loopDown(id)
}
