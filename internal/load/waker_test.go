package load

import (
	"context"
	"testing"
	"time"
)

// hasPrecise reports whether this system has a precise waker.
func hasPrecise() bool {
	w := newPreciseWaker(context.Background())
	if w == nil {
		return false
	}
	w.close()
	return true
}

// Both wakers wait at least the time asked (an arrival never starts early)
// and end a wait at once when their context is cancelled. Real time: these
// are the real timers, outside any synctest bubble.
func TestWakers(t *testing.T) {
	kinds := []string{"go"}
	if hasPrecise() {
		kinds = append(kinds, "precise")
	}
	newKind := func(kind string, ctx context.Context) waker {
		if kind == "precise" {
			return newPreciseWaker(ctx)
		}
		return newGoWaker()
	}
	for _, kind := range kinds {
		ctx, cancel := context.WithCancel(context.Background())
		w := newKind(kind, ctx)
		for _, d := range []time.Duration{50 * time.Microsecond, 2 * time.Millisecond, 7 * time.Millisecond} {
			for range 20 {
				start := time.Now()
				if !w.wait(ctx, d) {
					t.Fatalf("%s: wait(%v) = false without a cancel", kind, d)
				}
				if took := time.Since(start); took < d || took > d+500*time.Millisecond {
					t.Errorf("%s: wait(%v) took %v, want at least %v and not much more", kind, d, took, d)
				}
			}
		}
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		if w.wait(ctx, time.Hour) {
			t.Errorf("%s: wait(1h) = true after a cancel", kind)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: the cancel ended the wait after %v, want at once", kind, took)
		}
		if w.wait(ctx, time.Hour) {
			t.Errorf("%s: wait after the cancel = true", kind)
		}
		w.close()
	}
}

// The precise timer is used only when asked for and at rates where every
// arrival wakes the scheduler anyway.
func TestNewWakerChoice(t *testing.T) {
	precise := hasPrecise()
	for _, tt := range []struct {
		precise bool
		peak    float64
		goTimer bool
	}{
		{false, 100, true},
		{true, 20000, true},
		{true, PreciseBelow, !precise},
		{true, 200, !precise},
	} {
		w := newWaker(context.Background(), tt.precise, tt.peak)
		_, isGo := w.(*goWaker)
		if isGo != tt.goTimer {
			t.Errorf("newWaker(precise %v, peak %v): Go timer %v, want %v", tt.precise, tt.peak, isGo, tt.goTimer)
		}
		w.close()
	}
}
