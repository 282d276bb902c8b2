//go:build !linux

package wsx

import (
	"errors"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// NewLoop reports that this system has no event loop: websocket frames go
// over goroutines (the Linux loop is loop_linux.go).
func NewLoop(*Dialer) (transport.SocketLoop, error) {
	return nil, errors.New("the websocket event loop needs Linux (epoll)")
}
