//go:build linux

package dashboard

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/run"
)

// Connections from many addresses (Linux answers every 127.0.0.0/8
// address) are capped in all, not only by address.
func TestConnectionCapTotal(t *testing.T) {
	t.Parallel()
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for a := 2; a < 12; a++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(fmt.Sprintf("127.0.0.%d", a))}}
		for range maxConnsPerAddr {
			c, err := d.Dial("tcp", s.ln.Addr().String())
			if err != nil {
				t.Skipf("dial from 127.0.0.%d: %v", a, err)
			}
			conns = append(conns, c)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	kept := 0
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !closedWithin(c, time.Second) {
				mu.Lock()
				kept++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if kept > run.PageConns {
		t.Errorf("%d of %d idle connections from 10 addresses kept, want at most %d (what the run keeps for them)", kept, len(conns), run.PageConns)
	}
}
