package wsx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Dialer opens sockets.
type Dialer struct {
	d websocket.Dialer
}

var _ transport.SocketDialer = (*Dialer)(nil)

// New returns a Dialer; insecure skips TLS certificate verification.
func New(insecure bool) *Dialer {
	return &Dialer{d: websocket.Dialer{
		ReadBufferSize:  512,
		WriteBufferSize: 1024,
		WriteBufferPool: &sync.Pool{},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // the plan asks for it
	}}
}

// Dial opens a socket; ctx ends the handshake early.
func (d *Dialer) Dial(ctx context.Context, c transport.SocketConfig) (transport.Socket, error) {
	conn, err := d.handshake(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	if c.MaxFrameBytes > 0 {
		conn.SetReadLimit(int64(c.MaxFrameBytes))
	}
	return &socket{c: conn, writeTimeout: c.WriteTimeout}, nil
}

// handshake opens a connection and upgrades it; wrap, when set, wraps the
// TCP connection the handshake runs on.
func (d *Dialer) handshake(ctx context.Context, c transport.SocketConfig, wrap func(net.Conn) net.Conn) (*websocket.Conn, error) {
	dd := d.d
	dd.HandshakeTimeout = c.Timeout
	dd.Subprotocols = c.Subprotocols
	h := http.Header{}
	for _, kv := range c.Header {
		h.Add(kv[0], kv[1])
	}
	// gorilla reads the handshake's answer under a deadline but does not
	// watch ctx: a cancel sets the connection's deadline to the past, which
	// ends the read at once.
	var raw atomic.Pointer[net.Conn]
	dd.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			if wrap != nil {
				nc = wrap(nc)
			}
			raw.Store(&nc)
		}
		return nc, err
	}
	stop := context.AfterFunc(ctx, func() {
		if nc := raw.Load(); nc != nil {
			(*nc).SetDeadline(time.Unix(1, 0))
		}
	})
	conn, resp, err := dd.DialContext(ctx, c.URL, h)
	if !stop() && err == nil { // cancelled as the handshake ended: its deadline may be in the past
		conn.Close()
		return nil, ctx.Err()
	}
	if err != nil {
		if resp != nil && errors.Is(err, websocket.ErrBadHandshake) {
			return nil, &transport.HandshakeError{Status: resp.StatusCode}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return conn, nil
}

type socket struct {
	c            *websocket.Conn
	writeTimeout time.Duration
	wmu          sync.Mutex // one writer at a time, as gorilla requires
	buf          bytes.Buffer
}

// WriteText sends one text frame, within the write timeout. After a failed
// write gorilla fails every later one at once, so writers queued behind a
// blocked one do not each wait out the timeout.
func (s *socket) WriteText(frame []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.writeTimeout > 0 {
		if err := s.c.SetWriteDeadline(time.Now().Add(s.writeTimeout)); err != nil {
			return err
		}
	}
	return s.c.WriteMessage(websocket.TextMessage, frame)
}

// Read returns the next data frame, read into a reused buffer.
func (s *socket) Read() ([]byte, error) {
	_, r, err := s.c.NextReader()
	if err != nil {
		return nil, err
	}
	s.buf.Reset()
	if _, err := io.Copy(&s.buf, r); err != nil {
		return nil, err
	}
	return s.buf.Bytes(), nil
}

// Close closes the connection without a closing handshake.
func (s *socket) Close() error { return s.c.Close() }
