package freeport

import (
	"net"
	"runtime"
	"strconv"
	"testing"
)

// Loopback's ports are free, in its range (below the ephemeral one,
// where no outgoing connection takes them), and never the same twice.
func TestLoopback(t *testing.T) {
	lo, hi, ok := Range()
	if runtime.GOOS == "linux" && !ok {
		t.Logf("this machine's ephemeral range leaves no room below it: Loopback uses port 0")
	}
	seen := map[int]bool{}
	for range 200 {
		p, err := Loopback()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] || ok && (p < lo || p >= hi) {
			t.Fatalf("Loopback() = %d: want a port in [%d, %d) not handed out before", p, lo, hi)
		}
		seen[p] = true
	}
	// A port it gave is free: it can be bound.
	p, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("Loopback() = %d, which cannot be bound: %v", p, err)
	}
	ln.Close()
}
