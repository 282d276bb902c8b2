package load

import (
	"context"
	"runtime"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Step describes one step to run.
type Step struct {
	// Index is the step's position in the run, from 0.
	Index int
	// Rate is the open model's arrival rate per second, held for the
	// warm-up and the window. Ignored when Ramp is set or VUs > 0.
	Rate float64
	// Ramp, when set, replaces Rate in the window: a linear ramp from
	// Ramp.From (also the warm-up's rate) to Ramp.To.
	Ramp *schedule.Linear
	// VUs is the closed model's number of virtual users; > 0 selects it.
	VUs int
	// Warmup runs before the window and is not counted.
	Warmup time.Duration
	// Length is the counted window.
	Length time.Duration
	// Trace keeps the window's exchanges that end TraceFrom or later into
	// it one by one (Result.Trace), besides the step's figures: for
	// measuring a recovery to the millisecond around an event.
	Trace     bool
	TraceFrom time.Duration
	// NoSeries keeps no per-second series (Result.Series is nil): a step
	// of hours (a soak), whose seconds its Config.OnSecond consumer
	// summarises as they come, would otherwise grow by a point a second.
	NoSeries bool
}

// TargetRate returns the mean arrival rate of the window, or 0 in the
// closed model.
func (s Step) TargetRate() float64 {
	switch {
	case s.VUs > 0:
		return 0
	case s.Ramp != nil:
		return (s.Ramp.From + s.Ramp.To) / 2
	}
	return s.Rate
}

// Config says how a Runner runs its steps.
type Config struct {
	// Exchanger performs exchanges.
	Exchanger transport.Exchanger
	// Loop, when set, performs the exchanges of steps whose scenarios are
	// all one fixed request (scenario.Set.Fixed) from the scheduler's own
	// goroutine (see runOpenLoop); nil: every step runs on the Exchanger's
	// sessions, a goroutine per worker or user. The Runner does not close it.
	Loop transport.Loop
	// MoreLoops are further HTTP event loops, each with connections of its
	// own: a step on the loop runs one lane per loop (Loop and these), each
	// on a goroutine locked to an OS thread of its own, its share of the
	// step (the open model's every n-th arrival, the closed model's every
	// n-th user: see lane), so that the load uses as many cores as there
	// are loops. The Runner does not close them.
	MoreLoops []transport.Loop
	// Frames, when set, sends the open model's websocket frames from the
	// scheduler's goroutine (scenario.Set.LoopFrames), as Loop does HTTP
	// exchanges; nil: frames go over workers. The Runner does not close it.
	Frames *scenario.Frames
	// Scenarios is what every iteration does.
	Scenarios *scenario.Set
	// Timeout is the transport's timeout; it bounds the drain after a step.
	Timeout time.Duration
	// MemoryBudget is the heap, in bytes, past which the open model makes
	// no more users in a step: a user costs what its state needs (a few
	// kilobytes), yet a step that cannot keep up hands every late arrival
	// to a new user, up to MaxWorkers. Zero: DefaultMemoryBudget.
	MemoryBudget int64
	// MaxWorkers caps concurrent open-model exchanges. Zero: rate × timeout,
	// within [64, 20000].
	MaxWorkers int
	// MaxConns is how many connections this process can still open (its
	// open-file limit less the descriptors in use and a reserve): the open
	// model's workers, each of which holds one, and the event loop's
	// connections are capped at it, below MaxWorkers when that is higher.
	// When it binds, arrivals wait for a connection, late, and the step's
	// Result says so (ConnLimit). Zero: no such cap (HTTP/2 shares its
	// connections, and some systems set no limit).
	MaxConns int
	// Cookies says the target sets cookies (its first answer did): a user
	// that must send one back needs its own jar, so on the loop even fixed
	// requests run as virtual users (see loopable).
	Cookies bool
	// Think is the closed model's pause between a user's iterations.
	Think time.Duration
	// PreciseTimer waits for open-model arrivals with a precise timer at
	// rates up to PreciseBelow (Linux: a timerfd), so that they start about
	// 0.1 ms after their intended time instead of up to 1.1 ms after it.
	// Off in tests that run in a synctest bubble, whose clock it cannot see.
	PreciseTimer bool
	// Poisson draws open-model arrivals from a Poisson process; otherwise
	// they are evenly spaced.
	Poisson bool
	// Seed seeds the Poisson draws; step i uses Seed+i.
	Seed uint64
	// Segment is this generator's share of a load split over several
	// (agents, --segment): the open model runs its stripe of the whole
	// timetable (Step.Rate stays the whole's rate), and its users are
	// numbered as the whole's (user k of segment I of N is user k·N + I).
	// The closed model's Step.VUs is already the share. Zero: the whole.
	Segment schedule.Segment
	// SecondHistograms keeps each second's response-time histogram in the
	// series (Point.Latency), for a step that is to be merged.
	SecondHistograms bool
	// Grace is how long in-flight exchanges may finish after the context is
	// cancelled. Zero: 2s.
	Grace time.Duration
	// OnTick, if set, is called about once a second with the step's progress.
	OnTick func(Progress)
	// OnSecond, if set, is called with each second of a step as it is
	// counted (warm-up seconds included; quiet ones before any answer are
	// not), with that second's response times; on the step's collector
	// goroutine. It must not keep latency.
	OnSecond func(st Step, p Point, latency *hdrhistogram.Histogram)
}

// Progress is a step's state, reported once a second.
type Progress struct {
	// Step is the step being run.
	Step Step
	// Elapsed is the time since the step started, warm-up included.
	Elapsed time.Duration
	// Warming is true during the warm-up.
	Warming bool
	// Total is what the window has counted so far. Read it, do not keep it.
	Total *metrics.Tally
	// Achieved is the rate of responses finished in the window so far.
	Achieved float64
}

// Result is what one step measured.
type Result struct {
	// Step is the step that ran.
	Step Step
	// WindowStart and WindowEnd bound the counted window, as offsets from
	// the run's base.
	WindowStart, WindowEnd time.Duration
	// Sent counts the exchanges (requests, frames) of the window's
	// iterations that were sent: each iteration's are counted where the
	// iteration is, whole (see stepRun.counted).
	Sent int64
	// Iterations counts the iterations of the window: the open model's
	// arrivals handed to a user that sent something (less the idle ones,
	// which send nothing by design, and those unrun for want of a login),
	// the closed model's users' iterations that ended.
	Iterations int64
	// Started counts the open model's arrivals of the window that started
	// before the window ended: all of them, unless the generator fell behind;
	// not those that sent nothing (idle ones, or unrun for want of a login).
	Started int64
	// NotSent counts the open model's arrivals of the window that could not
	// be started before it ended (no worker came free, or the generator fell
	// that far behind): they were never sent.
	NotSent int64
	// Total is everything counted in the window.
	Total *metrics.Tally
	// Series holds one point per second of the step; nil with
	// Step.NoSeries.
	Series []Point
	// Trace is the exchanges Step.Trace asked for, in the order of their
	// intended starts: every one, up to metrics.TraceCapacity of them, and
	// one in 2^k beyond (each weighing 2^k); nil when not asked for.
	Trace []metrics.Traced
	// Interrupted is true when the context was cancelled before the window
	// ended; the window is then cut at the cancel, and Total holds what had
	// finished by the end of the grace.
	Interrupted bool
	// Workers is the number of workers (open) or users (closed) that ran.
	Workers int
	// MemoryLimited is true when the open model stopped making users at the
	// memory budget (Config.MemoryBudget), the heap then HeapAtLimit bytes
	// and the users Workers: its late arrivals waited for one to come free.
	MemoryLimited bool
	MemoryBudget  int64
	HeapAtLimit   int64
	// LaneCPU is each lane's thread's CPU time over the step when it ran on
	// the event loops (Config.MoreLoops), in lane order; nil on goroutines
	// (and 0 where a thread's time cannot be read).
	LaneCPU []time.Duration
	// LaneExchanges counts the exchanges each lane's loop ended (warm-up
	// and drain included): how evenly the lanes shared the work.
	LaneExchanges []int64
	// PeakRSS is the most resident memory ceiling's process had held by the
	// step's end (bytes; 0 where unknown), and BytesPerUser what the heap
	// grew by for each user the step made, when it made some (0 otherwise).
	PeakRSS      int64
	BytesPerUser float64
	// ConnLimit is Config.MaxConns when the open model's workers (or the
	// event loop's connections) reached it and an arrival had to wait for
	// one; zero otherwise.
	ConnLimit int
	// GeneratorCPU is ceiling's own CPU use while the step ran, in percent
	// of one core.
	GeneratorCPU float64
	// HostCPU is the CPU every process of the machine used while the step
	// ran, ceiling included, and HostSteal what the hypervisor took from
	// its virtual CPUs, both in percent of one core; HostKnown is false
	// where they cannot be read (not Linux).
	HostCPU, HostSteal float64
	HostKnown          bool
	// GCPause is the total of ceiling's garbage-collection pauses while the
	// step ran.
	GCPause time.Duration
	// Loop is true when the step ran on the event loop (Config.Loop).
	Loop bool
	// NotLoggedIn counts the step's users (workers in the open model) that
	// had not logged in by its end, when the plan has a login flow.
	NotLoggedIn int
	// LoggedInEarlier counts the step's users that had logged in during an
	// earlier step (users live across steps): they made no login in this
	// one, so Total.Logins holds only the others'.
	LoggedInEarlier int
}

// gcPauses returns the total stop-the-world pause time of the process so far.
func gcPauses() time.Duration {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return time.Duration(m.PauseTotalNs)
}

// Achieved returns the rate the step achieved: in the open model the
// arrivals of the window that started inside it, per second of the window
// (what the target rate asked for; requests still in flight when the window
// ends count, their responses come in the drain); in the closed model, as
// there is no target rate, the Throughput.
func (r *Result) Achieved() float64 {
	if r.Step.VUs > 0 {
		return r.Throughput()
	}
	return perSecond(r.Started, r.WindowEnd-r.WindowStart)
}

// Throughput returns the responses (OK or limited) that ended inside the
// window, per second of it. A flow's every request counts.
func (r *Result) Throughput() float64 {
	return perSecond(r.Total.Finished, r.WindowEnd-r.WindowStart)
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Runner runs steps against one target, all timed from one base. Its
// virtual users (one per open-model worker, one per closed-model user) live
// across steps, with their sessions, cookies and logins. A user is used by
// one worker at a time: no worker of a step outlives it (see Run), so the
// next step never hands a user to a new worker while an old one runs.
type Runner struct {
	cfg      Config
	base     time.Time
	vus      []*scenario.VU // by worker id; grown under vusMu
	vusMu    sync.Mutex
	arrivals uint64         // open-model arrivals so far, for picking scenarios
	running  sync.WaitGroup // every worker and user goroutine, until it returns
	stop     context.Context
	cancel   context.CancelFunc // cancels stop: the parent of every step's work

	fixed     []*transport.Request // the scenarios' requests, when the loop runs them
	fixedDone bool                 // fixed and onLoop were worked out
	onLoop    bool                 // the loop can drive the virtual users (scenario.Set.OnLoop)
}

// NewRunner returns a runner whose offsets count from now.
func NewRunner(cfg Config) *Runner {
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	stop, cancel := context.WithCancel(context.Background())
	r := &Runner{cfg: cfg, base: time.Now(), stop: stop, cancel: cancel}
	if cfg.Loop != nil {
		cfg.Loop.SetBase(r.base)
	}
	for _, lp := range cfg.MoreLoops {
		lp.SetBase(r.base)
	}
	if cfg.Frames != nil {
		cfg.Frames.SetBase(r.base)
	}
	return r
}

// Close ends the runner: it aborts what is in flight (the iterations stop,
// the sessions' exchanges fail), waits for every worker, then closes every
// virtual user's session. Call it once, after the last Run has returned.
func (r *Runner) Close() {
	r.cancel()
	r.abort(len(r.vus))
	r.running.Wait()
	for _, v := range r.vus {
		v.Session().Close()
	}
	r.vus = nil
}

// Fresh drops the virtual users between steps, closing their sessions:
// the next step starts with new users, so new connections and logins, as
// a repeat of a run should. Call it only between steps (no worker runs).
func (r *Runner) Fresh() {
	for _, v := range r.vus {
		v.Session().Close()
	}
	r.vus = nil
	if r.cfg.Loop != nil {
		r.cfg.Loop.Reset()
	}
	for _, lp := range r.cfg.MoreLoops {
		lp.Reset()
	}
}

// abort ends the exchanges in progress of the first n virtual users, where
// their sessions can (transport.Aborter); the others end within the timeout.
func (r *Runner) abort(n int) {
	for _, v := range r.vus[:min(n, len(r.vus))] {
		if a, ok := v.Session().(transport.Aborter); ok {
			a.Abort()
		}
	}
}

// vu returns virtual user id, creating the users up to it. The lanes of a
// step call it at once (vusMu).
func (r *Runner) vu(id int) *scenario.VU {
	r.vusMu.Lock()
	defer r.vusMu.Unlock()
	for len(r.vus) <= id {
		r.vus = append(r.vus, r.cfg.Scenarios.NewVU(r.globalVU(len(r.vus)), r.cfg.Exchanger.Session()))
	}
	return r.vus[id]
}

// userCount returns the number of virtual users made so far.
func (r *Runner) userCount() int {
	r.vusMu.Lock()
	defer r.vusMu.Unlock()
	return len(r.vus)
}

// made reports whether virtual user id exists already (an earlier step's).
func (r *Runner) made(id int) bool {
	r.vusMu.Lock()
	defer r.vusMu.Unlock()
	return id < len(r.vus)
}

// globalVU is the whole load's number of this generator's user id.
func (r *Runner) globalVU(id int) int {
	if seg := r.cfg.Segment; !seg.Whole() {
		return id*seg.N + seg.I
	}
	return id
}

// globalArrival numbers this generator's latest arrival as the whole
// load's (its segment's stripe), so that the segments' scenario picks are
// the whole's, not the same sequence on every generator.
func (r *Runner) globalArrival() uint64 { return r.wholeArrival(r.arrivals) }

// wholeArrival numbers this generator's arrival n as the whole load's.
func (r *Runner) wholeArrival(n uint64) uint64 {
	if seg := r.cfg.Segment; !seg.Whole() {
		return n*uint64(seg.N) + uint64(seg.I)
	}
	return n
}

// Base returns the run's monotonic base.
func (r *Runner) Base() time.Time { return r.base }

func (r *Runner) now() time.Duration { return time.Since(r.base) }

// Run runs one step and returns its figures. It returns early, with
// Interrupted set, when ctx is cancelled.
//
// No goroutine of the step outlives it. After the window the step waits for
// its in-flight work up to the timeout plus the grace (only the grace once
// ctx is cancelled); past that it gives up on it: iterations stop before
// their next request or frame, and the exchanges in progress are aborted
// (they end as timeouts). Run returns once every worker has.
func (r *Runner) Run(ctx context.Context, st Step) *Result {
	cpu0, wall0, gc0 := processCPU(), time.Now(), gcPauses()
	busy0, steal0, host0 := hostCPU()
	loop := r.loopable(st) // before the step's clock starts: the first call resolves the hosts
	sr := r.newStepRun(st, loop)
	unwatch := sr.watch(ctx)
	go sr.collect()
	switch {
	case loop:
		r.runLanes(ctx, sr)
	case st.VUs > 0:
		r.runClosed(ctx, sr)
	default:
		r.runOpen(ctx, sr)
	}
	unwatch()
	res := sr.finish()
	res.Loop = loop
	if wall := time.Since(wall0); wall > 0 {
		res.GeneratorCPU = 100 * float64(processCPU()-cpu0) / float64(wall)
		if busy, steal, ok := hostCPU(); ok && host0 {
			res.HostCPU, res.HostSteal, res.HostKnown = 100*(busy-busy0)/wall.Seconds(), 100*(steal-steal0)/wall.Seconds(), true
		}
	}
	res.GCPause = gcPauses() - gc0
	return res
}

func shardCount() int { return 4 * runtime.GOMAXPROCS(0) }

// tap records a worker's exchanges and iterations into its shard, deciding
// what the step counts. It implements scenario.Recorder for one worker.
type tap struct {
	sr     *stepRun
	shard  *metrics.Shard
	sample metrics.Sample
}

var _ scenario.Recorder = (*tap)(nil)

func (sr *stepRun) tap(id int) *tap { return &tap{sr: sr, shard: sr.rec.Shard(id)} }

// Now returns the offset from the run's base.
func (t *tap) Now() time.Duration { return t.sr.r.now() }

// Exchange records one request, counted in the step whose window holds
// its iteration's intended start (of). It allocates nothing.
func (t *tap) Exchange(of, intended, start, end time.Duration, out *transport.Outcome) {
	s := &t.sample
	*s = metrics.Sample{Intended: intended, Start: start, End: end, Outcome: *out}
	s.Counted = t.sr.counts(of)
	s.InWindow = end >= t.sr.winStart && end < t.sr.winEnd
	t.shard.Record(s)
}

// Iteration records how an iteration ended.
func (t *tap) Iteration(it *metrics.Iteration) {
	it.Counted = t.sr.counts(it.Of)
	t.shard.RecordIteration(it)
}

// StepOf returns the step's index when intended falls in its counted
// window, else -1.
func (t *tap) StepOf(intended time.Duration) int {
	if t.sr.counts(intended) {
		return t.sr.st.Index
	}
	return -1
}

// Login records one login attempt of the worker's user.
func (t *tap) Login(l *metrics.Login) { t.shard.RecordLogin(l) }

// NoLogin records an open-model arrival whose scenario did not run for
// want of a login. A closed-model user is not handed arrivals: it waits
// out its login's backoff, and its failed attempts are counted as such.
func (t *tap) NoLogin(intended time.Duration) {
	if t.sr.st.VUs == 0 {
		t.shard.SkipForLogin(t.sr.counts(intended))
	}
}

// Idle records an arrival that sent nothing by design.
func (t *tap) Idle(intended time.Duration) { t.shard.Idle(t.sr.counts(intended)) }

// counts reports whether an exchange meant to start at intended belongs to
// the step's counted window.
func (sr *stepRun) counts(intended time.Duration) bool {
	return intended >= sr.winStart && intended < sr.winEnd
}

// sleep waits for d on t, or until ctx is done; it reports whether it slept
// the whole time.
func sleep(ctx context.Context, t *time.Timer, d time.Duration) bool {
	t.Reset(d)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		t.Stop() // since Go 1.23 a stopped timer delivers nothing stale
		return false
	}
}
