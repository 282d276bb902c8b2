package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// watch is the monitored target: a command ceiling started, and the
// watcher reading its CPU and memory (or a cgroup's) and its metrics.
type watch struct {
	target  *control.Target
	watcher *monitor.Watcher
	limit   float64 // the most CPU the target can use, in percent of one core
	// limitWhy says what sets limit: "cores", "CPU affinity", a quota.
	limitWhy string
	log      string
	// unmeasured is true when this OS cannot read the command target's
	// CPU and memory.
	unmeasured bool
	// launch starts the command target again (events: kill, restart,
	// rolling); tree is its process tree's source, swapped to the new
	// target's (nil when a cgroup, or nothing, is read).
	launch control.LaunchConfig
	tree   *swappable
	mu     sync.Mutex // target, as events replace it
	events sync.Mutex // one event replacing the target at a time
	// died is closed when the command target ends on its own (not by
	// ceiling's doing: the run's end, an event's kill or restart); exit
	// says how and diedAt when, both set before it is closed. nil without
	// a command target.
	died     chan struct{}
	diedOnce sync.Once
	exit     control.Exit
	diedAt   time.Time
}

// startWatch starts what the plan's monitor section asks for; a command
// target's output goes to log, and it is kept by life (as are the copies
// events start) until it is stopped. It returns nil when nothing is to be
// watched.
func startWatch(ctx context.Context, p *plan.Plan, log string, life *control.Lifecycle) (*watch, error) {
	m := &p.Monitor
	if m.PID == 0 && m.Command == "" && m.Cgroup == "" && m.Prometheus == nil {
		return nil, nil
	}
	w := &watch{}
	pid := m.PID
	if m.Command != "" {
		if err := w.start(ctx, m, log, life); err != nil {
			return nil, err
		}
		pid = w.target.PID()
	}
	w.limit, w.limitWhy = monitor.CPULimit(pid, m.Cgroup)
	src, err := w.source(p, pid)
	if err != nil {
		w.stop()
		return nil, err
	}
	var scr *monitor.Scraper
	if pr := m.Prometheus; pr != nil {
		if scr, err = monitor.NewScraper(pr.URL, pr.Metrics, time.Second); err != nil {
			w.stop()
			return nil, badInput("%s: %w", where(p, "monitor.prometheus"), err)
		}
	}
	w.watcher = monitor.NewWatcher(src, scr, time.Second)
	if p.Load.Soak != nil {
		w.watcher.Keep(soakKeep(p)) // hours of readings, asked about a window at a time
	}
	w.watcher.Start()
	return w, nil
}

// start launches the command target, its output to log, kept by life, and
// follows it.
func (w *watch) start(ctx context.Context, m *plan.Monitor, log string, life *control.Lifecycle) error {
	w.log = log
	env := make([]string, 0, len(m.Env))
	for k, v := range m.Env {
		env = append(env, k+"="+v)
	}
	w.launch = control.LaunchConfig{
		Command: m.Command, Env: env, Dir: m.Dir, Ready: m.Ready,
		ReadyTimeout: m.ReadyTimeout.Duration, StopGrace: m.StopGrace.Duration, Log: w.log,
		Lifecycle: life,
	}
	t, err := control.Launch(ctx, w.launch)
	if err != nil {
		return fmt.Errorf("start the target: %w", err)
	}
	w.target = t
	w.died = make(chan struct{})
	w.follow(t)
	return nil
}

// source is where the target's CPU and memory are read: its cgroup, or
// its process (a command target's whole tree, swapped when an event starts
// it again); nil when neither, or when this OS cannot read a command
// target's (it then runs unmeasured, its metrics still scraped).
func (w *watch) source(p *plan.Plan, pid int) (monitor.Source, error) {
	m := &p.Monitor
	var src monitor.Source
	var err error
	key := "monitor.pid"
	switch {
	case m.Cgroup != "":
		key = "monitor.cgroup"
		src, err = monitor.Cgroup(m.Cgroup)
	case pid > 0:
		if src, err = monitor.Process(pid); err == nil && m.Command != "" {
			w.tree = &swappable{src: src}
			src = w.tree
		}
	}
	switch {
	case errors.Is(err, errors.ErrUnsupported) && m.Command != "" && m.Cgroup == "":
		w.unmeasured = true
		return nil, nil
	case errors.Is(err, errors.ErrUnsupported):
		return nil, badInput("%s: %w", where(p, key), err)
	case err != nil:
		return nil, fmt.Errorf("watch the target: %w", err)
	}
	return src, nil
}

