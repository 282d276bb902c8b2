package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Config says what a soak holds and how it is judged.
type Config struct {
	// For is how long the load is to be held; Window the length of the
	// windows it is cut into (at least a second); Horizon how far from
	// the start no drift may reach a known limit.
	For, Window, Horizon time.Duration
	// Terms are the SLO's terms, checked in every window (those of the
	// whole mix's latency, errors, limited, rate and throughput; a term of
	// one scenario, of deliveries or of recoveries is judged over the run
	// only) and projected against where a trend reads them.
	Terms []slo.Term
	// TargetRate is the open model's rate per second; 0 in the closed
	// model.
	TargetRate float64
	// Limits are the limits known beside the SLO: the target's memory
	// limit (target.rss_mb), its open-file limit (target.fds).
	Limits []results.Limit
}

// Second is one counted second of the load.
type Second struct {
	// T is its end, in seconds from the soak's start.
	T float64
	// Kinds counts its exchanges by how they ended.
	Kinds metrics.Counts
	// Latency holds its response times; it is read during the call only.
	Latency *hdrhistogram.Histogram
}

// Recorder keeps a soak as it goes: it takes the load's seconds (Add)
// and, as each window ends (End), what was watched over it, and gives
// the soak so far (Soak). See the package comment.
type Recorder struct {
	cfg     Config
	started time.Time
	limits  []results.Limit

	// file holds the windows kept, on disk (made with the first); table
	// what the trends read of them.
	file       *results.WindowFile
	table      table
	maxWindows int // results.MaxWindows; fewer in tests
	folds      int
	width      float64 // the windows' length now, in seconds

	// The window in progress: from start to end (seconds from the
	// soak's start), its counts and its merged histogram.
	start, end float64
	cur        results.SoakWindow
	kinds      metrics.Counts
	hist       *hdrhistogram.Histogram

	episodes   episodes
	slo        []slo.Term // the terms a window is checked against
	sloWindows int
	sloBroken  []results.SLOBreak
	sloCount   int
	held       float64
	stopped    string
	metrics    metricSet
	trends     []results.Trend
}

// New returns the Recorder of a soak whose counted time begins at
// started.
func New(cfg Config, started time.Time) *Recorder {
	w := max(cfg.Window, time.Second).Seconds()
	r := &Recorder{cfg: cfg, started: started, width: w, end: w, hist: metrics.NewHistogram(), maxWindows: results.MaxWindows}
	r.table = newTable(r.maxWindows)
	r.limits = append(slices.Clone(cfg.Limits), sloLimits(cfg.Terms)...)
	for _, t := range cfg.Terms {
		if windowTerm(t) {
			r.slo = append(r.slo, t)
		}
	}
	return r
}

// Due reports whether the second ending at t belongs after the window in
// progress (its middle is past the window's end): End that window first.
func (r *Recorder) Due(t float64) bool { return t-0.5 >= r.end }

// Pending returns the window in progress: its start and end, in seconds
// from the soak's start.
func (r *Recorder) Pending() (start, end float64) { return r.start, r.end }

// Add adds a counted second to the window in progress, and looks in it
// for a burst of errors or a spike of latency.
func (r *Recorder) Add(s Second) {
	for k := range s.Kinds {
		r.kinds[k] += s.Kinds[k]
	}
	if s.Latency != nil {
		r.hist.Merge(s.Latency)
	}
	r.cur.Seconds++
	r.episodes.second(s)
}

// Restart notes that the target restarted at t (seconds from the start).
func (r *Recorder) Restart(t float64) { r.episodes.restart(t) }

// Died notes that the target died at t, how ("killed by SIGKILL", with
// the OOM killer's part when known).
func (r *Recorder) Died(t float64, how string) { r.episodes.died(t, how) }

// End closes the window in progress with what was watched over it
// (target and ceiling, each nil when not measured), checks the SLO in it,
// merges neighbours when the soak holds results.MaxWindows windows, fits
// the trends again, and begins the next window.
func (r *Recorder) End(target *results.WindowTarget, ceiling *results.WindowCeiling) error {
	if err := r.close(r.end, target, ceiling); err != nil {
		return err
	}
	r.start, r.end = r.end, r.end+r.width
	return nil
}

