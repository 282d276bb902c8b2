package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// SoakSchema names this version of a soak's part of result.json (Soak):
// its fields may be added to, never renamed or given another meaning.
const SoakSchema = "ceiling.soak/v1"

// The verdicts of a soak's figure (Trend.Verdict).
const (
	// Stable: the figure's line is flat within its confidence interval,
	// or moves less than its noise over the soak.
	Stable = "STABLE"
	// Drifting: the figure's line slopes beyond its confidence interval
	// and by more than its noise over the soak.
	Drifting = "DRIFTING"
	// Unknown: too few windows measured the figure to fit a line.
	Unknown = "UNKNOWN"
)

// The kinds of a soak's Episode.
const (
	// EpisodeErrors: seconds in which far more exchanges failed than usual.
	EpisodeErrors = "error_burst"
	// EpisodeSpike: seconds whose p99 stood far above the usual.
	EpisodeSpike = "latency_spike"
	// EpisodeRestart: the target's main process ended and another took
	// its place (monitor: a supervisor started it again).
	EpisodeRestart = "restart"
	// EpisodeDied: the command target ceiling started ended on its own
	// (a crash, the OOM killer): the soak ended there.
	EpisodeDied = "died"
)

// Soak is a soak's account: the load held for hours as one step, cut
// into windows whose figures are kept, a robust line through each
// figure, the projections of those that drift toward a known limit, and
// the episodes (bursts, spikes, restarts) found second by second. It is
// rewritten into result.json at the end of every window, so that a soak
// killed after hours keeps what it measured and says how far it got
// (HeldS).
type Soak struct {
	// Schema is SoakSchema.
	Schema string `json:"schema"`
	// ForS is how long the load was to be held, in seconds; HeldS how long
	// it was, to the end of the last window (less when it stopped early:
	// Stopped says why).
	ForS  float64 `json:"for_s"`
	HeldS float64 `json:"held_s"`
	// Stopped says why the soak ended before ForS ("interrupted", "the
	// target died: killed by SIGKILL"); empty while it runs and when it
	// ran its length.
	Stopped string `json:"stopped,omitempty"`
	// StartedAt is when the load's counted time began: the windows'
	// times count from it.
	StartedAt time.Time `json:"started_at"`
	// BaseWindowS is the window asked for, in seconds; WindowS the
	// windows' length now: BaseWindowS × 2^Folds, as neighbouring windows
	// are merged two by two whenever the soak holds MaxWindows of them.
	BaseWindowS float64 `json:"base_window_s"`
	WindowS     float64 `json:"window_s"`
	Folds       int     `json:"folds"`
	// HorizonS is how far from the start no drift may reach a known limit,
	// in seconds.
	HorizonS float64 `json:"horizon_s"`
	// Windows are the soak's windows, in time order; nil while a soak
	// under way has them in its file (InFile: read them with
	// WindowCount, LastWindow or Load).
	Windows []SoakWindow `json:"windows"`
	// Limits are the limits known that figures are projected against.
	Limits []Limit `json:"limits"`
	// Trends are each figure's line over the windows, with its verdict.
	Trends []Trend `json:"trends"`
	// Episodes are the bursts, spikes, restarts and the death found, in
	// time order: at most MaxEpisodes, and EpisodesLeftOut counts those
	// past it.
	Episodes        []Episode `json:"episodes"`
	EpisodesLeftOut int       `json:"episodes_left_out,omitempty"`
	// Recurring are the kinds of episode that came back at a regular
	// period (a cron, a GC, a log rotation).
	Recurring []Recurrence `json:"recurring,omitempty"`
	// SLOWindows counts the windows the SLO was checked in, and
	// SLOBroken lists those it broke in (at most MaxEpisodes; each window
	// says so too, slo_broken), with SLOBrokenCount counting all of them.
	SLOWindows     int        `json:"slo_windows"`
	SLOBroken      []SLOBreak `json:"slo_broken,omitempty"`
	SLOBrokenCount int        `json:"slo_broken_count,omitempty"`
	// Notes say what a reader must know to read the figures: ceiling's
	// own memory drifting, metrics series left out.
	Notes []string `json:"notes,omitempty"`

	// file, while the soak runs, holds its first fileN windows instead of
	// Windows (InFile); nil in a finished soak and in one read from
	// result.json.
	file  *WindowFile
	fileN int
}

