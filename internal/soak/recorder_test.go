package soak

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

var t0 = time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)

// second is what the load measured in one made-up second.
type second struct {
	ok, failed int64
	ms         float64 // each answer's response time
}

// sim drives a Recorder over made-up seconds, as package run does: each
// second ending at t is added after the windows it ends are closed with
// what watched says of them.
type sim struct {
	r       *Recorder
	load    func(t float64) second
	watched func(start, end float64) (*results.WindowTarget, *results.WindowCeiling)
	fed     int64
}

func (s *sim) run(t *testing.T, from, to int) {
	t.Helper()
	for sec := from + 1; sec <= to; sec++ {
		at := float64(sec)
		if s.r.Due(at) {
			var tg *results.WindowTarget
			var c *results.WindowCeiling
			if s.watched != nil {
				tg, c = s.watched(s.r.Pending())
			}
			if err := s.r.End(tg, c); err != nil {
				t.Fatal(err)
			}
		}
		x := s.load(at)
		h := metrics.NewHistogram()
		var k metrics.Counts
		k[transport.OK], k[transport.HTTP5xx] = x.ok, x.failed
		for range x.ok + x.failed {
			if err := h.RecordValue(int64(x.ms * 1000)); err != nil {
				t.Fatal(err)
			}
		}
		s.fed += x.ok + x.failed
		s.r.Add(Second{T: at, Kinds: k, Latency: h})
	}
}

// newRecorder is New, closed when the test ends.
func newRecorder(t *testing.T, cfg Config) *Recorder {
	r := New(cfg, t0)
	t.Cleanup(r.Close)
	return r
}

// soakOf is the soak so far, its windows read from their file.
func soakOf(t *testing.T, r *Recorder) *results.Soak {
	t.Helper()
	k := r.Soak()
	if err := k.Load(); err != nil {
		t.Fatal(err)
	}
	return k
}

func ptr(v float64) *float64 { return &v }

func steady(float64) second { return second{ok: 50, ms: 10} }

func trendOf(t *testing.T, k *results.Soak, fig string) results.Trend {
	t.Helper()
	for _, tr := range k.Trends {
		if tr.Figure == fig {
			return tr
		}
	}
	t.Fatalf("no trend of %s in %+v", fig, k.Trends)
	return results.Trend{}
}

// Windows follow one another without a gap; at the bound, neighbours
// merge two by two and the windows' length doubles; every exchange fed is
// in exactly one window.
func TestWindowsFold(t *testing.T) {
	r := newRecorder(t, Config{For: 1000 * time.Second, Window: 10 * time.Second, Horizon: time.Hour})
	r.maxWindows = 8
	s := &sim{r: r, load: steady}
	s.run(t, 0, 1003)
	if err := r.Finish(1003, "", nil, nil); err != nil {
		t.Fatal(err)
	}
	k := soakOf(t, r)
	if len(k.Windows) > 8 || k.Folds == 0 || k.WindowS != 10*math.Pow(2, float64(k.Folds)) || k.BaseWindowS != 10 {
		t.Fatalf("after 1003 s of 10 s windows, at most 8 kept: %d windows, %d folds, %g s each", len(k.Windows), k.Folds, k.WindowS)
	}
	var n int64
	for i, w := range k.Windows {
		n += w.Completed
		if i > 0 && w.StartS != k.Windows[i-1].EndS {
			t.Errorf("window %d starts at %g, the one before ends at %g", i, w.StartS, k.Windows[i-1].EndS)
		}
		if i < len(k.Windows)-1 && (w.EndS-w.StartS != k.WindowS || w.Seconds != int(k.WindowS)) {
			t.Errorf("window %d: %g–%g, %d seconds; want %g s", i, w.StartS, w.EndS, w.Seconds, k.WindowS)
		}
		if w.LatencyMS.P99 < 9.9 || w.LatencyMS.P99 > 10.1 || w.Throughput != 50 {
			t.Errorf("window %d: p99 %g, throughput %g; want 10 ms, 50/s", i, w.LatencyMS.P99, w.Throughput)
		}
	}
	if n != s.fed || k.Windows[0].StartS != 0 || k.HeldS != 1003 {
		t.Errorf("windows hold %d exchanges of %d fed, from %g to %g", n, s.fed, k.Windows[0].StartS, k.HeldS)
	}
}

