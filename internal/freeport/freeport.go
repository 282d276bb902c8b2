package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Low is the lowest port chosen: above the well-known services.
const Low = 20000

// given are the ports handed out by this process.
var given struct {
	mu    sync.Mutex
	ports map[int]bool
}

// Loopback returns a TCP port of 127.0.0.1 that was free a moment ago,
// below the ephemeral range when there is room there (Range), else one
// the kernel gives for port 0. Another process may take it in between:
// prefer handing a listener over where the program takes one.
func Loopback() (int, error) {
	lo, hi, ok := Range()
	if !ok {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port, nil
	}
	given.mu.Lock()
	defer given.mu.Unlock()
	if given.ports == nil {
		given.ports = map[int]bool{}
	}
	for range 1000 {
		p := lo + rand.IntN(hi-lo)
		if given.ports[p] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // in use
		}
		ln.Close()
		given.ports[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("find a free port: none of 127.0.0.1's in [%d, %d) after 1000 tries", lo, hi)
}

// Range returns the ports Loopback chooses from: Low up to the start of
// the ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range;
// 32768 elsewhere, below the 49152 of macOS and Windows); not ok when that
// range starts too low to leave room below it.
func Range() (lo, hi int, ok bool) {
	lo, hi = Low, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				hi = n
			}
		}
	}
	return lo, hi, hi-lo >= 2000
}