// figures summarises the target over a step's window, with what the
// watching could not measure in sentences.
func (w *watch) figures(from, to time.Time) (*results.Target, []string) {
	f := w.watcher.Window(from, to)
	t := &results.Target{
		CPUPct: f.CPUPct, CPULimitPct: w.limit, RSSMB: f.RSSMB, RSSMaxMB: f.RSSMaxMB,
		Threads: f.Threads, FDs: f.FDs, Exited: f.Exited, Samples: f.Samples,
		SourceSamples: f.SourceSamples, Scrapes: f.Scrapes, ScrapeErrors: f.ScrapeErrors, ScrapeError: f.ScrapeError,
	}
	if exit, at, ok := w.dead(); ok && !at.After(to) {
		t.Exited, t.Died = true, exit.String()
	}
	if len(f.Metrics) > 0 {
		t.Metrics = map[string]results.Metric{}
		for name, s := range f.Metrics {
			t.Metrics[name] = results.Metric{Last: s.Last, Max: s.Max, Mean: s.Mean, Rate: s.Rate, Counter: s.Counter}
		}
	}
	return t, f.Warnings
}

// annotate adds the target's CPU and RSS to each point of a step's series:
// the reading nearest the end of that second.
func (w *watch) annotate(points []results.Point, base time.Time) {
	if len(points) == 0 {
		return
	}
	first := base.Add(time.Duration((points[0].T - 1) * float64(time.Second)))
	last := base.Add(time.Duration(points[len(points)-1].T * float64(time.Second)))
	readings := w.watcher.Series(first, last.Add(time.Second))
	for i := range points {
		at := base.Add(time.Duration(points[i].T * float64(time.Second)))
		var best *monitor.SeriesPoint
		for j := range readings {
			if !readings[j].Measured {
				continue // a metrics scrape alone: no CPU or memory to show, not zeros
			}
			if best == nil || absDur(readings[j].At.Sub(at)) < absDur(best.At.Sub(at)) {
				best = &readings[j]
			}
		}
		if best != nil && absDur(best.At.Sub(at)) <= time.Second {
			cpu, rss := best.CPUPct, best.RSSMB
			points[i].TargetCPU, points[i].TargetRSS = &cpu, &rss
		}
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// logHint points at the command target's log, if there is one.
func (w *watch) logHint() string {
	if w.log == "" {
		return ""
	}
	return " (its output is in " + w.log + ")"
}

// stop ends the watching and stops the command target.
func (w *watch) stop() {
	if w.watcher != nil {
		w.watcher.Stop()
	}
	if t := w.current(); t != nil {
		t.Stop()
	}
}

// current is the command target now (events replace it).
func (w *watch) current() *control.Target {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.target
}

// relaunch starts the command target again (a second copy, while the
// first may still run: rolling), waits until it is ready, and makes it the
// watched one; it returns the target it replaced. With ports, the new one
// is ready only once its own process tree also listens on each of them
// (control.Target.WaitListening), within what is left of the ready
// timeout: a rolling deploy's new copy, whose ready URL the old copy
// answers too. A new copy that does not get ready is stopped.
func (w *watch) relaunch(ctx context.Context, ports []int) (old *control.Target, err error) {
	c := w.relaunchConfig()
	started := time.Now()
	t, err := control.Launch(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(ports) > 0 {
		left := cmp.Or(c.ReadyTimeout, control.DefaultReadyTimeout) - time.Since(started)
		if err := t.WaitListening(ctx, ports, max(left, 0)); err != nil {
			_ = t.Stop()
			return nil, fmt.Errorf("%w%s", err, w.logHint())
		}
	}
	if w.tree != nil {
		src, err := monitor.Process(t.PID())
		if err == nil {
			w.tree.swap(src)
		}
	}
	w.mu.Lock()
	old, w.target = w.target, t
	w.mu.Unlock()
	w.follow(t)
	return old, nil
}

// relaunchConfig is the target's launch, its output appended to its log.
func (w *watch) relaunchConfig() control.LaunchConfig {
	c := w.launch
	c.Append = true
	return c
}

// swappable is the command target's process tree, replaced when an event
// starts the target again. CPU is cumulative: the new tree's counts on
// from the old one's last reading, so that the watcher's differences stay
// true.
// So are its restarts: a start by an event is the event's, not one.
type swappable struct {
	mu       sync.Mutex
	src      monitor.Source
	offset   time.Duration
	last     time.Duration
	restarts int // the old trees' restarts, counted on by the new one's
	lastRe   int
}

func (s *swappable) Read() (monitor.Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.src.Read()
	r.CPU += s.offset
	r.Restarts += s.restarts
	if err == nil {
		s.last, s.lastRe = r.CPU, r.Restarts
	}
	return r, err
}

func (s *swappable) swap(src monitor.Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src, s.offset, s.restarts = src, s.last, s.lastRe
}

// describe says what is watched, for the first line of output.
func (w *watch) describe(p *plan.Plan) string {
	limit := fmt.Sprintf("; it can use up to %.0f%% CPU (%s)", w.limit, w.limitWhy)
	if w.unmeasured {
		limit = "; its CPU and memory are measured on Linux only"
	}
	switch m := &p.Monitor; {
	case m.Command != "":
		return fmt.Sprintf("started %q (pid %d, log %s)%s", secret.Command(m.Command), w.target.PID(), w.log, limit)
	case m.Cgroup != "":
		return "watching cgroup " + m.Cgroup + limit
	case m.PID > 0:
		return fmt.Sprintf("watching pid %d%s", m.PID, limit)
	}
	return "scraping " + secret.URL(p.Monitor.Prometheus.URL)
}
