//go:build unix

package httpx

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// stale reports errors of a keep-alive connection the server had closed.
func stale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// closedByPeer looks, without blocking or consuming anything, whether the
// peer has closed c or sent bytes nobody asked for; either makes an idle
// connection unusable.
func closedByPeer(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var buf [1]byte
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
	switch {
	case err != nil:
		return true
	case errors.Is(rerr, syscall.EAGAIN):
		return false // open, nothing to read: usable
	}
	return true // EOF, unsolicited bytes, or an error
}
