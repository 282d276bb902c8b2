package run

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/soak"
)

// A soak (load.soak) is one step of the plan's one level, as long as the
// soak, whose executor keeps no per-second series (load.Step.NoSeries).
// Its collector, soakCollector, cuts it into windows as its seconds are
// counted: on the step's collector goroutine, while the session's waits
// for the step, it closes each window with the target's and ceiling's
// own figures over it (package soak keeps them, fits them and finds the
// episodes), puts the soak so far in the result, judges it, and hands the
// result to result.json and the outputs that follow windows
// (WindowOutput). So a soak killed after hours leaves a result.json that
// holds every window it finished and says how far it got. When the step
// ends (its length, a Ctrl-C, the target's death), annotate closes the
// last window and the soak, before the step is recorded and judged as
// any other.

// WindowOutput is an Output that also takes the result after each window
// of a soak (result.json, the live page): the soak so far in
// results.Result.Soak, judged, with no step yet. Window runs on the step's
// collector goroutine; the result is the session's, to read during the
// call only. An error is noted (Options.OnNote) and the soak goes on.
type WindowOutput interface {
	Window(res *results.Result) error
}

// soakStep is the one step of a soak: the plan's one level, for the
// soak's length, without a series.
func soakStep(p *plan.Plan) load.Step {
	st := Steps(p)[0]
	st.Length, st.NoSeries = p.Load.Soak.For.Duration, true
	return st
}

// soakKeep is how many readings of the target a soak's watcher keeps one
// by one: a window's and a minute's; older ones are thinned, as a soak
// asks only about the window that has just ended.
func soakKeep(p *plan.Plan) int {
	return int(p.Load.Soak.Window.Seconds()) + 60
}

// soakCollector is a soak's collector (see above).
type soakCollector struct {
	s    *Session
	rec  *soak.Recorder
	zero time.Time // the soak's start: the step's counted window
	base time.Time // the run's clock's origin (load.Point.T counts from it)
	// memory is the target's memory limit, whose OOM kills tell an OOM
	// death; kills the count of them when the soak began.
	memory    monitor.MemoryLimit
	hasMemory bool
	kills     int64
	noted     bool // a failed write has been noted
	// filed is the time of the last restart filed: a reading on the edge
	// of two windows is in both.
	filed time.Time
}

func (c *soakCollector) begin(_ context.Context, st load.Step) {
	s := c.s
	k := s.p.Load.Soak
	c.zero = time.Now().Add(st.Warmup)
	c.base = s.runner.Base()
	cfg := soak.Config{For: k.For.Duration, Window: k.Window.Duration, Horizon: k.Horizon.Duration,
		Terms: s.terms, TargetRate: st.TargetRate() * s.o.Segment.Fraction(), Limits: c.limits()}
	c.rec = soak.New(cfg, c.zero.Round(0))
	s.res.Soak = c.rec.Soak()
}

// limits are the target's limits known: its memory (the plan's, else its
// cgroup's) and its open files.
func (c *soakCollector) limits() []results.Limit {
	s := c.s
	var out []results.Limit
	pid := s.p.Monitor.PID
	if s.watch != nil {
		if t := s.watch.current(); t != nil {
			pid = t.PID()
		}
	}
	if s.watch != nil && (pid > 0 || s.p.Monitor.Cgroup != "") {
		c.memory, c.hasMemory = monitor.MemoryLimitOf(pid, s.p.Monitor.Cgroup)
		if c.hasMemory {
			c.kills, _ = c.memory.OOMKills()
		}
	}
	if mb := s.p.Load.Soak.MemoryLimitMB; mb > 0 {
		out = append(out, results.Limit{Figure: soak.MemoryFigure, Value: mb, Above: true, Of: "the plan's memory limit (load.soak.memory_limit_mb)"})
	}
	if c.hasMemory {
		// The cgroup's working set reaches its limit, not the RSS, whose
		// pages may be charged elsewhere (its program's file, for one).
		out = append(out, results.Limit{Figure: soak.CgroupFigure, Value: float64(c.memory.Bytes) / (1 << 20), Above: true, Of: "its cgroup's memory limit (" + c.memory.Dir + ")"})
	}
	if s.watch != nil && pid > 0 && s.p.Monitor.Cgroup == "" {
		if n, ok := monitor.OpenFileLimit(pid); ok {
			out = append(out, results.Limit{Figure: soak.FDsFigure, Value: float64(n), Above: true, Of: "its open-file limit (ulimit -n)"})
		}
	}
	return out
}

// second takes a counted second of the soak's step, closing the windows
// it ends first.
func (c *soakCollector) second(p load.Point, lat *hdrhistogram.Histogram) {
	if c.rec == nil || p.Warming {
		return
	}
	t := c.base.Add(time.Duration(p.T * float64(time.Second))).Sub(c.zero).Seconds()
	for c.rec.Due(t) {
		c.endWindow()
	}
	c.rec.Add(soak.Second{T: t, Kinds: p.Kinds, Latency: lat})
}

// endWindow closes the window in progress with the figures watched over
// it, and publishes the soak so far.
func (c *soakCollector) endWindow() {
	start, end := c.rec.Pending()
	target, ceiling := c.watched(start, end)
	if err := c.rec.End(target, ceiling); err != nil {
		c.note(err)
		return
	}
	s := c.s
	s.res.Soak = c.rec.Soak()
	s.judge()
	for _, o := range s.outs.list {
		if w, ok := o.(WindowOutput); ok {
			if err := w.Window(s.res); err != nil {
				c.note(err)
			}
		}
	}
}

