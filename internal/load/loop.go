package load

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// engine is what a step on an event loop sends through: the HTTP loop
// with the scenarios' fixed requests (Config.Loop), or the websocket
// frames engine (Config.Frames). Send starts scenario sc's exchange, which
// pick chooses a socket for where there is a choice; see transport.Loop
// for the rest.
type engine interface {
	Send(sc int, pick uint64, tag transport.Tag) bool
	Poll(d time.Duration, done transport.Done)
	Sleep(d time.Duration)
	Wake()
	InFlight() int
	Limit(conns, dialsPerPoll int)
	Abort(done transport.Done)
}

// httpEngine is the HTTP loop sending the fixed requests.
type httpEngine struct {
	transport.Loop
	fixed []*transport.Request
}

func (e httpEngine) Send(sc int, _ uint64, tag transport.Tag) bool {
	return e.Loop.Send(e.fixed[sc], tag)
}

// loopable reports whether step st runs on an event loop: in the open
// model, when the plan's frames go over one (Config.Frames); else when the
// run has an HTTP loop (Config.Loop) and either every scenario is one
// fixed request it can send (scenario.Set.Fixed), sent without virtual
// users, or the loop can drive the virtual users' iterations
// (scenario.Set.OnLoop: templates, checks, extraction, flows, cookies,
// logins, tags, think times; see users).
func (r *Runner) loopable(st Step) bool {
	if r.cfg.Frames != nil {
		return st.VUs == 0
	}
	lp := r.cfg.Loop
	if lp == nil || r.cfg.Scenarios == nil {
		return false
	}
	if !r.fixedDone {
		r.fixedDone = true
		r.fixed = r.cfg.Scenarios.Fixed()
		for _, req := range r.fixed {
			if !lp.Can(req) {
				r.fixed = nil
				break
			}
		}
		r.onLoop = r.cfg.Scenarios.OnLoop()
		// The users' hosts are looked up now, before the step's clock
		// starts, not by the loop in the middle of it; one that does not
		// resolve keeps the plan on goroutines (and the preflight has said
		// why).
		for _, o := range r.cfg.Scenarios.Origins() {
			r.onLoop = r.onLoop && lp.Can(&transport.Request{Static: true, Method: "GET", URL: o + "/"})
		}
	}
	return r.fixedStep(st) || r.onLoop
}

// fixedStep reports whether step st sends the fixed requests from the
// loop without virtual users: every scenario is one (see loopable), the
// target sets no cookies (a user would keep them), and in the closed
// model users do not think.
func (r *Runner) fixedStep(st Step) bool {
	return r.fixed != nil && !r.cfg.Cookies && (st.VUs == 0 || r.cfg.Think == 0)
}

// UsesLoop reports whether step st would run on the event loop.
func (r *Runner) UsesLoop(st Step) bool { return r.loopable(st) }

// loopRun is one lane of a step on the event loops: its loop and its
// share of the step, run on one goroutine locked to an OS thread.
type loopRun struct {
	r    *Runner
	sr   *stepRun
	lp   engine
	nsc  int // scenarios: a tag's N is a user's number times nsc plus its scenario
	tap  *tap
	it   metrics.Iteration
	done transport.Done
	// lane is this lane's number among lanes: its share is the open
	// model's every lanes-th arrival from the lane-th, the closed model's
	// every lanes-th user; its users are the runner's users lane,
	// lane+lanes, …
	lane, lanes int
	// What the lane counted, added to the step's when it ends (fold).
	arrivals    uint64 // its arrivals so far, for the scenario picks
	sent        int64
	notSent     int64
	workers     int
	connLimited bool
	ended       int64         // exchanges the lane's loop ended
	cpu         time.Duration // its thread's CPU time
	// The closed model's users: each one's seed and iterations begun.
	seeds []uint64
	iters []uint64
	quit  <-chan struct{}
	work  <-chan struct{} // the lane's iterations': closed when it gives up on them (giveUp)
	// giveUp ends the lane's iterations, not the other lanes', whose
	// drains may go on.
	giveUp context.CancelFunc
	users  *users // the virtual users, when the loop drives them
}

