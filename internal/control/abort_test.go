package control

import (
	"sync/atomic"
	"testing"
	"time"
)

// Abort runs what AtAbort registered (not what was unregistered), all at
// once, and does not wait past its timeout for a slow one. A nil Lifecycle
// keeps nothing and aborts nothing.
func TestAbort(t *testing.T) {
	var l Lifecycle
	var ran, removed, other atomic.Int32
	done := l.AtAbort(func() { ran.Add(1) })
	defer done()
	l.AtAbort(func() { removed.Add(1) })()
	release := make(chan struct{})
	defer close(release) // ends the slow function, and Abort's waiting with it
	slow := l.AtAbort(func() { <-release })
	defer slow()
	var none *Lifecycle
	none.AtAbort(func() { other.Add(1) })()
	none.AtAbort(func() { other.Add(1) })
	none.Abort(time.Second)
	var another Lifecycle
	defer another.AtAbort(func() { other.Add(1) })()
	start := time.Now()
	l.Abort(200 * time.Millisecond)
	if other.Load() != 0 {
		t.Errorf("ran %d functions of a nil or another Lifecycle, want none", other.Load())
	}
	if ran.Load() != 1 || removed.Load() != 0 {
		t.Errorf("ran %d, unregistered ran %d; want 1 and 0", ran.Load(), removed.Load())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Abort waited %v for a slow function, want about its 200ms timeout", d)
	}
}
