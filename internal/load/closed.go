package load

import (
	"context"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// runClosed runs the step's virtual users until the window ends: each loops
// request → response → think. A user's intended time is its start time, so
// response and service time are equal and nothing is late.
func (r *Runner) runClosed(ctx context.Context, sr *stepRun) {
	var inflight, exited sync.WaitGroup
	sr.workers = sr.st.VUs
	inflight.Add(sr.st.VUs)
	exited.Add(sr.st.VUs)
	for id := range sr.st.VUs {
		go func() {
			defer exited.Done()
			defer inflight.Done()
			r.user(ctx, sr, id)
		}()
	}
	sr.waitWindow(ctx)
	if r.drain(ctx, &inflight) {
		exited.Wait()
	}
}

func (r *Runner) user(ctx context.Context, sr *stepRun, id int) {
	sess := r.cfg.Exchanger.Session()
	defer sess.Close()
	shard := sr.rec.Shard(id)
	sample := new(metrics.Sample)
	var timer *time.Timer
	if r.cfg.Think > 0 {
		timer = time.NewTimer(time.Hour)
		timer.Stop()
	}
	done := ctx.Done()
	for !closed(done) {
		now := r.now()
		if now >= sr.winEnd {
			return
		}
		sr.exchange(sess, shard, sample, now, now)
		if timer != nil && !sleep(ctx, timer, r.cfg.Think) {
			return
		}
	}
}