// laneCount is how many lanes a step on the loops runs: one per HTTP loop,
// one for the websocket frames' engine.
func (r *Runner) laneCount() int {
	if r.cfg.Frames != nil {
		return 1
	}
	return 1 + len(r.cfg.MoreLoops)
}

// laneLoop is lane i's HTTP loop.
func (r *Runner) laneLoop(i int) transport.Loop {
	if i == 0 {
		return r.cfg.Loop
	}
	return r.cfg.MoreLoops[i-1]
}

func (r *Runner) newLoopRun(ctx context.Context, sr *stepRun, lane, lanes int) *loopRun {
	work, giveUp := context.WithCancel(sr.work)
	lr := &loopRun{r: r, sr: sr, tap: sr.tap(lane), lane: lane, lanes: lanes, quit: ctx.Done(), work: work.Done(), giveUp: giveUp}
	lr.done = lr.record
	switch {
	case r.cfg.Frames != nil:
		lr.lp, lr.nsc = r.cfg.Frames, r.cfg.Scenarios.Len()
	case r.fixedStep(sr.st):
		lr.lp, lr.nsc = httpEngine{Loop: r.laneLoop(lane), fixed: r.fixed}, len(r.fixed)
	default:
		lr.users = newUsers(lr, r.laneLoop(lane))
		lr.lp, lr.nsc, lr.done = lr.users, 1, lr.users.answer
	}
	return lr
}

// runLanes runs step sr on the loops, a lane each (laneCount), at once,
// and adds what each counted to the step's. Each lane's goroutine is locked
// to an OS thread for the step: a loop's latency is its thread's, and the
// lanes' threads run on the cores side by side.
//
// A loop waits for the network in system calls the Go scheduler is not
// told of (package epoll: a scheduled one would hand its processor to
// another thread at every wait), so each lane holds a processor (P) even
// while its thread sleeps in the kernel, using no CPU. Every other
// goroutine of the process (the step's collector, the outputs, mock sinks)
// then needs a processor besides the lanes': with as many lanes as
// processors it would wait for the lanes' preemption, up to 10 ms. So a
// step of several lanes runs with one processor more than lanes, if it
// had fewer; the lanes' threads sleeping in the kernel leave the cores to
// it.
func (r *Runner) runLanes(ctx context.Context, sr *stepRun) {
	n := r.laneCount()
	if procs := runtime.GOMAXPROCS(0); n > 1 && procs <= n {
		runtime.GOMAXPROCS(n + 1)
		defer runtime.GOMAXPROCS(procs)
	}
	lanes := make([]*loopRun, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			lr := r.newLoopRun(ctx, sr, i, n)
			if sr.st.VUs > 0 {
				r.runClosedLoop(ctx, lr)
			} else {
				r.runOpenLoop(ctx, lr)
			}
			lr.cpu = threadCPU() - cpu0
			lanes[i] = lr
		})
	}
	wg.Wait()
	sr.giveUp() // every lane has drained: the step's work is over
	for _, lr := range lanes {
		sr.sent += lr.sent
		sr.notSent += lr.notSent
		sr.workers += lr.workers
		sr.connLimited = sr.connLimited || lr.connLimited
		sr.laneCPU = append(sr.laneCPU, lr.cpu)
		sr.laneEnded = append(sr.laneEnded, lr.ended)
	}
}

// globalArrival numbers the lane's latest arrival as the whole load's.
func (lr *loopRun) globalArrival() uint64 {
	return lr.r.wholeArrival((lr.arrivals-1)*uint64(lr.lanes) + uint64(lr.lane))
}

// vu is the lane's user u: the runner's user lane + u·lanes.
func (lr *loopRun) vu(u int) *scenario.VU { return lr.r.vu(lr.lane + u*lr.lanes) }

// madeBefore reports whether the lane's user u exists already.
func (lr *loopRun) madeBefore(u int) bool { return lr.r.made(lr.lane + u*lr.lanes) }

