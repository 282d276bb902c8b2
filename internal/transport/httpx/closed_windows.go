package httpx

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// stale reports errors of a keep-alive connection the server had closed.
// Windows reports a reset or aborted connection with its own codes
// (WSAECONNRESET, WSAECONNABORTED), which syscall.ECONNRESET does not match.
func stale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.WSAECONNRESET) || errors.Is(err, syscall.WSAECONNABORTED)
}

// closedByPeer reports false: Windows has no non-blocking peek
// (MSG_DONTWAIT) on Go's sockets, so an idle connection is taken as alive.
// One the server did close fails before a response byte, and roundTrip then
// sends an idempotent request once more on a new connection; another
// request (a POST) fails, as it can on any system when the server closes
// the connection while the request is on its way.
func closedByPeer(net.Conn) bool { return false }
