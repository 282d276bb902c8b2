package demo

import (
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestBurnIsCPUTime checks that /burn spends CPU, not wall time: the
// process's CPU grows by about the request's milliseconds.
func TestBurnIsCPUTime(t *testing.T) {
	s, c := start(t, Config{})
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before := cpu()
	if code, _, body := call(t, c, http.MethodGet, s.URL()+"/burn?ms=100", ""); code != http.StatusOK {
		t.Fatalf("GET /burn?ms=100 = %d %q", code, body)
	}
	used := cpu() - before
	t.Logf("GET /burn?ms=100 used %v of CPU (%.0f rounds a millisecond)", used, burnRounds())
	if used < 90*time.Millisecond {
		t.Errorf("GET /burn?ms=100 used %v of CPU, want at least 90ms", used)
	}
}
