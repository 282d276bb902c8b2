package load

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
)

// arrival is one scheduled iteration handed to a worker.
type arrival struct {
	intended time.Duration
	pick     uint64 // picks the scenario; see scenario.Mix
}

// pool hands arrivals to workers. The scheduler is its only caller.
type pool struct {
	sr       *stepRun
	work     chan arrival   // unbuffered: a send succeeds only into an idle worker
	inflight sync.WaitGroup // arrivals handed over and not yet recorded
	quit     chan struct{}  // closed when the step is over
	exited   sync.WaitGroup // workers that have not returned
	cap      int
	connCap  bool // cap is Config.MaxConns: what the process can open
}

// dispatch hands a over: to an idle worker, else to a new worker while under
// the cap, else it waits for a worker (the arrival is then late, and its
// latency, counted from its intended time, shows the wait). ok is false
// when ctx is cancelled, or over fires (the window ended), while waiting;
// waited says it had to wait.
func (p *pool) dispatch(ctx context.Context, over <-chan time.Time, a arrival) (ok, waited bool) {
	p.inflight.Add(1)
	select {
	case p.work <- a:
		return true, false
	default:
	}
	if p.sr.workers < p.cap && (p.sr.r.made(p.sr.workers) || p.sr.r.mayMakeUser(p.sr)) {
		id := p.sr.workers
		p.sr.workers++
		p.exited.Add(1)
		p.sr.r.running.Add(1)
		go p.worker(p.sr.r.vu(id), p.sr.tap(id), a)
		return true, false
	}
	if p.connCap {
		p.sr.connLimited = true
	}
	select {
	case p.work <- a:
		return true, true
	case <-ctx.Done():
	case <-over:
	}
	p.inflight.Done()
	return false, true
}

func (p *pool) worker(vu *scenario.VU, t *tap, a arrival) {
	defer p.sr.r.running.Done()
	defer p.exited.Done()
	for {
		vu.Iterate(p.sr.work, t, a.intended, a.pick)
		p.inflight.Done()
		select {
		case a = <-p.work:
		case <-p.quit:
			return
		}
	}
}

// maxWorkers is the configured cap, or rate × timeout within [64, 20000];
// lowered to the connections the process can open (Config.MaxConns), and
// then byConns is true.
func (r *Runner) maxWorkers(rate float64) (n int, byConns bool) {
	n = r.cfg.MaxWorkers
	if n <= 0 {
		n = int(math.Min(math.Max(rate*r.cfg.Timeout.Seconds(), 64), 20000))
	}
	if c := r.cfg.MaxConns; c > 0 && c < n {
		return c, true
	}
	return n, false
}

// openSchedule builds the step's timetable, warm-up included (this
// generator's segment of it), and the segment's peak rate.
func (r *Runner) openSchedule(st Step) (schedule.Schedule, float64) {
	warm := schedule.Constant{Rate: st.Rate, Len: st.Warmup}
	var window schedule.Shape = schedule.Constant{Rate: st.Rate, Len: st.Length}
	peak := st.Rate
	if st.Ramp != nil {
		warm.Rate = st.Ramp.From
		window = schedule.Linear{From: st.Ramp.From, To: st.Ramp.To, Len: st.Length}
		peak = math.Max(st.Ramp.From, st.Ramp.To)
	}
	shape := schedule.Sequence{warm, window}
	seg := r.cfg.Segment
	if r.cfg.Poisson {
		return seg.Of(schedule.NewPoisson(shape, r.cfg.Seed+uint64(st.Index))), peak * seg.Fraction()
	}
	return seg.Of(schedule.Uniform{Shape: shape}), peak * seg.Fraction()
}

// runOpen fires the step's arrivals at their intended offsets with one
// reused timer, then waits for the window to end and for the exchanges in
// flight to finish (or gives up on them, see Run).
//
// An arrival that cannot be started before the window ends (no worker came
// free, or the generator fell that far behind) is not started at all: it
// and every later arrival of the window are counted as not sent, and the
// step ends on time, at most the drain after its window, whatever the rate
// asked for.
func (r *Runner) runOpen(ctx context.Context, sr *stepRun) {
	sched, peak := r.openSchedule(sr.st)
	p := &pool{sr: sr, work: make(chan arrival), quit: make(chan struct{})}
	p.cap, p.connCap = r.maxWorkers(peak)
	w := newWaker(ctx, r.cfg.PreciseTimer, peak)
	defer w.close()
	over := time.NewTimer(sr.winEnd - r.now())
	defer over.Stop()
	done := ctx.Done()
	i := int64(0)
	for ; !closed(done); i++ {
		off, ok := sched.Offset(i)
		if !ok {
			break
		}
		intended := sr.start + off
		behind := true
		if now := r.now(); intended > now {
			if !w.wait(ctx, intended-now) {
				break
			}
			behind = false
		} else if now >= sr.winEnd {
			break
		}
		r.arrivals++
		ok, waited := p.dispatch(ctx, over.C, arrival{intended: intended, pick: scenario.Mix(r.cfg.Scenarios.Seed(), r.globalArrival())})
		if !ok {
			break
		}
		if intended >= sr.winStart {
			sr.sent++
			// On time, the arrival started at its intended time, inside the
			// window; behind, the clock says whether it still did.
			if !behind && !waited || r.now() < sr.winEnd {
				sr.started.Add(1)
			}
		}
	}
	if !closed(done) {
		sr.notSent = r.windowArrivals(sched, sr, i)
	}
	sr.waitWindow(ctx)
	drained := r.drain(ctx, &p.inflight)
	close(p.quit)
	sr.end(drained, &p.exited, sr.workers)
}

// windowArrivals counts the arrivals of the step's window from index i on.
func (r *Runner) windowArrivals(sched schedule.Schedule, sr *stepRun, i int64) int64 {
	var n int64
	for ; ; i++ {
		off, ok := sched.Offset(i)
		if !ok {
			return n
		}
		if sr.start+off >= sr.winStart {
			n++
		}
	}
}

// drain waits for in-flight exchanges and reports whether they all ended.
// Each is bounded by the transport timeout, so normally this ends within it;
// once ctx is cancelled it waits at most the grace period.
func (r *Runner) drain(ctx context.Context, inflight *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { inflight.Wait(); close(done) }()
	t := time.NewTimer(r.cfg.Timeout + r.cfg.Grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
	}
	t.Reset(r.cfg.Grace)
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// closed reports whether ch is closed, without blocking.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
