package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Point is one second of a step.
type Point struct {
	// T is the end of the second, in seconds from the run's start.
	T float64
	// Completed counts counted exchanges that ended in this second.
	Completed int64
	// OK, Failed and Limited split Completed.
	OK, Failed, Limited int64
	// Rate is responses finished in the window per second, in this second.
	Rate float64
	// P50, P99 and Max are response times of this second, in milliseconds.
	P50, P99, Max float64
	// Latency is this second's response times, when Config.SecondHistograms
	// asks for them (to merge seconds exactly); nil otherwise.
	Latency *hdrhistogram.Histogram
	// Kinds counts this second's exchanges by how they ended.
	Kinds metrics.Counts
	// Late counts this second's exchanges that started late.
	Late int64
	// Warming is true for a second of the warm-up.
	Warming bool
	// WindowS is how much of the counted window Rate covers, in seconds
	// (Rate is per second of it); 0 when the point has no rate. A point
	// that covers only a sliver of the window (less than RateWindow) is
	// not extrapolated to a rate: at the window's start its responses and
	// its sliver count in the next point's (which then covers a little
	// more than a second), at its end they have no rate of their own.
	WindowS float64
	// Scenarios counts this second's iterations of each scenario by how
	// they ended, and Tags each tag key's by value (values past the tag
	// limit fold into metrics.Other), when Config.OnSecond is set; nil
	// otherwise.
	Scenarios []metrics.Counts
	Tags      []map[string]metrics.Counts
}

// stepRun is the state of one running step shared by its scheduler, workers
// and collector.
type stepRun struct {
	r                *Runner
	st               Step
	start            time.Duration
	winStart, winEnd time.Duration
	rec              *metrics.Recorder
	sent             int64        // open model: arrivals handed to a user; written by the scheduler only, read after it ends
	notSent          int64        // likewise
	started          atomic.Int64 // written by the scheduler, read by the collector
	workers          int
	connLimited      bool // an arrival waited at Config.MaxConns; the scheduler's own
	// made counts the users the step made (mayMakeUser); memoryLimited says
	// it stopped making them, the heap at heapAtLimit past the budget.
	// Guarded by memMu: the lanes make users at once.
	memMu         sync.Mutex
	made          int
	memoryLimited bool
	heapAtLimit   int64
	// heap0 is the live heap when the step began, its figures' memory
	// made, and users0 the users that existed then (bytes per user).
	heap0  int64
	users0 int
	// laneCPU is each lane's thread's CPU time over the step, when it ran
	// on the event loops.
	laneCPU   []time.Duration
	laneEnded []int64
	// work is the context of the step's iterations: cancelled when the step
	// gives up on its in-flight work, or when the runner is closed.
	work   context.Context
	giveUp context.CancelFunc
	last   time.Duration // end of the last flushed second, collector's own
	// carried and carriedWin are the responses and the window time of a
	// sliver at the window's start, left for the next point's rate;
	// collector's own.
	carried    int64
	carriedWin time.Duration
	cancelled  atomic.Int64 // 1 + the offset at which the context was cancelled; 0 if not

	mu     sync.Mutex // guards total and series against the collector
	total  *metrics.Tally
	series []Point

	stop chan struct{} // closed to end the collector
	done chan struct{} // closed when the collector has ended
}

