package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Point is one second of a step.
type Point struct {
	// T is the end of the second, in seconds from the run's start.
	T float64 `json:"t_s"`
	// Completed counts counted exchanges that ended in this second.
	Completed int64 `json:"completed"`
	// OK, Failed and Limited split Completed.
	OK      int64 `json:"ok"`
	Failed  int64 `json:"failed"`
	Limited int64 `json:"limited"`
	// Rate is responses finished in the window per second, in this second.
	Rate float64 `json:"rate"`
	// P50, P99 and Max are response times of this second, in milliseconds.
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	// TargetCPU and TargetRSS are the monitored target's CPU (% of one
	// core) and RSS (MB) in this second, when it is watched.
	TargetCPU *float64 `json:"target_cpu_pct,omitempty"`
	TargetRSS *float64 `json:"target_rss_mb,omitempty"`
}

// stepRun is the state of one running step shared by its scheduler, workers
// and collector.
type stepRun struct {
	r                *Runner
	st               Step
	start            time.Duration
	winStart, winEnd time.Duration
	rec              *metrics.Recorder
	sent             int64 // written by the scheduler only, read after it ends
	workers          int
	last             time.Duration // end of the last flushed second, collector's own
	cancelled        atomic.Int64  // 1 + the offset at which the context was cancelled; 0 if not

	mu     sync.Mutex // guards total and series against the collector
	total  *metrics.Tally
	series []Point

	stop chan struct{} // closed to end the collector
	done chan struct{} // closed when the collector has ended
}

func (r *Runner) newStepRun(st Step) *stepRun {
	start := r.now()
	return &stepRun{
		r: r, st: st, start: start,
		winStart: start + st.Warmup,
		winEnd:   start + st.Warmup + st.Length,
		rec:      metrics.NewRecorderFor(shardCount(), r.cfg.Scenarios.Layout()),
		total:    metrics.NewTallyFor(r.cfg.Scenarios.Layout()),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// collect merges the shards once a second until stop is closed.
func (sr *stepRun) collect() {
	defer close(sr.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sec := metrics.NewTallyFor(sr.r.cfg.Scenarios.Layout())
	sr.last = sr.start
	for {
		select {
		case <-sr.stop:
			return
		case <-tick.C:
		}
		now := sr.r.now()
		sr.flush(sec, sr.last, now)
		sr.last = now
		if f := sr.r.cfg.OnTick; f != nil {
			sr.mu.Lock()
			f(Progress{
				Step: sr.st, Elapsed: now - sr.start, Warming: now < sr.winStart,
				Total: sr.total, Achieved: sr.achievedSoFar(now),
			})
			sr.mu.Unlock()
		}
	}
}

// flush collects the shards into sec, appends a point for (from, to] and
// merges it into the step's total.
func (sr *stepRun) flush(sec *metrics.Tally, from, to time.Duration) {
	sr.rec.Collect(sec)
	defer sec.Reset()
	if sec.Completed() == 0 && sec.Finished == 0 && to <= sr.winStart {
		return // a quiet second of warm-up
	}
	p := Point{
		T:         to.Seconds(),
		Completed: sec.Completed(),
		OK:        sec.OK(),
		Failed:    sec.Failed(),
		Limited:   sec.Limited(),
		P50:       metrics.Quantile(sec.Latency, 0.50),
		P99:       metrics.Quantile(sec.Latency, 0.99),
		Max:       metrics.Quantile(sec.Latency, 1),
	}
	if d := (min(to, sr.winEnd) - max(from, sr.winStart)).Seconds(); d > 0 {
		p.Rate = float64(sec.Finished) / d
	}
	sr.mu.Lock()
	sr.series = append(sr.series, p)
	sr.total.Merge(sec)
	sr.mu.Unlock()
}

func (sr *stepRun) achievedSoFar(now time.Duration) float64 {
	d := (min(now, sr.winEnd) - sr.winStart).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(sr.total.Finished) / d
}

// watch notes when ctx is cancelled; the returned func stops watching and,
// if the cancel was already being noted, waits until it is, so that finish
// always sees a cancel that ended the step.
func (sr *stepRun) watch(ctx context.Context) (unwatch func()) {
	noted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		sr.cancelled.Store(int64(sr.r.now()) + 1)
		close(noted)
	})
	return func() {
		if !stop() {
			<-noted
		}
	}
}

// waitWindow waits until the counted window ends, or ctx is cancelled.
func (sr *stepRun) waitWindow(ctx context.Context) {
	if d := sr.winEnd - sr.r.now(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// finish stops the collector, takes what the shards still hold and returns
// the step's result. The step was interrupted only if the context was
// cancelled before its window ended; a cancel during the drain after it
// leaves a complete step.
func (sr *stepRun) finish() *Result {
	at := time.Duration(sr.cancelled.Load() - 1)
	interrupted := at >= 0 && at < sr.winEnd
	close(sr.stop)
	<-sr.done
	sr.flush(metrics.NewTallyFor(sr.r.cfg.Scenarios.Layout()), sr.last, sr.r.now())
	if sr.st.VUs > 0 {
		// A user records an exchange when it ends, so in the closed model the
		// exchanges started are those completed (plus any abandoned at a stop).
		sr.sent = sr.total.Completed()
	}
	if sr.st.VUs == 0 {
		sr.sent -= sr.total.Idle
	}
	end := sr.winEnd
	if interrupted {
		end = max(at, sr.winStart)
	}
	return &Result{
		Step: sr.st, WindowStart: sr.winStart, WindowEnd: end,
		Sent: sr.sent, Total: sr.total, Series: sr.series,
		Interrupted: interrupted, Workers: sr.workers,
	}
}
