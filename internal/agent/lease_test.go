package agent

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A lease ends its ttl after the last renewal, not before, and once; a
// stopped lease never expires.
func TestLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var expired atomic.Int32
		var at time.Time
		start := time.Now()
		l := newLease(time.Second, func() { expired.Add(1); at = time.Now() })
		// Renewed every 400 ms for 3 s: held all along.
		for range 7 {
			time.Sleep(400 * time.Millisecond)
			if !l.renew() {
				t.Fatalf("renew at %v = false, want the lease held", time.Since(start))
			}
		}
		last := time.Now()
		if n := expired.Load(); n != 0 {
			t.Fatalf("expired %d times while renewed every 400 ms, want 0", n)
		}
		if left := l.left(); left != time.Second {
			t.Errorf("left() right after a renewal = %v, want 1s", left)
		}
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if n := expired.Load(); n != 0 {
			t.Fatalf("expired %v after the last renewal, want not before 1s", time.Since(last))
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := expired.Load(); n != 1 || at.Sub(last) != time.Second {
			t.Fatalf("expired %d times, %v after the last renewal; want once, 1s after", n, at.Sub(last))
		}
		if l.renew() || l.left() != 0 {
			t.Errorf("an expired lease: renew() = true or left() = %v, want it over", l.left())
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := expired.Load(); n != 1 {
			t.Errorf("expired %d times, want once", n)
		}

		stopped := newLease(time.Second, func() { t.Error("a stopped lease expired") })
		time.Sleep(500 * time.Millisecond)
		stopped.stop()
		time.Sleep(5 * time.Second)
		synctest.Wait()
	})
}
