package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// A copy of the first signal that comes within moments (GNU timeout sends
// its SIGTERM to the command, then to its group) is the same request to
// stop; another signal, or the same one later, is a second request.
func TestRepeated(t *testing.T) {
	at := time.Unix(1000, 0)
	first := arrival{sig: syscall.SIGTERM, at: at}
	for _, tt := range []struct {
		name string
		next arrival
		want bool
	}{
		{"the same signal 20µs later", arrival{syscall.SIGTERM, at.Add(20 * time.Microsecond)}, true},
		{"the same signal 99ms later", arrival{syscall.SIGTERM, at.Add(99 * time.Millisecond)}, true},
		{"the same signal 300ms later", arrival{syscall.SIGTERM, at.Add(300 * time.Millisecond)}, false},
		{"another signal at once", arrival{os.Interrupt, at.Add(20 * time.Microsecond)}, false},
	} {
		if got := repeated(first, tt.next); got != tt.want {
			t.Errorf("%s: repeated = %v, want %v", tt.name, got, tt.want)
		}
	}
}