// A target that leaks 1 MB a second toward a 512 MiB limit: its memory is
// DRIFTING at 3600 MB/h, the interval holds it, and its line reaches the
// limit when the leak does, within the horizon: the soak fails. Its CPU,
// flat, is STABLE; so are the load's figures.
func TestLeakProjected(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	limit := results.Limit{Figure: MemoryFigure, Value: 512, Above: true, Of: "the cgroup's memory limit"}
	r := newRecorder(t, Config{For: 10 * time.Minute, Window: 5 * time.Second, Horizon: 30 * time.Minute, Limits: []results.Limit{limit}})
	s := &sim{r: r, load: steady, watched: func(_, end float64) (*results.WindowTarget, *results.WindowCeiling) {
		return &results.WindowTarget{RSSMB: ptr(100 + end + rnd.NormFloat64()*0.3), CPUPct: ptr(20 + rnd.NormFloat64())},
			&results.WindowCeiling{RSSMB: ptr(40 + rnd.NormFloat64()*0.2), AnonMB: ptr(30 + rnd.NormFloat64()*0.2), HeapMB: 8}
	}}
	s.run(t, 0, 200)
	k := soakOf(t, r)
	if len(k.Notes) != 0 {
		t.Errorf("notes = %q, want none: ceiling's own memory was flat", k.Notes)
	}
	rss := trendOf(t, k, MemoryFigure)
	if rss.Verdict != results.Drifting || math.Abs(rss.SlopePerH-3600) > 36 || *rss.LowPerH > 3600 || *rss.HighPerH < 3600 {
		t.Errorf("RSS trend = %+v, want DRIFTING at 3600 MB/h within its interval", rss)
	}
	p := rss.Projection
	if p == nil || math.Abs(p.AtS-412)/412 > 0.02 || !p.WithinHorizon || p.EarliestS == nil || p.LatestS == nil || *p.EarliestS > p.AtS || *p.LatestS < p.AtS {
		t.Fatalf("RSS projection = %+v, want the limit reached at about 412 s (100 MB + 1 MB/s), within the horizon", p)
	}
	for _, fig := range []string{figCPU, figP99, figThroughput, figErrors, figCeilingRSS, figCeilingAnon, figCeilingHeap} {
		if tr := trendOf(t, k, fig); tr.Verdict != results.Stable {
			t.Errorf("%s trend = %+v, want STABLE", fig, tr)
		}
	}
	res := &results.Result{Schema: results.Schema, Steps: []results.Step{}, Soak: k}
	res.Judge(results.DefaultRules)
	if res.Passed || len(res.Outcome.Reasons) != 1 || res.Outcome.Reasons[0].Kind != results.ReasonSoakDrift {
		t.Errorf("outcome = %+v, want failed by the drift alone", res.Outcome)
	}
	t.Logf("%s: %s; %s", rss.Name, rss.Why, res.Outcome.Reasons[0].Text)
}

