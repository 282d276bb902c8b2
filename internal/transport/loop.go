package transport

import "time"

// Tag names an exchange started on a Loop for its caller: when it was
// meant to start, and a number of the caller's (a scenario, a user).
type Tag struct {
	// Intended is the exchange's intended start, as the caller counts time.
	Intended time.Duration
	// N is the caller's number for the exchange.
	N int
}

// Done receives an exchange that ended on a Loop: its tag, when it started
// (connecting included) and ended, as offsets from the loop's base, and its
// outcome. out is the loop's: it is valid until done returns. done may Send.
type Done func(tag Tag, start, end time.Duration, out *Outcome)

// Loop performs HTTP exchanges from its caller's goroutine, without a
// goroutine per connection or a channel: Send starts an exchange and
// returns at once, Poll waits for the network and hands each exchange that
// ended to a Done. The open model's scheduler and the I/O then share one
// thread, and a response costs a read, not a goroutine switch.
// A Loop is used by one goroutine, but Wake.
type Loop interface {
	// Can reports whether the loop can send r: a Static request that does
	// not Capture, to a host it could resolve, over a protocol it speaks.
	Can(r *Request) bool
	// SetBase sets the time the loop's offsets count from (the run's
	// monotonic base). Until it is called, they count from its creation.
	SetBase(t time.Time)
	// Limit caps the open connections, and the connections Send may open
	// between two Polls (0: no bound); past either, Send starts nothing.
	// The second keeps a rate that needs more connections than the target
	// accepts from a storm of connects that would keep the loop from
	// reading.
	Limit(conns, dialsPerPoll int)
	// Send starts r (Can must have said yes) on an idle connection to its
	// host, or a new one. It reports false, starting nothing, at the cap.
	Send(r *Request, tag Tag) bool
	// Poll waits up to d for the network (zero: does not wait) or a Wake,
	// and passes every exchange that ended, timed out included, to done.
	Poll(d time.Duration, done Done)
	// Sleep sleeps d without watching the network; a Poll(0) after it
	// reads every answer that came meanwhile, timed when the kernel
	// received it, so that a caller at a high rate wakes once per d rather
	// than once per answer.
	Sleep(d time.Duration)
	// Wake ends a Poll in progress, or the next one, at once. It is safe
	// from any goroutine.
	Wake()
	// InFlight counts the exchanges started and not ended.
	InFlight() int
	// Conns counts the open connections.
	Conns() int
	// Abort ends every exchange in flight as a Timeout, through done, and
	// closes its connection: the step gave up on it.
	Abort(done Done)
	// Reset closes every connection; the next exchanges connect anew.
	Reset()
	// Close releases the loop and its connections.
	Close()
}
