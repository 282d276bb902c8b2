//go:build !linux

package httpx

import (
	"errors"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// NewLoop returns an error: the event loop is built on Linux's epoll.
// Elsewhere every exchange goes through H1 (a goroutine per user).
func NewLoop(Config) (transport.Loop, error) {
	return nil, errors.New("the event loop needs Linux (epoll)")
}
