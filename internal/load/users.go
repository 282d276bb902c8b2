package load

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// users is the engine of a step whose virtual users the event loop drives
// (scenario.Set.OnLoop): templated requests, checks and extraction, flows,
// cookies, logins and tags. Each user's iteration is a small state machine
// (scenario.VU's Begin and Answer: render, send, check and extract, next
// request); the loop sends each request as the user renders it and hands
// the answer back to the user, on the loop's one goroutine, as the fixed
// requests' engine does. A user has at most one request in flight, and a
// tag's N is its number.
type users struct {
	lr  *loopRun
	lp  transport.Loop
	vus []*scenario.VU // the step's users by number, made as needed
	// The open model: users with no iteration under way, the longest idle
	// first (from fhead), as goroutine workers queue for the next arrival;
	// and how many users the step may make at most (its workers' cap).
	free  []int
	fhead int
	cap   int
	// held are users whose request the loop could not take yet (the new
	// connections between two polls are bounded): sent after the next Poll.
	held []heldSend
	// The closed model: when each waiting user begins its next iteration
	// (a think time, an obeyed Retry-After, a login's backoff).
	wakes wakeHeap
	think time.Duration
}

// heldSend is a user's request waiting for the loop.
type heldSend struct {
	u   int
	req *transport.Request
}

var _ engine = (*users)(nil)

func newUsers(lr *loopRun, lp transport.Loop) *users {
	return &users{lr: lr, lp: lp, think: lr.r.cfg.Think}
}

// vu returns the lane's user u of the step, making it (and those before
// it) if new.
func (e *users) vu(u int) *scenario.VU {
	for len(e.vus) <= u {
		e.vus = append(e.vus, e.lr.vu(len(e.vus)))
	}
	return e.vus[u]
}

// Send begins an open-model arrival's iteration on a free user, or a new
// one under the cap; false when every user is busy. pick is the
// iteration's u (scenario.VU.Iterate).
func (e *users) Send(_ int, pick uint64, tag transport.Tag) bool {
	var u int
	switch {
	case e.fhead < len(e.free):
		u = e.free[e.fhead]
		if e.fhead++; e.fhead == len(e.free) {
			e.free, e.fhead = e.free[:0], 0
		}
	case len(e.vus) < e.cap && (e.lr.madeBefore(len(e.vus)) || e.lr.r.mayMakeUser(e.lr.sr)):
		u = len(e.vus)
	default:
		return false
	}
	vu := e.vu(u)
	e.lr.workers = max(e.lr.workers, len(e.vus))
	if req := vu.Begin(e.lr.work, e.lr.tap, tag.Intended, pick); req != nil {
		e.send(u, tag.Intended, req)
	} else {
		e.idle(u) // over without a request: a login backing off
	}
	return true
}

// idle puts open-model user u last in the queue of free users: a user
// whose iteration ends at once (its login backing off) must not take
// every arrival while others wait.
func (e *users) idle(u int) {
	if e.fhead > 0 && e.fhead >= len(e.free)/2 {
		e.free, e.fhead = e.free[:copy(e.free, e.free[e.fhead:])], 0
	}
	e.free = append(e.free, u)
}

// send sends user u's request, or holds it for the next Poll.
func (e *users) send(u int, intended time.Duration, req *transport.Request) {
	if !e.lp.Send(req, transport.Tag{Intended: intended, N: u}) {
		e.held = append(e.held, heldSend{u: u, req: req})
	}
}

// answer is the loop's Done: the user takes its answer and sends its next
// request, or its iteration is over and it is free again (the open model)
// or begins its next one (the closed model).
func (e *users) answer(tag transport.Tag, start, end time.Duration, out *transport.Outcome) {
	e.lr.ended++
	u := tag.N
	vu := e.vus[u]
	if req := vu.Answer(e.lr.tap, start, end, out); req != nil {
		e.send(u, 0, req) // the user keeps its times: the tag's are unused
		return
	}
	if e.lr.seeds == nil {
		e.idle(u)
		return
	}
	e.next(u, end, vu.Pause())
}