// record records an exchange the loop ended as its scenario's iteration,
// and sends the user's next one in the closed model.
func (lr *loopRun) record(tag transport.Tag, start, end time.Duration, out *transport.Outcome) {
	lr.ended++
	sc := tag.N % lr.nsc
	lr.r.cfg.Scenarios.Record(lr.tap, &lr.it, sc, tag.Intended, start, end, out)
	if lr.seeds != nil {
		lr.next(tag.N/lr.nsc, end)
	}
}

// next starts closed-model user u's next iteration at now (the end of its
// last one), unless the window is over or the run stopped.
func (lr *loopRun) next(u int, now time.Duration) {
	if now >= lr.sr.winEnd || closed(lr.quit) {
		return
	}
	sc := lr.r.cfg.Scenarios.Pick(scenario.Mix(lr.seeds[u], lr.iters[u]))
	lr.iters[u]++
	lr.lp.Send(sc, 0, transport.Tag{Intended: now, N: u*lr.nsc + sc})
}

// runOpenLoop is runOpen on the event loop: the scheduler sends each
// arrival itself when it is due, and between arrivals waits in the loop's
// Poll, which ends the exchanges whose answers came. An arrival that finds
// no free connection under the cap waits in a queue (late, and its latency
// shows it) and is sent when one frees; one still waiting when the window
// ends is not sent, and counts as not sent with every later one.
func (r *Runner) runOpenLoop(ctx context.Context, lr *loopRun) {
	sr := lr.sr
	sched, peak := r.openSchedule(sr.st)
	limit, byConns := r.maxWorkers(peak) // the step's, shared out between the lanes
	if lr.lanes > 1 {
		share := schedule.Segment{I: lr.lane, N: lr.lanes}
		sched, peak, limit = share.Of(sched), peak/float64(lr.lanes), max(share.Users(limit), 1)
	}
	lr.lp.Limit(limit, DialsPerWake)
	unwake := context.AfterFunc(ctx, lr.lp.Wake)
	defer unwake()
	// Nothing read the sockets since the last step: what came meanwhile (a
	// socket the server closed, a ping) is seen before the first send.
	lr.lp.Poll(0, lr.done)
	// Above PreciseBelow the loop wakes every coarse period and sends
	// every arrival due by then (see PreciseBelow).
	var coarse time.Duration
	if !r.cfg.PreciseTimer || peak > PreciseBelow {
		coarse = coarsePeriod(peak)
	}
	var queue []arrival
	i := int64(0)
	off, more := sched.Offset(0)
	for !closed(lr.quit) {
		// The clock is read again after each send: sending a burst that
		// came due (new connections to open) takes time, and nothing is
		// sent once the window has ended.
		now := r.now()
		for len(queue) > 0 && now < sr.winEnd && lr.send(queue[0]) {
			queue = queue[1:]
			now = r.now()
		}
		for more && len(queue) == 0 && sr.start+off <= now && now < sr.winEnd {
			lr.arrivals++
			a := arrival{intended: sr.start + off, pick: scenario.Mix(r.cfg.Scenarios.Seed(), lr.globalArrival())}
			if !lr.send(a) {
				queue = append(queue, a)
				// Held by the open-file limit only when every
				// connection under it is busy (not by DialsPerWake).
				lr.connLimited = lr.connLimited || byConns && lr.lp.InFlight() >= limit
			}
			i++
			off, more = sched.Offset(i)
			now = r.now()
		}
		if now >= sr.winEnd || !more && len(queue) == 0 {
			break
		}
		if coarse > 0 && sr.winEnd-now > 2*coarse { // near the end, wake on time: a late wake would not send the last arrivals
			// Above PreciseBelow: wake once per coarse, send what is due
			// and read every answer that came, each timed by the kernel's
			// receive time; a wake-up per answer cost about twice the CPU.
			lr.lp.Sleep(coarse)
			lr.lp.Poll(0, lr.done)
			continue
		}
		// A queued arrival waits for a connection to free, or for the
		// next allowance of new ones (DialsPerWake): a millisecond at most.
		wait := min(sr.winEnd-now, time.Millisecond)
		if len(queue) == 0 {
			wait = sr.start + off - now
		}
		lr.lp.Poll(wait, lr.done)
	}
	if !closed(lr.quit) {
		for _, a := range queue {
			if a.intended >= sr.winStart {
				lr.notSent++
			}
		}
		lr.notSent += r.windowArrivals(sched, sr, i)
	}
	lr.finish()
}