// note tells the first error of a window's write, once.
func (c *soakCollector) note(err error) {
	if !c.noted {
		c.noted = true
		c.s.note(fmt.Sprintf("soak: %v (the soak goes on; the next windows try again)", err))
	}
}

// watched returns the target's and ceiling's figures over the window from
// start to end (seconds from the soak's start), and files the target's
// restarts in it.
func (c *soakCollector) watched(start, end float64) (*results.WindowTarget, *results.WindowCeiling) {
	ceiling := ownMemory()
	w := c.s.watch
	if w == nil || w.watcher == nil {
		return nil, ceiling
	}
	from, to := c.at(start), c.at(end)
	f := w.watcher.Window(from, to)
	if f.Samples == 0 {
		return nil, ceiling
	}
	t := &results.WindowTarget{Restarts: len(f.Restarts)}
	for _, at := range f.Restarts {
		if at.After(c.filed) {
			c.rec.Restart(at.Sub(c.zero).Seconds())
			c.filed = at
		}
	}
	if f.SourceSamples >= 2 {
		cpu := f.CPUPct
		t.CPUPct = &cpu
	}
	if f.SourceSamples > 0 {
		rss := f.RSSMB
		t.RSSMB = &rss
		if f.Threads > 0 {
			n := float64(f.Threads)
			t.Threads = &n
		}
		if f.FDs > 0 {
			n := float64(f.FDs)
			t.FDs = &n
		}
	}
	if c.hasMemory {
		if b, ok := c.memory.Used(); ok {
			mb := float64(b) / (1 << 20)
			t.CgroupMB = &mb
		}
	}
	if len(f.Metrics) > 0 {
		t.Metrics = map[string]float64{}
		for name, st := range f.Metrics {
			v := st.Mean
			if st.Counter {
				v = st.Rate
			}
			t.Metrics[name] = v
		}
	}
	return t, ceiling
}

// at is the time of t seconds from the soak's start.
func (c *soakCollector) at(t float64) time.Time {
	return c.zero.Add(time.Duration(t * float64(time.Second)))
}

// annotate ends the soak with its step: the window in progress, cut
// where the step ended, and why it ended early (a Ctrl-C, the target's
// death, with the OOM killer's part when its cgroup counted a kill).
func (c *soakCollector) annotate(ctx context.Context, step *results.Step, sp span) error {
	if c.rec == nil {
		return nil
	}
	end := sp.win.End.Sub(c.zero).Seconds()
	stopped := ""
	exit, at, dead := c.s.watch.dead()
	switch {
	case dead:
		how := exit.String()
		if c.hasMemory {
			if n, ok := c.memory.OOMKills(); ok && n > c.kills {
				oom := ", by the kernel's OOM killer (its cgroup " + c.memory.Dir + " counted the kill)"
				how += oom
				if step.Target != nil && step.Target.Died != "" {
					step.Target.Died += oom
				}
			}
		}
		c.rec.Died(at.Sub(c.zero).Seconds(), how)
		stopped = "the target died: " + how
		end = min(end, at.Sub(c.zero).Seconds())
	case step.Interrupted || ctx.Err() != nil:
		stopped = "interrupted"
	}
	start, _ := c.rec.Pending()
	target, ceiling := c.watched(start, end)
	if dead && target != nil {
		target.CgroupMB = nil // read after the death: the group emptied, not the target's
	}
	err := c.rec.Finish(end, stopped, target, ceiling)
	k, ferr := c.rec.Final()
	c.s.res.Soak, c.rec = k, nil
	return errors.Join(err, ferr)
}

// close, when the soak did not end (annotate ends it), reads its windows
// back into the result and removes their file: the result never holds a
// soak whose windows are in a file closed.
func (c *soakCollector) close() {
	if c.rec != nil {
		k, err := c.rec.Final()
		if err != nil {
			c.note(err)
		}
		c.s.res.Soak, c.rec = k, nil
	}
}

// ownMemory reads ceiling's own memory at a window's end, after a
// collection that hands what it frees back to the system: without it the
// reading is wherever the collector's cycle happens to be (a heap between
// its live size and twice that, and freed pages the runtime returns at
// its own pace), which moves by megabytes from window to window and hides
// a slow leak; with it RSS is what ceiling holds. Once a window (a second
// at least) this costs less than the collections the load makes anyway.
func ownMemory() *results.WindowCeiling {
	debug.FreeOSMemory()
	ceiling := &results.WindowCeiling{HeapMB: liveHeapMB(), RuntimeMB: runtimeMB(), Threads: selfThreads()}
	if rss, anon, ok := selfMemoryMB(); ok {
		ceiling.RSSMB, ceiling.AnonMB = &rss, &anon
	}
	return ceiling
}

// runtimeMB is the memory the Go runtime has from the system and holds
// for other than the heap's objects (stacks, metadata, its buffers), in
// MB: all its memory classes less the heap's objects, its unused slots,
// and its free and released pages.
func runtimeMB() float64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	var v [5]uint64
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		v[i] = s[i].Value.Uint64()
	}
	rest := int64(v[0]) - int64(v[1]+v[2]+v[3]+v[4])
	return float64(max(rest, 0)) / (1 << 20)
}

// liveHeapMB is ceiling's Go heap live after the last garbage collection,
// in MB: what it holds, without the garbage its next collection frees.
func liveHeapMB() float64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64()) / (1 << 20)
}