// newStepRun prepares step st; loop says it runs on the event loop, whose
// one goroutine records into one shard.
func (r *Runner) newStepRun(st Step, loop bool) *stepRun {
	shards := shardCount()
	if loop {
		shards = r.laneCount() // each lane records into a shard of its own
	}
	work, giveUp := context.WithCancel(r.stop)
	sr := &stepRun{
		work: work, giveUp: giveUp, r: r, st: st,
		rec:   metrics.NewRecorderFor(shards, r.cfg.Scenarios.Layout()),
		total: metrics.NewTallyFor(r.cfg.Scenarios.Layout()),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	// The heap is read before the step's clock starts: the collection it
	// takes is not the warm-up's.
	sr.heap0, sr.users0 = liveHeap(), r.userCount()
	sr.start = r.now()
	sr.winStart = sr.start + st.Warmup
	sr.winEnd = sr.winStart + st.Length
	if st.Trace {
		sr.rec.StartTrace(sr.winStart+st.TraceFrom, 0)
	}
	return sr
}

// collect merges the shards once a second until stop is closed.
func (sr *stepRun) collect() {
	defer close(sr.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sec := metrics.NewInterimTallyFor(sr.r.cfg.Scenarios.Layout()) // merged into total each second
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
		// A quiet second of warm-up: no point, but its logins are the
		// step's (users log in at their first iteration, mostly in the
		// warm-up), the one thing a warm-up second counts.
		sr.mu.Lock()
		sr.total.Logins.Merge(&sec.Logins)
		sr.mu.Unlock()
		return
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
		Kinds:     sec.Kinds,
		Late:      sec.Late,
		Warming:   to <= sr.winStart,
	}
	p.Rate, p.WindowS = sr.rate(sec.Finished, min(to, sr.winEnd)-max(from, sr.winStart), to < sr.winEnd)
	if sr.r.cfg.SecondHistograms {
		p.Latency = metrics.NewHistogram()
		p.Latency.Merge(sec.Latency)
	}
	if f := sr.r.cfg.OnSecond; f != nil {
		p.Scenarios = make([]metrics.Counts, len(sec.Scenarios))
		for i, sub := range sec.Scenarios {
			p.Scenarios[i] = sub.Kinds
		}
		p.Tags = make([]map[string]metrics.Counts, len(sec.Tags))
		for i, values := range sec.Tags {
			p.Tags[i] = make(map[string]metrics.Counts, len(values))
			for v, sub := range values {
				p.Tags[i][v] = sub.Kinds
			}
		}
		f(sr.st, p, sec.Latency)
	}
	sr.mu.Lock()
	if !sr.st.NoSeries {
		sr.series = append(sr.series, p)
	}
	sr.total.Merge(sec)
	sr.mu.Unlock()
}

// counted returns the iterations and the exchanges the step sent in its
// window, once its collector has ended. Every exchange of an iteration
// counts where the iteration does (the step whose window holds its
// intended start), so a flow crossing the window's end is counted whole.
//
// Closed model: a user records an exchange when it ends and begins no
// iteration after the window, so the exchanges sent are those completed
// (plus any abandoned at a stop, which none knows), and the iterations
// those that ended.
//
// Open model: the iterations are the arrivals handed to a user that sent
// something (not the idle ones, nor those unrun for want of a login). A
// flow sends its requests one after another, so an iteration that had
// not ended when the step gave up on it had exactly one request in
// flight: the exchanges sent are those completed, plus one for each
// iteration that did not end. Without per-scenario breakdowns (which
// count the iterations that ended) each iteration is taken for one
// exchange.
func (sr *stepRun) counted() (iterations, sent int64) {
	ended, known := sr.total.Iterations()
	if sr.st.VUs > 0 {
		return ended, sr.total.Completed()
	}
	iterations = max(sr.sent-sr.total.Idle-sr.total.Logins.Skipped, 0)
	if !known {
		return iterations, iterations
	}
	return iterations, sr.total.Completed() + max(iterations-ended, 0)
}

// startedSending counts the open model's arrivals of the window that
// started and sent something: not those that ran nothing for want of a
// login, nor the idle ones (a soak's, which send nothing by design). The
// caller holds mu, or the collector has ended.
func (sr *stepRun) startedSending() int64 {
	return max(sr.started.Load()-sr.total.Logins.Skipped-sr.total.Idle, 0)
}

// RateWindow is the least part of the counted window a point of the
// series must cover to have a rate of its own (or half the window, when
// that is shorter): the collector's seconds are timed from the step's
// start, so the one in which the window starts covers only a sliver of it
// (a millisecond or two after a whole warm-up) and one response in it
// would read as hundreds a second.
const RateWindow = 500 * time.Millisecond

// rate returns a point's rate: the finished responses n over the part d
// of the window it covers, with what an earlier sliver carried; more
// says whether the window goes on after the point. A sliver (d under
// RateWindow) has no rate: while the window goes on, its responses and
// its time are carried to the next point's.
func (sr *stepRun) rate(n int64, d time.Duration, more bool) (perSec, windowS float64) {
	if d <= 0 {
		return 0, 0
	}
	n, d = n+sr.carried, d+sr.carriedWin
	sr.carried, sr.carriedWin = 0, 0
	if d < min(RateWindow, sr.st.Length/2) {
		if more {
			sr.carried, sr.carriedWin = n, d
		}
		return 0, 0
	}
	return float64(n) / d.Seconds(), d.Seconds()
}

// achievedSoFar is the achieved rate of the window so far (see
// Result.Achieved). The caller holds mu.
func (sr *stepRun) achievedSoFar(now time.Duration) float64 {
	n := sr.startedSending()
	if sr.st.VUs > 0 {
		n = sr.total.Finished
	}
	return perSecond(n, min(now, sr.winEnd)-sr.winStart)
}

// end waits for the step's workers, counted by exited. drained says whether
// the in-flight work ended within the drain; if not, the step gives up on
// it: the iterations' context is cancelled and the sessions of the step's
// first users virtual users aborted, so that every worker returns promptly.
func (sr *stepRun) end(drained bool, exited *sync.WaitGroup, users int) {
	if !drained {
		sr.giveUp()
		sr.r.abort(users)
	}
	exited.Wait()
	sr.giveUp()
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
	sr.flush(metrics.NewInterimTallyFor(sr.r.cfg.Scenarios.Layout()), sr.last, sr.r.now())
	iterations, sent := sr.counted()
	notLoggedIn, earlier := 0, 0
	for _, v := range sr.r.vus[:min(sr.workers, len(sr.r.vus))] {
		switch {
		case !v.LoggedIn():
			notLoggedIn++
		case v.LoggedInBefore(sr.start):
			earlier++
		}
	}
	end := sr.winEnd
	if interrupted {
		end = max(at, sr.winStart)
	}
	budget := sr.r.cfg.MemoryBudget
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	perUser := 0.0
	if made := sr.r.userCount() - sr.users0; made >= 100 { // enough users for their cost to stand out
		perUser = float64(max(liveHeap()-sr.heap0, 0)) / float64(made)
	}
	res := &Result{
		Step: sr.st, WindowStart: sr.winStart, WindowEnd: end,
		Sent: sent, Iterations: iterations, Started: sr.startedSending(), NotSent: sr.notSent, Total: sr.total, Series: sr.series,
		Trace:       sr.rec.Trace(),
		Interrupted: interrupted, Workers: sr.workers, NotLoggedIn: notLoggedIn, LoggedInEarlier: earlier,
		MemoryLimited: sr.memoryLimited, MemoryBudget: budget, HeapAtLimit: sr.heapAtLimit, PeakRSS: peakRSS(), BytesPerUser: perUser,
		LaneCPU: sr.laneCPU, LaneExchanges: sr.laneEnded,
	}
	if sr.connLimited {
		res.ConnLimit = sr.r.cfg.MaxConns
	}
	return res
}
