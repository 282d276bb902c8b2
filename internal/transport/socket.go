package transport

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Socket is one WebSocket connection. WriteText may be called from several
// goroutines; Read from one at a time.
type Socket interface {
	// WriteText sends one text frame. It fails when the write takes longer
	// than the socket's WriteTimeout; every later write then fails at once.
	WriteText(frame []byte) error
	// Read waits for the next data frame. The slice is valid until the next
	// Read. Pings are answered while it waits.
	Read() ([]byte, error)
	// Close closes the connection.
	Close() error
}

// SocketConfig says how to open a socket.
type SocketConfig struct {
	// URL is the ws:// or wss:// URL.
	URL string
	// Header holds the handshake's extra headers.
	Header [][2]string
	// Subprotocols are offered in the handshake.
	Subprotocols []string
	// Timeout bounds the handshake, connecting included.
	Timeout time.Duration
	// WriteTimeout bounds each frame's write: a target that stops reading
	// fills the connection's buffers, and a write past it fails, after which
	// the socket is unusable. Zero: no bound.
	WriteTimeout time.Duration
	// MaxFrameBytes caps a received frame; a larger one fails Read.
	MaxFrameBytes int
}

// SocketDialer opens sockets. It is safe for concurrent use.
type SocketDialer interface {
	// Dial opens a socket; ctx ends a handshake in progress. A failure is
	// classified with ClassifySocketError.
	Dial(ctx context.Context, c SocketConfig) (Socket, error)
}

// HandshakeError is a WebSocket handshake the server answered with a
// status other than 101.
type HandshakeError struct {
	// Status is the HTTP status the server answered with.
	Status int
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("websocket handshake: status %d", e.Status)
}

// ClassifySocketError maps a failed dial to a Kind: the HTTP status of a
// refused handshake, else as ClassifyError.
func ClassifySocketError(err error) Kind {
	var he *HandshakeError
	if errors.As(err, &he) {
		if k := Classify(he.Status, nil, nil); k != Check {
			return k
		}
		return Protocol
	}
	return ClassifyError(err)
}
