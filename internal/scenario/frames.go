package scenario

import (
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Frames sends the open model's websocket frames from an event loop
// (transport.SocketLoop), in the scheduler's goroutine: no worker renders a
// frame, no reader goroutine matches its ack, nothing waits on a channel
// (issue 19). A frame is what Iterate would make of it, and is recorded as
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

	pend   []framePending
	free   []int32
	fifo   []frameRef // frames in the order they were sent: their deadlines
	head   int
	bySock []map[string]int32 // frames in flight on each socket, by ack key
	wsOf   []*wsScenario      // the scenario of each socket that carried a frame
	ended  []framePending     // frames that ended at Send, passed on by the next Poll
	spare  []framePending
	flight int
	out    transport.Outcome
	done   transport.Done // during Poll
}

// framePending is a frame in flight.
type framePending struct {
	tag      transport.Tag
	start    time.Duration
	deadline time.Duration
	id       int
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
// every scenario sends websocket frames (no idle holding, no HTTP) over
// ws:// to be acked, and nothing of a frame needs a user: no login, vars,
// tags or delivery, and a send template of text, seq and uuid only. Call it
// before OpenSockets.
func (s *Set) LoopFrames(sl transport.SocketLoop) *Frames {
	if sl == nil || s.closed || len(s.login) > 0 || len(s.vars) > 0 || len(s.tagKeys) > 0 {
		return nil
	}
	for _, c := range s.scenarios {
		ws := c.ws
		if ws == nil || ws.idle || c.delivery != nil || !strings.HasPrefix(strings.ToLower(ws.url.s), "ws://") {
			return nil
		}
		if !ws.send.static() {
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
	s.frames = &Frames{set: s, sl: sl, v: s.newVU(0, framesStream, s.made.Add(1)<<32|framesStream&0xFFFFFFFF, nil)}
	return s.frames
}

// framesStream is the random stream of the frames engine's renderer.
const framesStream = ^uint64(0) - 2

// SetBase sets the time the loop's offsets count from.
func (f *Frames) SetBase(t time.Time) { f.sl.SetBase(t) }

// Limit does nothing: a frame needs no connection of its own.
func (f *Frames) Limit(int) {}

// InFlight counts the frames sent and not ended.
func (f *Frames) InFlight() int { return f.flight }

// Sleep sleeps d without watching the network.
func (f *Frames) Sleep(d time.Duration) { f.sl.Sleep(d) }

// Wake ends a Poll in progress.
func (f *Frames) Wake() { f.sl.Wake() }

// Send sends a frame of scenario sc, tagged tag, over the held socket pick
// chooses (as Iterate's u). It always starts one: a frame that cannot go
// (no ack key in it, its socket down) ends at the next Poll.
func (f *Frames) Send(sc int, pick uint64, tag transport.Tag) bool {
	ws := f.set.scenarios[sc].ws
	slots := ws.sockets.slots
	sl := slots[Mix(pick, 1)%uint64(len(slots))]
	frame, err := f.v.render(f.v.frameBuf[:0], ws.send)
	f.v.frameBuf = frame
	f.flight++
	start := f.sl.Now()
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
	p.tag, p.start, p.deadline, p.id, p.key, p.bytes, p.live = tag, start, start+ws.timeout, id, key, int64(len(frame)), true
	for len(f.bySock) <= id {
		f.bySock, f.wsOf = append(f.bySock, nil), append(f.wsOf, nil)
	}
	if f.bySock[id] == nil {
		f.bySock[id] = map[string]int32{}
	}
	f.bySock[id][key] = idx // a frame sent earlier with the same key is left to time out, as on goroutines
	f.wsOf[id] = ws
	f.fifo = append(f.fifo, frameRef{idx: idx, gen: p.gen})
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
	if f.trim() {
		d = min(d, max(f.pend[f.fifo[f.head].idx].deadline-f.sl.Now(), 0))
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

// trim drops the ended frames from the head of fifo, and reports whether
// one in flight is left at its head.
func (f *Frames) trim() bool {
	for f.head < len(f.fifo) {
		if r := f.fifo[f.head]; f.pend[r.idx].gen == r.gen && f.pend[r.idx].live {
			break
		}
		f.head++
	}
	if f.head == len(f.fifo) || f.head > 1024 && f.head > len(f.fifo)/2 {
		f.fifo = f.fifo[:copy(f.fifo, f.fifo[f.head:])]
		f.head = 0
	}
	return f.head < len(f.fifo)
}

// expire ends the frames past their ack timeout as ws_no_ack.
func (f *Frames) expire(now time.Duration) {
	for f.trim() {
		idx := f.fifo[f.head].idx
		if f.pend[idx].deadline > now {
			return
		}
		f.end(idx, transport.WSNoAck, 0, now)
	}
}

// end ends frame idx as kind, its answer in bytes long, at at.
func (f *Frames) end(idx int32, kind transport.Kind, in int64, at time.Duration) {
	p := &f.pend[idx]
	if m := f.bySock[p.id]; m[p.key] == idx {
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
	for f.trim() {
		f.end(f.fifo[f.head].idx, transport.WSNoAck, 0, now)
	}
	f.done = nil
}

// frameEvents is Frames as the loop's SocketHandler.
type frameEvents Frames

// Frame matches a received frame to the frame in flight it answers: the
// plan's reject first, then its ack.
func (e *frameEvents) Frame(id int, data []byte, at time.Duration) {
	f := (*Frames)(e)
	ws := f.scenarioOf(id)
	if ws == nil {
		return
	}
	if r := ws.reject; r != nil {
		if key, ok := r.key(data); ok {
			if idx, ok := f.bySock[id][key]; ok {
				f.end(idx, transport.Limited, int64(len(data)), at)
				return
			}
		}
	}
	if key, ok := ws.ack.key(data); ok {
		if idx, ok := f.bySock[id][key]; ok {
			f.end(idx, transport.OK, int64(len(data)), at)
			return
		}
	}
	ws.sockets.stats.UnknownAcks.Add(1)
}

// scenarioOf returns the scenario socket id belongs to.
func (f *Frames) scenarioOf(id int) *wsScenario {
	if id < len(f.wsOf) && f.wsOf[id] != nil {
		return f.wsOf[id]
	}
	if sl := f.slotOf(id); sl != nil {
		return sl.s.ws
	}
	return nil
}

// slotOf returns the held socket whose loop number is id, or nil.
func (f *Frames) slotOf(id int) *slot {
	for _, c := range f.set.scenarios {
		for _, sl := range c.ws.sockets.allSlots() {
			if int(sl.lid.Load()) == id {
				return sl
			}
		}
	}
	return nil
}

// Down fails the frames in flight on socket id as ws_closed, and reopens
// its slot with backoff.
func (e *frameEvents) Down(id int, _ error) {
	f := (*Frames)(e)
	now := f.sl.Now()
	if id < len(f.bySock) {
		for _, idx := range f.bySock[id] {
			f.end(idx, transport.WSClosed, 0, now)
		}
		f.wsOf[id] = nil
	}
	if sl := f.slotOf(id); sl != nil {
		sl.loopDown(id)
	}
}
