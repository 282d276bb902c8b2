package transport

import (
	"context"
	"time"
)

// SocketLoop carries WebSocket frames over many held sockets from its
// caller's goroutine, as Loop carries HTTP exchanges: Send writes a frame
// and returns at once, Poll waits for the network and hands every data
// frame that came to a SocketHandler. No goroutine reads a socket, so an
// ack costs a read, not a goroutine switch. The loop answers
// pings itself. A SocketLoop is used by one goroutine, but Dial and Wake.
type SocketLoop interface {
	// Dial opens a socket (the handshake runs in the calling goroutine,
	// which ctx may end early) and hands it to the loop; it returns the
	// socket's number. owner is the caller's, passed back with everything
	// the socket reports: the loop may report the socket down before Dial
	// has returned its number. It is safe from any goroutine; the loop
	// reads the socket from its next Poll on. A failure is classified with
	// ClassifySocketError.
	Dial(ctx context.Context, c SocketConfig, owner int) (int, error)
	// SetBase sets the time the loop's offsets count from (the run's
	// monotonic base). Until it is called, they count from its creation.
	SetBase(t time.Time)
	// Now is the time since the base.
	Now() time.Duration
	// Send writes frame as one masked text frame on socket id. What the
	// kernel cannot take at once is kept and written as the socket drains;
	// a socket that stays full past its WriteTimeout goes down. An error
	// means the frame was not sent: the socket is down (its Down follows
	// in a Poll).
	Send(id int, frame []byte) error
	// Poll waits up to d for the network (zero: does not wait) or a Wake,
	// and passes every data frame that came, and every socket that went
	// down, to h.
	Poll(d time.Duration, h SocketHandler)
	// Sleep sleeps d without watching the network; the Poll(0) after it
	// times every frame by when the kernel received it.
	Sleep(d time.Duration)
	// Wake ends a Poll in progress, or the next one, at once. It is safe
	// from any goroutine.
	Wake()
	// Close closes every socket and releases the loop. It is safe from any
	// goroutine once no Poll runs; a later Dial fails.
	Close()
}

// SocketHandler receives what a SocketLoop read.
type SocketHandler interface {
	// Frame is one whole data message of socket id, dialled for owner,
	// received at at (an offset from the loop's base; the kernel's receive
	// time where it said it). frame is valid until Frame returns.
	Frame(id, owner int, frame []byte, at time.Duration)
	// Down says socket id, dialled for owner, closed, or failed, with err;
	// its number may be given to another socket afterwards.
	Down(id, owner int, err error)
}