// InFile makes k's windows the ones in f so far, read from the file when
// asked for (WindowCount, LastWindow, Load, and when k is encoded) rather
// than held in Windows: a soak under way. k must be read before the next
// window is added to f.
func (k *Soak) InFile(f *WindowFile) { k.Windows, k.file, k.fileN = nil, f, f.Len() }

// WindowCount counts k's windows, in Windows or in its file.
func (k *Soak) WindowCount() int {
	if k.file != nil {
		return k.fileN
	}
	return len(k.Windows)
}

// LastWindow returns k's last window; nil when it has none.
func (k *Soak) LastWindow() (*SoakWindow, error) {
	switch {
	case k.file != nil && k.fileN > 0:
		w, err := k.file.Window(k.fileN - 1)
		return &w, err
	case k.file == nil && len(k.Windows) > 0:
		return &k.Windows[len(k.Windows)-1], nil
	}
	return nil, nil
}

// Load reads the windows of k's file into Windows: k then needs the file
// no more. When one cannot be read, k keeps those before it and needs
// the file no more either.
func (k *Soak) Load() error {
	if k.file == nil {
		return nil
	}
	windows := make([]SoakWindow, 0, k.fileN)
	var err error
	for i := range k.fileN {
		var w SoakWindow
		if w, err = k.file.Window(i); err != nil {
			break
		}
		windows = append(windows, w)
	}
	k.Windows, k.file, k.fileN = windows, nil, 0
	return err
}

// MarshalJSON encodes k with its windows, those of its file too.
func (k Soak) MarshalJSON() ([]byte, error) {
	if err := k.Load(); err != nil {
		return nil, err
	}
	type plain Soak // its fields, without this method
	return json.Marshal(plain(k))
}

// MaxWindows is how many windows a soak keeps: past it, neighbours merge
// two by two (their histograms merged, never their percentiles averaged),
// so that a day's soak stays a file a browser opens: at most MaxWindows
// windows of 1 to 10 KB each (the histogram of a busy load whose response
// times spread over four orders of magnitude, and sixteen metric series,
// take 9.3 KB), under 5 MB in all.
const MaxWindows = 480

// MaxEpisodes is how many episodes (and windows that broke the SLO) a
// soak lists; past it they are counted.
const MaxEpisodes = 200