// ceiling's own private memory growing by 0.1 MB a window, its RSS with
// it, is DRIFTING, and the soak says that its later windows may measure
// ceiling as much as the target (TestLeakProjected is the quiet twin: flat,
// no note).
func TestCeilingLeakIsNoted(t *testing.T) {
	rnd := rand.New(rand.NewPCG(2, 2))
	r := newRecorder(t, Config{For: 10 * time.Minute, Window: 5 * time.Second})
	s := &sim{r: r, load: steady, watched: func(_, end float64) (*results.WindowTarget, *results.WindowCeiling) {
		return nil, &results.WindowCeiling{RSSMB: ptr(40 + end/50 + rnd.NormFloat64()*0.2), AnonMB: ptr(30 + end/50 + rnd.NormFloat64()*0.2), HeapMB: 8}
	}}
	s.run(t, 0, 120)
	k := soakOf(t, r)
	anon := trendOf(t, k, figCeilingAnon)
	if anon.Verdict != results.Drifting || math.Abs(anon.SlopePerH-72) > 7 {
		t.Errorf("private memory trend = %+v, want DRIFTING at 72 MB/h", anon)
	}
	if len(k.Notes) != 1 || !strings.Contains(k.Notes[0], "ceiling's own memory drifted") || !strings.Contains(k.Notes[0], "ceiling's private memory") {
		t.Errorf("notes = %q, want one saying ceiling's own memory drifted, its private memory named", k.Notes)
	}
}

// ceiling's own memory settles over its first windows, as its result
// takes its full shape. Its private memory in a 30-minute soak of the
// demo target in 1-minute windows (bench/soak.sh, 2026-12-08), which
// rose 0.7 MB over the first four windows and then wandered about a
// flat line, is STABLE as ceiling's own, fitted from the reading after
// its fifth window, and no note says ceiling drifted; the same readings
// as the target's memory, fitted from the first window, are DRIFTING
// (the leak above is DRIFTING whatever its first windows).
func TestCeilingSettlingIsNotADrift(t *testing.T) {
	measured := []float64{8.719, 9.152, 9.289, 9.402, 9.418, 9.328, 9.875, 9.562, 9.508, 9.359, 9.812, 9.516, 9.484, 10.129, 9.387,
		9.672, 9.742, 10.168, 9.766, 9.551, 9.637, 10.043, 10.113, 9.453, 9.484, 9.699, 9.516, 9.551, 10.137, 7.758}
	r := newRecorder(t, Config{For: 30 * time.Minute, Window: time.Minute})
	n := 0
	s := &sim{r: r, load: steady, watched: func(_, _ float64) (*results.WindowTarget, *results.WindowCeiling) {
		v := measured[n]
		n++
		return &results.WindowTarget{RSSMB: ptr(v)}, &results.WindowCeiling{AnonMB: ptr(v), HeapMB: 4.9}
	}}
	s.run(t, 0, 30*60)
	tg, c := s.watched(r.Pending())
	if err := r.Finish(30*60, "", tg, c); err != nil {
		t.Fatal(err)
	}
	k := soakOf(t, r)
	own, target := trendOf(t, k, figCeilingAnon), trendOf(t, k, figRSS)
	if own.Verdict != results.Stable || own.Windows != 30-OwnSettling || len(k.Notes) != 0 {
		t.Errorf("ceiling's private memory that settled in its first windows: %+v, notes %q; want STABLE over %d windows, no note", own, k.Notes, 30-OwnSettling)
	}
	if target.Verdict != results.Drifting || target.Windows != 30 {
		t.Errorf("the same readings as the target's memory: %+v; want DRIFTING over 30 windows", target)
	}
}

// A p99 that grows by half a millisecond a second is DRIFTING at
// 1800 ms/h, and is a trend, not a string of spikes; crossing the SLO's
// bound, it breaks the SLO in the later windows.
func TestP99Grows(t *testing.T) {
	terms, err := slo.Parse("p99<100ms")
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(t, Config{For: 10 * time.Minute, Window: 10 * time.Second, Horizon: 30 * time.Minute, Terms: terms})
	s := &sim{r: r, load: func(t float64) second { return second{ok: 40, ms: 5 + 0.5*t} }}
	s.run(t, 0, 300)
	k := soakOf(t, r)
	p99 := trendOf(t, k, figP99)
	if p99.Verdict != results.Drifting || math.Abs(p99.SlopePerH-1800)/1800 > 0.05 {
		t.Errorf("p99 trend = %+v, want DRIFTING at 1800 ms/h", p99)
	}
	if p := p99.Projection; p == nil || !p.Reached || p.Limit.Of != "the SLO p99<100ms" {
		t.Errorf("p99 projection = %+v, want the SLO's bound, reached", p99.Projection)
	}
	for _, e := range k.Episodes {
		t.Errorf("episode %+v: a steady climb is no spike", e)
	}
	// p99 reaches 100 ms in the second ending at 190 s: the windows from
	// 180 s on break the SLO.
	if k.SLOBrokenCount != 11 || k.SLOWindows != 29 || k.SLOBroken[0].StartS != 180 {
		t.Errorf("SLO broken in %d of %d windows (%+v), want 11 of 29 from 180 s", k.SLOBrokenCount, k.SLOWindows, k.SLOBroken)
	}
}