// Finish closes the soak at t (seconds from its start): the window in
// progress ends there, kept when it holds a second of load, and stopped,
// when not empty, says why the soak ended before its length.
func (r *Recorder) Finish(t float64, stopped string, target *results.WindowTarget, ceiling *results.WindowCeiling) error {
	r.stopped = stopped
	r.episodes.finish()
	if r.cur.Seconds == 0 || t <= r.start {
		r.analyse()
		return nil
	}
	return r.close(min(t, r.end), target, ceiling)
}

// close ends the window in progress at end.
func (r *Recorder) close(end float64, target *results.WindowTarget, ceiling *results.WindowCeiling) error {
	w := r.cur
	w.StartS, w.EndS, w.TargetRate = r.start, end, r.cfg.TargetRate
	w.Completed, w.OK, w.Failed, w.Limited = r.kinds.Completed(), r.kinds[transport.OK], r.kinds.Failed(), r.kinds[transport.Limited]
	for k := transport.Kind(0); k < transport.NumKinds; k++ {
		if k.Failed() && r.kinds[k] > 0 {
			if w.Errors == nil {
				w.Errors = map[string]int64{}
			}
			w.Errors[k.String()] = r.kinds[k]
		}
	}
	if d := end - r.start; d > 0 {
		w.Throughput = float64(w.OK+w.Limited) / d
	}
	if w.Completed > 0 {
		w.ErrorRate = float64(w.Failed) / float64(w.Completed)
	}
	if r.hist.TotalCount() > 0 {
		enc, err := metrics.Encode(r.hist)
		if err != nil {
			return fmt.Errorf("soak window: %w", err)
		}
		w.Histogram, w.LatencyMS = enc, metrics.Summarize(r.hist)
	}
	if target != nil {
		target.Metrics = r.metrics.keep(target.Metrics)
	}
	w.Target, w.Ceiling = target, ceiling
	r.cur, r.kinds = results.SoakWindow{}, metrics.Counts{}
	r.hist.Reset()
	if w.Seconds == 0 && target == nil {
		return nil // nothing measured: no window
	}
	r.checkSLO(&w)
	if r.file == nil {
		f, err := results.CreateWindowFile(r.maxWindows)
		if err != nil {
			return err
		}
		r.file = f
	}
	if err := r.file.Append(&w); err != nil {
		return err
	}
	r.table.add(&w)
	r.held = end
	if r.file.Len() >= r.maxWindows {
		if err := r.fold(); err != nil {
			return err
		}
	}
	r.analyse()
	return nil
}

// fold merges the windows two by two into a new file, and doubles the
// windows' length.
func (r *Recorder) fold() error {
	old := r.file
	f, err := results.CreateWindowFile(r.maxWindows)
	if err != nil {
		return err
	}
	r.table.reset()
	for i := 0; i < old.Len() && err == nil; i += 2 {
		var w, next results.SoakWindow
		w, err = old.Window(i)
		if err == nil && i+1 < old.Len() {
			next, err = old.Window(i + 1)
			if err == nil {
				err = w.Absorb(&next)
			}
		}
		if err == nil {
			err = f.Append(&w)
		}
		r.table.add(&w)
	}
	if err != nil {
		// The windows stay as they were, unmerged: the table too.
		f.Close()
		r.table.reset()
		for i := range old.Len() {
			w, rerr := old.Window(i)
			if rerr != nil {
				break
			}
			r.table.add(&w)
		}
		return err
	}
	r.file = f
	old.Close()
	r.folds++
	r.width *= 2
	return nil
}

// checkSLO checks the SLO's window terms in w, and notes a break.
func (r *Recorder) checkSLO(w *results.SoakWindow) {
	if len(r.slo) == 0 || w.Completed == 0 {
		return
	}
	r.sloWindows++
	d := w.EndS - w.StartS
	f := slo.Figures{Latency: w.LatencyMS, Completed: w.Completed, Failed: w.Failed, Limited: w.Limited,
		Target: w.TargetRate, Throughput: w.Throughput}
	if d > 0 {
		f.Achieved = float64(w.Completed) / d
	}
	for _, t := range r.slo {
		if _, ok := t.Eval(f); !ok {
			w.SLOBroken = append(w.SLOBroken, t.Text)
		}
	}
	if len(w.SLOBroken) == 0 {
		return
	}
	r.sloCount++
	if len(r.sloBroken) < results.MaxEpisodes {
		r.sloBroken = append(r.sloBroken, results.SLOBreak{StartS: w.StartS, EndS: w.EndS, Terms: w.SLOBroken})
	}
}

