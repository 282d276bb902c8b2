package load

import (
	"context"
	"time"
)

// PreciseBelow is the arrival rate at and below which the open model waits
// for each arrival with a precise timer (where the system has one) instead
// of Go's. Go's timers wake an idle process with about 1 ms granularity on
// Linux, so an arrival starts 0.1–1.1 ms late (0.5–0.6 ms on average), and
// that lag is in its latency. Measured on a 2-core VM against a 0.2 ms
// endpoint (ceiling's CPU for 5.5 s, precise against Go timer): 200/s
// 0.29–0.33 s against 0.52–0.53 s, 1000/s 1.08–1.12 s against 1.36–1.66 s,
// 2000/s 1.90 s against 1.97–2.19 s, with the mean lag 0.09–0.12 ms against
// 0.50–0.60 ms; above that the Go timer's batching of several arrivals per
// wake-up is cheaper (5000/s: +17 % CPU for precision, 10,000/s: +35 %).
const PreciseBelow = 2000

// waker puts the open-model scheduler to sleep until an arrival is due.
type waker interface {
	// wait sleeps for d, or until ctx is done; it reports false when ctx
	// ended the wait.
	wait(ctx context.Context, d time.Duration) bool
	// close releases the waker.
	close()
}

// goWaker waits with one reused Go timer.
type goWaker struct{ t *time.Timer }

func newGoWaker() *goWaker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &goWaker{t: t}
}

func (w *goWaker) wait(ctx context.Context, d time.Duration) bool { return sleep(ctx, w.t, d) }

func (w *goWaker) close() { w.t.Stop() }

// newWaker returns the waker for a step whose arrivals come at up to peak a
// second: a precise one when precise is asked for, the rate is at most
// PreciseBelow and the system has one; else a Go timer.
func newWaker(ctx context.Context, precise bool, peak float64) waker {
	if precise && peak <= PreciseBelow {
		if w := newPreciseWaker(ctx); w != nil {
			return w
		}
	}
	return newGoWaker()
}