// A flat target that restarts once: its memory drops and climbs back. The
// restart is an episode at its time, the memory STABLE, not a trend.
func TestRestartIsAnEpisode(t *testing.T) {
	rnd := rand.New(rand.NewPCG(2, 2))
	r := newRecorder(t, Config{For: 10 * time.Minute, Window: 5 * time.Second, Horizon: 30 * time.Minute})
	const at = 151.5
	rss := func(t float64) float64 {
		if t < at {
			return 60
		}
		return 40 + 18*(1-math.Exp(-(t-at)/20)) // back nearly where it was
	}
	restarted := false
	s := &sim{r: r, load: steady, watched: func(start, end float64) (*results.WindowTarget, *results.WindowCeiling) {
		w := &results.WindowTarget{RSSMB: ptr(rss(end) + rnd.NormFloat64()*0.2), Threads: ptr(8), FDs: ptr(12)}
		if start < at && at <= end {
			r.Restart(at)
			w.Restarts, restarted = 1, true
		}
		return w, nil
	}}
	s.run(t, 0, 300)
	k := soakOf(t, r)
	if !restarted {
		t.Fatal("no window held the restart")
	}
	if tr := trendOf(t, k, MemoryFigure); tr.Verdict != results.Stable {
		t.Errorf("RSS trend = %+v, want STABLE: a restart is an episode", tr)
	}
	var got []string
	for _, e := range k.Episodes {
		got = append(got, e.Kind)
		if e.Kind == results.EpisodeRestart && e.StartS != at {
			t.Errorf("restart episode at %g, want %g", e.StartS, at)
		}
	}
	if !slices.Equal(got, []string{results.EpisodeRestart}) {
		t.Errorf("episodes %v, want the restart alone", got)
	}
}

// Errors in bursts of 3 s every 30 s are listed each with its times, and
// their period found; the window's error rate is STABLE.
func TestBurstPeriod(t *testing.T) {
	r := newRecorder(t, Config{For: 10 * time.Minute, Window: 15 * time.Second, Horizon: 30 * time.Minute})
	s := &sim{r: r, load: func(t float64) second {
		if int(t)%30 >= 20 && int(t)%30 < 23 {
			return second{ok: 25, failed: 25, ms: 3}
		}
		return second{ok: 50, ms: 10}
	}}
	s.run(t, 0, 600)
	if err := r.Finish(600, "", nil, nil); err != nil {
		t.Fatal(err)
	}
	k := soakOf(t, r)
	bursts := 0
	for _, e := range k.Episodes {
		if e.Kind != results.EpisodeErrors {
			t.Errorf("episode %+v, want error bursts only", e)
			continue
		}
		bursts++
		if e.EndS-e.StartS != 3 || e.Failed != 75 || e.Peak != 50 || !strings.Contains(e.Text, "errors: 3 s from") {
			t.Errorf("burst %+v, want 3 s, 75 failed, peak 50%%", e)
		}
	}
	if bursts != 20 || len(k.Recurring) != 1 || k.Recurring[0].PeriodS != 30 || k.Recurring[0].Count != 20 {
		t.Errorf("%d bursts, recurring %+v; want 20 bursts every 30 s", bursts, k.Recurring)
	}
	if tr := trendOf(t, k, figErrors); tr.Verdict != results.Stable {
		t.Errorf("error rate trend = %+v, want STABLE: the bursts come and go", tr)
	}
}

