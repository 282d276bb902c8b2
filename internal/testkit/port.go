package testkit

import (
	"net"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/freeport"
)

// Listen listens on a free TCP port of 127.0.0.1; the test's cleanup
// closes the listener. Hand the listener itself to the server under test
// where it takes one: no other process can take the port in between.
func Listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen on loopback: %v", err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago,
// for a program that binds the port itself (a child process, a command
// line), or for an address where nothing listens. Another process may
// take it in between: prefer Listen where a listener can be handed over.
// It is freeport's: below the kernel's ephemeral range, where the tests'
// outgoing connections by the thousand cannot take it meanwhile ("address
// already in use", seen once in twenty runs of a package with port 0),
// and never the same port twice in a test binary.
func FreePort(tb testing.TB) int {
	tb.Helper()
	p, err := freeport.Loopback()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// ServeTCP listens as Listen does and runs serve on every connection it
// accepts, each in a goroutine of its own, until the test ends and the
// cleanup closes the listener: a server that speaks no HTTP, or speaks it
// wrong, as the test writes it. serve closes its connection when done.
func ServeTCP(tb testing.TB, serve func(c net.Conn)) net.Listener {
	tb.Helper()
	ln := Listen(tb)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln
}
