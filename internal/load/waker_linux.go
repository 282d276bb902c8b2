package load

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdWaker waits on a Linux timerfd read through Go's network poller:
// the kernel's high-resolution timer wakes the poller when the arrival is
// due, where Go's own timers would round the poller's sleep up to the next
// millisecond (PreciseBelow has the measurements).
type timerfdWaker struct {
	fd   int
	f    *os.File
	buf  [8]byte
	stop func() bool
}

// newPreciseWaker returns a timerfd waker, or nil if one cannot be made.
// Cancelling ctx ends any wait at once.
func newPreciseWaker(ctx context.Context) waker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &timerfdWaker{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
	w.stop = context.AfterFunc(ctx, func() { w.f.SetReadDeadline(time.Unix(1, 0)) })
	return w
}

func (w *timerfdWaker) wait(ctx context.Context, d time.Duration) bool {
	start := time.Now()
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err == nil {
		if _, err = w.f.Read(w.buf[:]); err == nil {
			return true
		}
	}
	if ctx.Err() != nil {
		return false // the cancel set a read deadline: the wait is over
	}
	// Not expected with a valid timerfd. An arrival may start late (its
	// latency shows it) but never early: sleep the rest on a Go timer.
	rest := d - time.Since(start)
	return rest <= 0 || sleep(ctx, time.NewTimer(rest), rest)
}

func (w *timerfdWaker) close() {
	w.stop()
	w.f.Close()
}