// With fewer than MinWindows windows a figure's verdict is UNKNOWN; a
// figure nothing measured has no trend at all.
func TestTooShort(t *testing.T) {
	r := newRecorder(t, Config{For: time.Minute, Window: 10 * time.Second, Horizon: time.Hour})
	s := &sim{r: r, load: steady}
	s.run(t, 0, 35)
	k := soakOf(t, r)
	if tr := trendOf(t, k, figP99); tr.Verdict != results.Unknown || tr.Windows != 3 {
		t.Errorf("p99 after 3 windows = %+v, want UNKNOWN", tr)
	}
	for _, tr := range k.Trends {
		if strings.HasPrefix(tr.Figure, "target.") || strings.HasPrefix(tr.Figure, "ceiling.") {
			t.Errorf("trend %+v of a figure nothing measured", tr)
		}
	}
}

// The target's metric series are kept up to MaxMetricSeries, the first
// by name, and the others said to be left out.
func TestMetricSeriesBounded(t *testing.T) {
	r := newRecorder(t, Config{For: time.Minute, Window: 5 * time.Second, Horizon: time.Hour})
	s := &sim{r: r, load: steady, watched: func(_, end float64) (*results.WindowTarget, *results.WindowCeiling) {
		m := map[string]float64{}
		for i := range MaxMetricSeries + 4 {
			m[string(rune('a'+i))] = end
		}
		return &results.WindowTarget{Metrics: m}, nil
	}}
	s.run(t, 0, 40)
	k := soakOf(t, r)
	if n := len(k.Windows[0].Target.Metrics); n != MaxMetricSeries {
		t.Errorf("a window keeps %d series, want %d", n, MaxMetricSeries)
	}
	if len(k.Notes) != 1 || !strings.Contains(k.Notes[0], "4 metric series") {
		t.Errorf("notes %q, want the 4 series left out said", k.Notes)
	}
	if tr := trendOf(t, k, figMetric+"a"); tr.Verdict != results.Drifting {
		t.Errorf("metric a, which grows a unit a second: %+v, want DRIFTING", tr)
	}
}