// SoakWindow is one window of a soak: what the load measured in it (its
// exchanges' counts and merged latency histogram) and the watched
// target's and ceiling's own figures over it. A figure nothing measured
// is absent.
type SoakWindow struct {
	// StartS and EndS bound it, in seconds from Soak.StartedAt.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Seconds counts the load's seconds merged into it.
	Seconds int `json:"seconds"`
	// Completed, OK, Failed and Limited count the exchanges that ended in
	// it; Errors the failed ones by class.
	Completed int64            `json:"completed"`
	OK        int64            `json:"ok"`
	Failed    int64            `json:"failed"`
	Limited   int64            `json:"limited"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	// Throughput is the responses (OK or limited) per second of the
	// window, as a step's; ErrorRate the share of the exchanges completed
	// that failed, in [0, 1].
	Throughput float64 `json:"throughput"`
	ErrorRate  float64 `json:"error_rate"`
	// TargetRate is the open model's rate per second; 0 in the closed
	// model.
	TargetRate float64 `json:"target_rate,omitempty"`
	// LatencyMS is the window's response times, from Histogram.
	LatencyMS metrics.Latency `json:"latency_ms"`
	// Histogram is the window's response times, encoded (as a step's).
	Histogram string `json:"histogram,omitempty"`
	// Target is the watched target over the window; nil when nothing is
	// watched.
	Target *WindowTarget `json:"target,omitempty"`
	// Ceiling is ceiling's own memory at the window's end.
	Ceiling *WindowCeiling `json:"ceiling,omitempty"`
	// SLOBroken lists the SLO's terms that failed in the window.
	SLOBroken []string `json:"slo_broken,omitempty"`
}

// WindowTarget is the watched target over a window. Its figures are
// absent when not measured (a cgroup has no threads or descriptors, a
// metrics endpoint alone no CPU or memory).
type WindowTarget struct {
	// CPUPct is its CPU use over the window, in percent of one core.
	CPUPct *float64 `json:"cpu_pct,omitempty"`
	// RSSMB is its resident memory, FDs its open descriptors and Threads
	// its threads, at the window's last reading (a watched cgroup's RSSMB
	// is its charge).
	RSSMB   *float64 `json:"rss_mb,omitempty"`
	FDs     *float64 `json:"fds,omitempty"`
	Threads *float64 `json:"threads,omitempty"`
	// CgroupMB is the working set of the cgroup whose memory limit
	// holds it (its charge less the file pages the kernel would drop
	// first), at the window's end: what reaches that limit; absent when
	// it has none.
	CgroupMB *float64 `json:"cgroup_mb,omitempty"`
	// Metrics are its Prometheus series kept for the soak: a gauge's mean
	// over the window, a counter's rate per second.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Restarts counts its restarts in the window (Episodes say when).
	Restarts int `json:"restarts,omitempty"`
}

// WindowCeiling is ceiling's own memory at a window's end: its resident
// memory and the part of it no file backs (Linux only), and its Go heap
// live after the last collection.
type WindowCeiling struct {
	RSSMB *float64 `json:"rss_mb,omitempty"`
	// AnonMB is the resident memory no file backs (resident less shared,
	// from /proc/self/statm): what a leak grows. RSS also counts the
	// pages of ceiling's own binary the kernel has mapped in, which it
	// maps in as code first runs and drops when it needs the room.
	AnonMB *float64 `json:"anon_mb,omitempty"`
	HeapMB float64  `json:"heap_mb"`
	// RuntimeMB is what the Go runtime has mapped beside the heap's
	// objects: goroutine stacks, its own metadata and buffers (its memory
	// classes less the heap's objects, unused slots, free and released
	// pages; mapped, not all of it resident); Threads the process's
	// threads (Linux). The private memory can grow with them where the
	// heap does not.
	RuntimeMB float64 `json:"runtime_mb,omitempty"`
	Threads   int     `json:"threads,omitempty"`
}

// Limit is a limit a figure may run into.
type Limit struct {
	// Figure is the figure it limits (Trend.Figure).
	Figure string `json:"figure"`
	// Value is the limit, in the figure's unit; Above says the figure
	// fails by rising to it (memory, descriptors, a latency), not by
	// falling to it (a throughput).
	Value float64 `json:"value"`
	Above bool    `json:"above"`
	// Of says what sets it: "its cgroup's memory limit
	// (/sys/fs/cgroup/memory/app)", "its open-file limit (ulimit -n)",
	// "the SLO p99<200ms".
	Of string `json:"of"`
}

// Trend is one figure's robust line over a soak's windows (the
// Theil–Sen slope with its 95 % confidence interval), and its verdict.
type Trend struct {
	// Figure names it: "target.rss_mb", "p99_ms", "ceiling.heap_mb",
	// "target.metric:queue_depth" (docs/soak.md lists them); Name says it
	// in words, Unit is its unit ("MB", "ms", "%", "/s", "" for a count).
	Figure string `json:"figure"`
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	// Windows counts the windows that measured it.
	Windows int `json:"windows"`
	// Median is its median over the windows; Start and End the line's
	// values at the first and the last of them.
	Median float64 `json:"median"`
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	// SlopePerH is the line's slope per hour; LowPerH and HighPerH bound
	// its 95 % confidence interval, absent when the windows are too few
	// to bound it.
	SlopePerH float64  `json:"slope_per_h"`
	LowPerH   *float64 `json:"low_per_h,omitempty"`
	HighPerH  *float64 `json:"high_per_h,omitempty"`
	// R2 is the share of the windows' variance the line accounts for;
	// Sigma the windows' scatter about it (a robust standard deviation);
	// Rho the lag-1 autocorrelation of that scatter, by which the
	// interval was widened.
	R2    float64 `json:"r2"`
	Sigma float64 `json:"sigma"`
	Rho   float64 `json:"rho"`
	// Verdict is Stable, Drifting or Unknown; Why says it with the rate.
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
	// Projection is when the line reaches the figure's limit, for a
	// DRIFTING figure toward a known limit; nil otherwise.
	Projection *Projection `json:"projection,omitempty"`
}

// Projection is when a drifting figure's line reaches its limit.
type Projection struct {
	// Limit is the limit, with what sets it.
	Limit Limit `json:"limit"`
	// AtS is when the line reaches it, in seconds from the soak's start;
	// InS is that time less the end of the last window (0: reached).
	AtS float64 `json:"at_s"`
	InS float64 `json:"in_s"`
	// EarliestS and LatestS bound AtS by the slope's confidence interval;
	// LatestS is absent when the interval holds a slope that never
	// reaches the limit.
	EarliestS *float64 `json:"earliest_s,omitempty"`
	LatestS   *float64 `json:"latest_s,omitempty"`
	// Reached says the line had reached the limit by the last window.
	Reached bool `json:"reached,omitempty"`
	// WithinHorizon says AtS is within the soak's horizon: the soak fails
	// (ReasonSoakDrift).
	WithinHorizon bool `json:"within_horizon"`
}

// Episode is something that happened at a time during a soak, listed
// with its times rather than averaged into a window.
type Episode struct {
	// Kind is EpisodeErrors, EpisodeSpike, EpisodeRestart or EpisodeDied.
	Kind string `json:"kind"`
	// StartS and EndS bound it, in seconds from the soak's start (equal
	// for an instant: a restart, a death).
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Peak is its worst second's error share (%, a burst) or p99 (ms, a
	// spike), and Baseline the usual one around it.
	Peak     float64 `json:"peak,omitempty"`
	Baseline float64 `json:"baseline,omitempty"`
	// Failed counts a burst's failed exchanges.
	Failed int64 `json:"failed,omitempty"`
	// Text says it in a sentence.
	Text string `json:"text"`
}

// Recurrence is a kind of episode that came back at a regular period.
type Recurrence struct {
	Kind string `json:"kind"`
	// Count counts its episodes; PeriodS is the median time between the
	// starts of one and the next, JitterS how far those times stray from
	// it (their median absolute deviation).
	Count   int     `json:"count"`
	PeriodS float64 `json:"period_s"`
	JitterS float64 `json:"jitter_s"`
}

// SLOBreak is a window that broke the SLO.
type SLOBreak struct {
	StartS float64  `json:"start_s"`
	EndS   float64  `json:"end_s"`
	Terms  []string `json:"terms"`
}

// Absorb merges next, the window that follows w, into w: their counts
// summed, their histograms merged and its percentiles read again (never
// averaged), the target's CPU and metrics weighted by time, its memory,
// descriptors and threads, and ceiling's memory, at next's end.
func (w *SoakWindow) Absorb(next *SoakWindow) error {
	d1, d2 := w.EndS-w.StartS, next.EndS-next.StartS
	if w.Histogram != "" || next.Histogram != "" {
		h := metrics.NewHistogram()
		for _, enc := range []string{w.Histogram, next.Histogram} {
			if enc == "" {
				continue
			}
			part, err := metrics.Decode(enc)
			if err != nil {
				return fmt.Errorf("merge windows: %w", err)
			}
			h.Merge(part)
		}
		enc, err := metrics.Encode(h)
		if err != nil {
			return fmt.Errorf("merge windows: %w", err)
		}
		w.Histogram, w.LatencyMS = enc, metrics.Summarize(h)
	}
	w.EndS = next.EndS
	w.Seconds += next.Seconds
	w.Completed += next.Completed
	w.OK += next.OK
	w.Failed += next.Failed
	w.Limited += next.Limited
	for k, v := range next.Errors {
		if w.Errors == nil {
			w.Errors = map[string]int64{}
		}
		w.Errors[k] += v
	}
	w.Throughput, w.ErrorRate = 0, 0
	if d := w.EndS - w.StartS; d > 0 {
		w.Throughput = float64(w.OK+w.Limited) / d
	}
	if w.Completed > 0 {
		w.ErrorRate = float64(w.Failed) / float64(w.Completed)
	}
	w.TargetRate = weighted(w.TargetRate, next.TargetRate, d1, d2)
	w.Target = w.Target.absorb(next.Target, d1, d2)
	if next.Ceiling != nil {
		w.Ceiling = next.Ceiling
	}
	for _, t := range next.SLOBroken {
		if !slices.Contains(w.SLOBroken, t) {
			w.SLOBroken = append(w.SLOBroken, t)
		}
	}
	return nil
}

// absorb merges the target's figures of the window that follows; d1 and
// d2 are the two windows' lengths.
func (t *WindowTarget) absorb(next *WindowTarget, d1, d2 float64) *WindowTarget {
	switch {
	case next == nil:
		return t
	case t == nil:
		return next
	}
	out := *next
	out.Restarts += t.Restarts
	if t.CPUPct != nil && next.CPUPct != nil {
		cpu := weighted(*t.CPUPct, *next.CPUPct, d1, d2)
		out.CPUPct = &cpu
	}
	if len(t.Metrics) > 0 {
		out.Metrics = maps.Clone(t.Metrics)
		for k, v := range next.Metrics {
			if old, ok := t.Metrics[k]; ok {
				v = weighted(old, v, d1, d2)
			}
			out.Metrics[k] = v
		}
	}
	return &out
}

// weighted is the mean of a over d1 and b over d2.
func weighted(a, b, d1, d2 float64) float64 {
	if d1+d2 <= 0 {
		return b
	}
	return (a*d1 + b*d2) / (d1 + d2)
}

// reasons adds what fails the soak: each figure DRIFTING toward a limit
// its line reaches within the horizon, and the windows that broke the
// SLO.
func (k *Soak) reasons(add func(kind string, step int, format string, args ...any)) {
	for _, t := range k.Trends {
		p := t.Projection
		if t.Verdict != Drifting || p == nil || !p.WithinHorizon {
			continue
		}
		when := "has reached it"
		switch {
		case p.Reached:
		case p.InS < 1:
			when = "reaches it now"
		default:
			when = "reaches it in about " + Hours(p.InS)
		}
		add(ReasonSoakDrift, 0, "%s is DRIFTING (%s) toward %s, %g%s: it %s, within the soak's horizon of %s",
			t.Name, t.Why, p.Limit.Of, p.Limit.Value, unitSuffix(t.Unit), when, Hours(k.HorizonS))
	}
	if k.SLOBrokenCount > 0 {
		first := ""
		if len(k.SLOBroken) > 0 {
			b := k.SLOBroken[0]
			first = fmt.Sprintf(" (first at %s: %s)", Clock(b.StartS), strings.Join(b.Terms, ", "))
		}
		add(ReasonSoakSLO, 0, "the SLO broke in %d of %d windows%s", k.SLOBrokenCount, k.SLOWindows, first)
	}
}

// unitSuffix writes a unit after a figure: " MB", "%", "" for a count.
func unitSuffix(unit string) string {
	switch unit {
	case "", "%", "/s":
		return unit
	}
	return " " + unit
}

// Hours says a length of time in seconds the way a soak speaks of it:
// "45 s", "12 min", "5.2 h", "3.1 days".
func Hours(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 2*3600:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 72*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.1f days", s/86400)
}

// Clock writes seconds from a soak's start as h:mm:ss.
func Clock(s float64) string {
	t := int64(s + 0.5)
	return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
}
