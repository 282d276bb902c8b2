package agent

import (
	"sync"
	"time"
)

// DefaultLease is how long an agent holds a session after the last word
// from its coordinator (a heartbeat, a step, a stop), when Server.Lease is
// zero. A coordinator renews it every quarter of it, from the session's
// opening to its close, during steps too.
const DefaultLease = 10 * time.Second

// lease is a coordinator's hold on an agent: it ends ttl after it was last
// renewed, and then calls expire (once, from a goroutine of its own),
// unless it was stopped first.
//
// Concurrency: every method may be called from any goroutine.
type lease struct {
	ttl    time.Duration
	expire func()

	mu    sync.Mutex
	last  time.Time // the last renewal
	timer *time.Timer
	ended bool // expired or stopped
}

// newLease starts a lease of ttl, renewed now.
func newLease(ttl time.Duration, expire func()) *lease {
	l := &lease{ttl: ttl, expire: expire, last: time.Now()}
	l.timer = time.AfterFunc(ttl, l.check)
	return l
}

// renew extends the lease to ttl from now; false when it has ended.
func (l *lease) renew() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return false
	}
	l.last = time.Now()
	return true
}

// left is how long the lease has to run without another renewal.
func (l *lease) left() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return 0
	}
	return max(l.ttl-time.Since(l.last), 0)
}

// stop ends the lease without calling expire.
func (l *lease) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	l.timer.Stop()
}

// check runs when the timer fires: the lease expires if it was not
// renewed since, and the timer is set again for the rest otherwise.
func (l *lease) check() {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	if left := l.ttl - time.Since(l.last); left > 0 {
		l.timer.Reset(left)
		l.mu.Unlock()
		return
	}
	l.ended = true
	l.mu.Unlock()
	l.expire()
}