// At the bound, a soak's result stays a file a browser opens: MaxWindows
// windows of a busy load (500/s, response times spread over four orders
// of magnitude, the histogram's worst), each with the target's figures
// and sixteen metric series, take under 5 MB of JSON (4.5 MB measured).
func TestSizeBound(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	k := &results.Soak{Schema: results.SoakSchema}
	for i := range results.MaxWindows {
		h := metrics.NewHistogram()
		for range 500 * 180 {
			if err := h.RecordValue(int64(math.Exp(rnd.NormFloat64()*1.5+9)) + 1); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := metrics.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for j := range MaxMetricSeries {
			m["process_metric_with_a_long_name{label=\""+string(rune('a'+j))+"\"}"] = rnd.Float64() * 1000
		}
		k.Windows = append(k.Windows, results.SoakWindow{StartS: float64(i * 180), EndS: float64(i*180 + 180), Seconds: 180,
			Completed: 90000, OK: 89990, Failed: 10, Errors: map[string]int64{"timeout": 10}, Throughput: 499.9, ErrorRate: 0.0001,
			TargetRate: 500, Histogram: enc, LatencyMS: metrics.Summarize(h),
			Target:  &results.WindowTarget{CPUPct: ptr(12.5), RSSMB: ptr(512.25), FDs: ptr(140), Threads: ptr(22), Metrics: m},
			Ceiling: &results.WindowCeiling{RSSMB: ptr(60.1), HeapMB: 12.3}})
	}
	data, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d windows: %.2f MB of JSON (%.1f KB a window)", len(k.Windows), float64(len(data))/1e6, float64(len(data))/1e3/float64(len(k.Windows)))
	if len(data) > 5e6 {
		t.Errorf("%d windows take %d bytes, want under 5 MB", len(k.Windows), len(data))
	}
}

// A Recorder keeps no window in memory: its windows are in their file,
// and what the trends read of them was made once, so that the live heap
// grows by less than 256 bytes a window over 150 windows of a watched
// target with sixteen metric series (20 bytes measured). The twin shows
// the measure sees windows kept: the same windows read back into memory
// grow it by more than a kilobyte each (1.6 KB measured).
func TestKeepsNoWindowInMemory(t *testing.T) {
	r := newRecorder(t, Config{For: time.Hour, Window: time.Second, Horizon: time.Hour})
	s := &sim{r: r, load: steady, watched: func(_, end float64) (*results.WindowTarget, *results.WindowCeiling) {
		m := map[string]float64{}
		for i := range MaxMetricSeries {
			m["series_"+string(rune('a'+i))] = end
		}
		return &results.WindowTarget{CPUPct: ptr(10), RSSMB: ptr(100 + end/100), FDs: ptr(20), Threads: ptr(4), Metrics: m},
			&results.WindowCeiling{RSSMB: ptr(20), AnonMB: ptr(10), HeapMB: 5}
	}}
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // a pool's objects (the histograms' encoders) live through one
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	s.run(t, 0, 20)
	before := live()
	s.run(t, 20, 170)
	after := live()
	k := soakOf(t, r)
	loaded := live()
	runtime.KeepAlive(k)
	per := (float64(after) - float64(before)) / 150
	kept := (float64(loaded) - float64(after)) / float64(len(k.Windows))
	t.Logf("live heap %d bytes after 20 windows, %d after 170: %+.0f bytes a window; %.0f bytes a window read back", before, after, per, kept)
	if len(k.Windows) != 169 || len(k.Trends) < 20 {
		t.Fatalf("%d windows, %d trends: want 169 windows (the 170th in progress) and every figure fitted", len(k.Windows), len(k.Trends))
	}
	if per > 256 {
		t.Errorf("the live heap grew %.0f bytes a window, want under 256: windows are kept in memory", per)
	}
	if kept < 1024 {
		t.Errorf("169 windows read back into memory took %.0f bytes each: the measure does not see a kept window", kept)
	}
}

// A fold that cannot make its file (the temporary folder gone) fails the
// window's end, loses nothing, and is tried again at the next window:
// once it can, the windows merge and still hold every exchange fed.
func TestFoldFailsAndRecovers(t *testing.T) {
	dir := t.TempDir()
	tempDir := func(d string) { t.Setenv("TMPDIR", d); t.Setenv("TMP", d) } // os.TempDir on Unix, on Windows
	tempDir(dir)
	r := newRecorder(t, Config{For: 1000 * time.Second, Window: 10 * time.Second, Horizon: time.Hour})
	r.maxWindows = 8
	s := &sim{r: r, load: steady}
	s.run(t, 0, 75) // seven windows closed
	tempDir(filepath.Join(dir, "gone"))
	s.run(t, 75, 80)
	if err := r.End(nil, nil); err == nil {
		t.Fatal("the eighth window's end, whose fold could not make its file, did not fail")
	}
	if k := soakOf(t, r); len(k.Windows) != 8 || k.Folds != 0 || len(k.Trends) == 0 {
		t.Fatalf("after the failed fold: %d windows, %d folds, %d trends; want the 8 windows unmerged, fitted", len(k.Windows), k.Folds, len(k.Trends))
	}
	tempDir(dir)
	s.run(t, 80, 95)
	k := soakOf(t, r)
	var n int64
	for _, w := range k.Windows {
		n += w.Completed
	}
	if k.Folds != 1 || len(k.Windows) != 5 || n != s.fed-50*5 {
		t.Errorf("after the fold could make its file: %d folds, %d windows holding %d exchanges; want 1 fold, 5 windows, %d (the window in progress holds 5 s)", k.Folds, len(k.Windows), n, s.fed-50*5)
	}
}
