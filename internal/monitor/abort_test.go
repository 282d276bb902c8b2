package monitor

import (
	"sync/atomic"
	"testing"
	"time"
)

// Abort runs what AtAbort registered (not what was unregistered), all at
// once, and does not wait past its timeout for a slow one.
func TestAbort(t *testing.T) {
	var ran, removed atomic.Int32
	done := AtAbort(func() { ran.Add(1) })
	defer done()
	AtAbort(func() { removed.Add(1) })()
	release := make(chan struct{})
	defer close(release) // ends the slow function, and Abort's waiting with it
	slow := AtAbort(func() { <-release })
	defer slow()
	start := time.Now()
	Abort(200 * time.Millisecond)
	if ran.Load() != 1 || removed.Load() != 0 {
		t.Errorf("ran %d, unregistered ran %d; want 1 and 0", ran.Load(), removed.Load())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Abort waited %v for a slow function, want about its 200ms timeout", d)
	}
}