// windowTerm reports whether t is checked in each window: a term of the
// whole mix on what a window measures.
func windowTerm(t slo.Term) bool {
	if t.Scenario != "" {
		return false
	}
	switch t.Metric {
	case "p50", "p90", "p95", "p99", "p999", "max", "mean", "errors", "limited", "rate", "throughput":
		return true
	}
	return false
}

// Soak returns the soak so far, as result.json holds it. It shares
// nothing the Recorder changes later.
func (r *Recorder) Soak() *results.Soak {
	k := &results.Soak{
		Schema: results.SoakSchema, ForS: r.cfg.For.Seconds(), HeldS: r.held, Stopped: r.stopped, StartedAt: r.started,
		BaseWindowS: max(r.cfg.Window, time.Second).Seconds(), WindowS: r.width, Folds: r.folds, HorizonS: r.cfg.Horizon.Seconds(),
		Windows: []results.SoakWindow{}, Limits: slices.Clone(r.limits), Trends: slices.Clone(r.trends),
		SLOWindows: r.sloWindows, SLOBroken: slices.Clone(r.sloBroken), SLOBrokenCount: r.sloCount,
	}
	if r.file != nil {
		k.InFile(r.file)
	}
	if k.Limits == nil {
		k.Limits = []results.Limit{}
	}
	if k.Trends == nil {
		k.Trends = []results.Trend{}
	}
	k.Episodes, k.EpisodesLeftOut, k.Recurring = r.episodes.all()
	k.Notes = r.notes()
	return k
}

// Final returns the soak as Soak does, its windows read back into
// memory, and removes their file (Close): the soak's last account, after
// Finish. A window that could not be read back is left out, with the
// error.
func (r *Recorder) Final() (*results.Soak, error) {
	k := r.Soak()
	err := k.Load()
	r.Close()
	return k, err
}

// Close removes the file of the windows kept; the Recorder then holds
// none. A Recorder must be closed (Final does it).
func (r *Recorder) Close() {
	if r.file != nil {
		r.file.Close()
		r.file = nil
	}
}

// notes are what a reader must know beside the figures.
func (r *Recorder) notes() []string {
	var out, own []string
	for _, t := range r.trends {
		if (t.Figure == figCeilingRSS || t.Figure == figCeilingAnon || t.Figure == figCeilingHeap) && t.Verdict == results.Drifting {
			own = append(own, t.Name+" "+t.Why)
		}
	}
	if len(own) > 0 {
		out = append(out, fmt.Sprintf("ceiling's own memory drifted (%s): the later windows may measure ceiling as much as the target", strings.Join(own, "; ")))
	}
	if n := r.metrics.dropped; n > 0 {
		out = append(out, fmt.Sprintf("%d metric series past the first %d were left out of the soak's windows", n, MaxMetricSeries))
	}
	return out
}

// MaxMetricSeries is how many of the target's metric series a soak keeps
// in its windows and fits: the first ones seen, by name.
const MaxMetricSeries = 16

// metricSet is the metric series a soak keeps.
type metricSet struct {
	kept    []string
	dropped int // the series left out
	seen    map[string]bool
}

// keep returns the values of the series kept (the first MaxMetricSeries
// seen, by name, then those only), nil for none.
func (m *metricSet) keep(vals map[string]float64) map[string]float64 {
	if len(vals) == 0 {
		return nil
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if m.seen[k] {
			continue
		}
		if m.seen == nil {
			m.seen = map[string]bool{}
		}
		m.seen[k] = true
		if len(m.kept) >= MaxMetricSeries {
			m.dropped++
			continue
		}
		m.kept = append(m.kept, k)
	}
	out := map[string]float64{}
	for _, k := range m.kept {
		if v, ok := vals[k]; ok {
			out[k] = v
		}
	}
	return out
}