// next has closed-model user u, whose iteration ended at now asking for a
// wait, begin its next one after the wait and the think time, as a
// goroutine's user does; one that would begin after the window does not.
func (e *users) next(u int, now, wait time.Duration) {
	if wait = max(wait, e.think); wait <= 0 {
		e.begin(u, now)
	} else if now+wait < e.lr.sr.winEnd {
		e.wakes.push(wake{at: now + wait, u: u})
	}
}

// begin begins closed-model user u's next iteration at now, unless the
// window is over or the run stopped. An iteration over at once (nothing
// to send) waits its pause, or the next turn of the loop, before the user
// begins again: a user whose every iteration fails before sending must not
// keep the loop from the network.
func (e *users) begin(u int, now time.Duration) {
	lr := e.lr
	if now >= lr.sr.winEnd || closed(lr.quit) {
		return
	}
	vu := e.vu(u)
	req := vu.Begin(lr.work, lr.tap, now, scenario.Mix(lr.seeds[u], lr.iters[u]))
	lr.iters[u]++
	if req != nil {
		e.send(u, now, req)
		return
	}
	// At the next turn at the earliest, past this one's clock: a turn
	// begins only the users due when it started.
	e.wakes.push(wake{at: now + max(vu.Pause(), e.think, time.Nanosecond), u: u})
}

// Poll polls the loop, no longer than until the next user's wake, then
// begins the users whose wait is over and sends the requests held.
func (e *users) Poll(d time.Duration, done transport.Done) {
	if len(e.wakes) > 0 {
		d = min(d, max(e.wakes[0].at-e.lr.r.now(), 0))
	}
	if len(e.held) > 0 {
		d = min(d, time.Millisecond) // the next allowance of connections: at most a millisecond away
	}
	e.lp.Poll(d, done)
	e.turn()
}

// turn begins the users whose wait is over and sends the held requests,
// in the order they were held, until the loop takes no more.
func (e *users) turn() {
	if len(e.wakes) > 0 {
		now := e.lr.r.now()
		for len(e.wakes) > 0 && e.wakes[0].at <= now {
			e.begin(e.wakes.pop().u, now)
		}
	}
	n := 0
	for n < len(e.held) && e.lp.Send(e.held[n].req, transport.Tag{N: e.held[n].u}) {
		n++
	}
	e.held = e.held[:copy(e.held, e.held[n:])]
}

// Sleep sleeps as the loop does.
func (e *users) Sleep(d time.Duration) { e.lp.Sleep(d) }

// Wake wakes the loop.
func (e *users) Wake() { e.lp.Wake() }

// InFlight counts the requests in flight or held.
func (e *users) InFlight() int { return e.lp.InFlight() + len(e.held) }

// Limit caps the loop's connections and the step's users: each user has
// at most one request in flight.
func (e *users) Limit(conns, dialsPerPoll int) {
	e.cap = conns
	e.lp.Limit(conns, dialsPerPoll)
}

// Abort ends every request in flight or held as a timeout: the step gave
// up on it, and its user's iteration ends there.
func (e *users) Abort(done transport.Done) {
	e.lp.Abort(done)
	held := e.held
	e.held = nil
	now := e.lr.r.now()
	for _, h := range held {
		done(transport.Tag{N: h.u}, now, now, &transport.Outcome{Kind: transport.Timeout})
	}
	e.wakes = e.wakes[:0]
}

// wake is a closed-model user's next begin.
type wake struct {
	at time.Duration
	u  int
}

// wakeHeap is a min-heap of wakes by time: the earliest first.
type wakeHeap []wake

func (h *wakeHeap) push(w wake) {
	*h = append(*h, w)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *wakeHeap) pop() wake {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].at < s[m].at {
			m = l
		}
		if l+1 < n && s[l+1].at < s[m].at {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
