package load

import (
	"context"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/scenario"
)

// runClosed runs the step's virtual users until the window ends: each loops
// request → response → think. A user's intended time is its start time, so
// response and service time are equal and nothing is late.
func (r *Runner) runClosed(ctx context.Context, sr *stepRun) {
	var inflight, exited sync.WaitGroup
	sr.workers = sr.st.VUs
	inflight.Add(sr.st.VUs)
	exited.Add(sr.st.VUs)
	r.running.Add(sr.st.VUs)
	for id := range sr.st.VUs {
		vu, t := r.vu(id), sr.tap(id)
		go func() {
			defer r.running.Done()
			defer exited.Done()
			defer inflight.Done()
			r.user(ctx, sr, vu, t)
		}()
	}
	sr.waitWindow(ctx)
	sr.end(r.drain(ctx, &inflight), &exited, sr.st.VUs)
}

func (r *Runner) user(ctx context.Context, sr *stepRun, vu *scenario.VU, t *tap) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	done := ctx.Done()
	seed := r.cfg.Scenarios.Seed() + uint64(vu.ID())<<40
	for k := uint64(0); !closed(done); k++ {
		now := r.now()
		if now >= sr.winEnd {
			return
		}
		wait := max(vu.Iterate(sr.work, t, now, scenario.Mix(seed, k)), r.cfg.Think)
		if wait <= 0 {
			continue
		}
		if r.now()+wait >= sr.winEnd {
			return // no iteration would start after the wait (a login's backoff, a Retry-After, the think time)
		}
		if !sleep(ctx, timer, wait) {
			return
		}
	}
}
