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
// outcome. out is the loop's, its Header and Body too: it is valid until
// done returns. done may Send, once it is done reading out.
type Done func(tag Tag, start, end time.Duration, out *Outcome)

// Loop performs HTTP exchanges from its caller's goroutine, without a
// goroutine per connection or a channel: Send starts an exchange and
// returns at once, Poll waits for the network and hands each exchange that
// ended to a Done. The open model's scheduler and the I/O then share one
// thread, and a response costs a read, not a goroutine switch.
//
// It sends Static requests in a wire form prepared once (Can), and plain
// HTTP requests that are not Static, as rendered for each send: a virtual
// user may render every request into the same Request, which the loop
// does not read once Send has returned.
// A Loop is used by one goroutine, but Wake.
type Loop interface {
	// Can prepares the Static request r and reports whether the loop can
	// send it in that form: it does not Capture, its host resolved, and
	// the loop speaks its protocol. A step of fixed requests runs on the
	// loop when it can send them all. It says nothing of a request that is
	// not Static, which Send takes anyway.
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
	// Send starts r on an idle connection to its host, or a new one. It
	// reports false, starting nothing, at the cap. r is a Static request
	// Can said yes to, or a request that is not Static, to an http:// URL:
	// encoded at once as it is then, so that the caller may change r as
	// soon as Send returns (render its next request into it, from inside
	// done too). Its Outcome.Body holds the answer's body when it
	// Captures. What such a request cannot be sent as (a URL that does not
	// parse, https, a host that does not resolve) ends its exchange, through
	// the next Poll's done, as Protocol, or the class of the failure.
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
