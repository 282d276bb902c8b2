package testkit

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
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
//
// The port is below the kernel's ephemeral range, from which it picks
// the local port of every outgoing connection: a port the kernel handed
// out (port 0) and bound again later could be taken meanwhile by one of
// the connections the tests open by the thousand ("address already in
// use", seen once in twenty runs of a package). A port is handed out once
// per test binary.
func FreePort(tb testing.TB) int {
	tb.Helper()
	lo, hi, ok := freeRange()
	if !ok {
		ln := Listen(tb)
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.given == nil {
		ports.given = map[int]bool{}
	}
	for range 1000 {
		p := lo + rand.IntN(hi-lo)
		if ports.given[p] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // in use
		}
		ln.Close()
		ports.given[p] = true
		return p
	}
	tb.Fatalf("no free port of 127.0.0.1 in [%d, %d) after 1000 tries", lo, hi)
	return 0
}

// ports are the ports FreePort has handed out.
var ports struct {
	mu    sync.Mutex
	given map[int]bool
}

// freeRange returns the ports FreePort picks from: from 20000 (above
// the well-known services) to the start of the ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range; 32768 elsewhere, below the
// 49152 of macOS and Windows); not ok when that range starts too low to
// leave room below it.
func freeRange() (lo, hi int, ok bool) {
	lo, hi = 20000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				hi = n
			}
		}
	}
	return lo, hi, hi-lo >= 2000
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
