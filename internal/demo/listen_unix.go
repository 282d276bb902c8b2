//go:build unix

package demo

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listen listens on addr, with SO_REUSEPORT when reuse is set.
func listen(addr string, reuse bool) (net.Listener, error) {
	lc := net.ListenConfig{}
	if reuse {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
				return err
			}
			return serr
		}
	}
	return lc.Listen(context.Background(), "tcp", addr)
}