// DialsPerWake bounds the connections the open model's loop opens between
// two looks at the network: a rate that needs more connections than the
// target accepts (its accept queue full, handshakes dropped) opens them a
// few hundred at a time, reading answers and ending timeouts in between,
// rather than as one storm that keeps the loop from its clock. An arrival
// past the bound waits for the next wake, late, as one past the cap does.
const DialsPerWake = 256

// coarsePeriod is how often the open loop wakes at a peak rate above
// PreciseBelow: about every fifth arrival, within a quarter of a
// millisecond and one. An arrival waits for the next wake, half a period
// on average; a shorter period costs a wake-up more, and a wake-up is
// most of the loop's cost at these rates: its sleep's context switch, and
// the target's wake-up its first write brings (on a VM, an interrupt to
// another processor). Measured (bench/README.md): at 20,000 frames/s, a
// half-millisecond period lagged 0.1 ms more than the goroutine engine's
// Go timers, a quarter millisecond as much as they did, for 15 % more CPU;
// at 5000/s against nginx, 1 ms cost 13 µs of CPU a request (bombardier
// 15.5), half a millisecond 18 µs, with a mean lag of 0.6 ms against
// 0.35 (the goroutine engine's Go timers: 0.5–0.7).
func coarsePeriod(peak float64) time.Duration {
	if peak <= 0 {
		return time.Millisecond
	}
	return min(max(time.Duration(5*float64(time.Second)/peak), 250*time.Microsecond), time.Millisecond)
}

// send sends arrival a, and counts it; false when no connection is free.
func (lr *loopRun) send(a arrival) bool {
	sc := lr.r.cfg.Scenarios.Pick(a.pick)
	if !lr.lp.Send(sc, a.pick, transport.Tag{Intended: a.intended, N: sc}) {
		return false
	}
	lr.workers = max(lr.workers, lr.lp.InFlight()) // as the goroutine path's workers: the lane's peak
	if a.intended >= lr.sr.winStart {
		lr.sent++
		lr.sr.started.Add(1)
	}
	return true
}

// runClosedLoop is runClosed on the event loop: each user's next request
// goes out as its last one is recorded. The lane runs its share of the
// step's users: every lanes-th, from the lane-th.
func (r *Runner) runClosedLoop(ctx context.Context, lr *loopRun) {
	n := schedule.Segment{I: lr.lane, N: lr.lanes}.Users(lr.sr.st.VUs)
	lr.workers = n
	lr.lp.Limit(1<<30, 0) // at most n in flight; idle ones to other hosts may stay
	unwake := context.AfterFunc(ctx, lr.lp.Wake)
	defer unwake()
	lr.seeds, lr.iters = make([]uint64, n), make([]uint64, n)
	for u := range n {
		lr.seeds[u] = r.cfg.Scenarios.Seed() + uint64(r.globalVU(lr.lane+u*lr.lanes))<<40
		if lr.users != nil {
			lr.users.begin(u, r.now())
		} else {
			lr.next(u, r.now())
		}
	}
	lr.finish()
}

// finish polls until the window ends, then drains what is in flight as
// Run does: up to the timeout and the grace, only the grace once the run
// is stopped; what is left then is aborted, and ends as timeouts.
func (lr *loopRun) finish() {
	r, sr, lp := lr.r, lr.sr, lr.lp
	for now := r.now(); now < sr.winEnd && !closed(lr.quit); now = r.now() {
		lp.Poll(sr.winEnd-now, lr.done)
	}
	limit := r.now() + r.cfg.Timeout + r.cfg.Grace
	stopped := false
	for lp.InFlight() > 0 {
		now := r.now()
		if !stopped && closed(lr.quit) {
			stopped, limit = true, min(limit, now+r.cfg.Grace)
		}
		if now >= limit {
			lr.giveUp() // first: a user's flow sends nothing more
			lp.Abort(lr.done)
			break
		}
		lp.Poll(limit-now, lr.done)
	}
	lr.giveUp()
}
