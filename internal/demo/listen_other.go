//go:build !unix

package demo

import (
	"errors"
	"net"
)

// listen listens on addr; SO_REUSEPORT is not on this system.
func listen(addr string, reuse bool) (net.Listener, error) {
	if reuse {
		return nil, errors.New("--reuse-port: SO_REUSEPORT is a Linux and macOS option")
	}
	return net.Listen("tcp", addr)
}
