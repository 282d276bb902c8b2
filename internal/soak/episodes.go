package soak

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/trend"
)

// How episodes are found. Each second is compared with a baseline: the
// median (and, for latency, the robust spread: 1.4826 × the median
// absolute deviation) of the last BaselineSeconds quiet seconds, those
// that were not part of an episode themselves, so that a long outage
// stays one episode instead of becoming the usual.
//
//   - An error burst is a second in which at least MinBurstFailed
//     exchanges failed and the share that failed was at least
//     BurstTimes the usual share and BurstPoints percentage points above
//     it.
//   - A latency spike is a second of at least MinSpikeAnswers answers
//     whose p99 was at least SpikeTimes the usual p99, SpikeSigmas
//     spreads above it, and MinSpikeMS above it: a latency that climbs
//     steadily moves its own baseline and spread, and is a trend, not a
//     spike.
//
// Seconds of one kind less than EpisodeGap apart make one episode. A kind
// of episode that happened at least three times at starts whose gaps stray
// from their median by at most a fifth of it (or a second) recurs at that
// period.
const (
	BaselineSeconds = 120
	MinBurstFailed  = 3
	BurstTimes      = 5
	BurstPoints     = 5.0
	MinSpikeAnswers = 5
	SpikeTimes      = 3
	SpikeSigmas     = 6
	MinSpikeMS      = 5.0
	EpisodeGap      = 2.5
	// minBaseline is the fewest quiet seconds a baseline needs.
	minBaseline = 5
	// maxStarts is how many starts of each kind are kept for the period.
	maxStarts = 10000
)

// episodes finds and keeps a soak's episodes.
type episodes struct {
	errShares, p99s ring
	burst, spike    *results.Episode // the episode of each kind in progress
	lastBurst       float64          // the end of its last second
	lastSpike       float64
	list            []results.Episode
	leftOut         int
	starts          map[string][]float64
}

// second looks at one counted second.
func (e *episodes) second(s Second) {
	n, failed := s.Kinds.Completed(), s.Kinds.Failed()
	if n == 0 {
		e.quiet(s.T)
		return
	}
	share := 100 * float64(failed) / float64(n)
	usual, _ := e.errShares.baseline()
	if e.errShares.len() >= minBaseline && failed >= MinBurstFailed && share >= max(BurstTimes*usual, usual+BurstPoints) {
		if e.burst == nil || s.T-e.lastBurst > EpisodeGap {
			e.close(&e.burst)
			e.burst = &results.Episode{Kind: results.EpisodeErrors, StartS: s.T - 1, Baseline: usual}
		}
		e.burst.EndS, e.burst.Failed, e.burst.Peak = s.T, e.burst.Failed+failed, max(e.burst.Peak, share)
		e.lastBurst = s.T
	} else {
		e.errShares.add(share)
	}
	if n >= MinSpikeAnswers && s.Latency != nil {
		p99 := metrics.Quantile(s.Latency, 0.99)
		usual, spread := e.p99s.baseline()
		if e.p99s.len() >= 2*minBaseline && p99 >= SpikeTimes*usual && p99-usual >= max(SpikeSigmas*spread, MinSpikeMS) {
			if e.spike == nil || s.T-e.lastSpike > EpisodeGap {
				e.close(&e.spike)
				e.spike = &results.Episode{Kind: results.EpisodeSpike, StartS: s.T - 1, Baseline: usual}
			}
			e.spike.EndS, e.spike.Peak = s.T, max(e.spike.Peak, p99)
			e.lastSpike = s.T
		} else {
			e.p99s.add(p99)
		}
	}
	e.quiet(s.T)
}

// quiet closes the episodes whose last second is more than EpisodeGap
// before t.
func (e *episodes) quiet(t float64) {
	if e.burst != nil && t-e.lastBurst > EpisodeGap {
		e.close(&e.burst)
	}
	if e.spike != nil && t-e.lastSpike > EpisodeGap {
		e.close(&e.spike)
	}
}

// close files the episode in progress *ep, if any, and clears it.
func (e *episodes) close(ep **results.Episode) {
	if *ep == nil {
		return
	}
	x := **ep
	*ep = nil
	x.Text = describe(x)
	e.file(x)
}

// file keeps an episode (up to results.MaxEpisodes) and its start.
func (e *episodes) file(x results.Episode) {
	if e.starts == nil {
		e.starts = map[string][]float64{}
	}
	if s := e.starts[x.Kind]; len(s) < maxStarts {
		e.starts[x.Kind] = append(s, x.StartS)
	}
	if len(e.list) >= results.MaxEpisodes {
		e.leftOut++
		return
	}
	e.list = append(e.list, x)
}

// restart notes a restart of the target at t.
func (e *episodes) restart(t float64) {
	e.file(results.Episode{Kind: results.EpisodeRestart, StartS: t, EndS: t,
		Text: fmt.Sprintf("at %s the target restarted: its main process ended and another took its place", results.Clock(t))})
}

// died notes the target's death at t.
func (e *episodes) died(t float64, how string) {
	e.file(results.Episode{Kind: results.EpisodeDied, StartS: t, EndS: t,
		Text: fmt.Sprintf("at %s the target died (%s): the soak ended there", results.Clock(t), how)})
}

// finish closes the episodes in progress.
func (e *episodes) finish() {
	e.close(&e.burst)
	e.close(&e.spike)
}

// all returns the episodes in time order (those in progress too), how
// many were left out, and the kinds that recur.
func (e *episodes) all() (list []results.Episode, leftOut int, recurring []results.Recurrence) {
	list = slices.Clone(e.list)
	for _, ep := range []*results.Episode{e.burst, e.spike} {
		if ep != nil {
			x := *ep
			x.Text = describe(x) + " (under way)"
			list = append(list, x)
		}
	}
	slices.SortStableFunc(list, func(a, b results.Episode) int { return cmp.Compare(a.StartS, b.StartS) })
	if list == nil {
		list = []results.Episode{}
	}
	for _, kind := range []string{results.EpisodeErrors, results.EpisodeSpike, results.EpisodeRestart} {
		if r, ok := period(kind, e.starts[kind]); ok {
			recurring = append(recurring, r)
		}
	}
	return list, e.leftOut, recurring
}

// period finds whether the episodes of a kind starting at starts recur:
// at least three, whose gaps stray from their median by at most a fifth
// of it, or a second (their median absolute deviation).
func period(kind string, starts []float64) (results.Recurrence, bool) {
	if len(starts) < 3 {
		return results.Recurrence{}, false
	}
	gaps := make([]float64, len(starts)-1)
	for i := range gaps {
		gaps[i] = starts[i+1] - starts[i]
	}
	p := median(slices.Clone(gaps))
	dev := make([]float64, len(gaps))
	for i, g := range gaps {
		dev[i] = math.Abs(g - p)
	}
	jitter := median(dev)
	if p <= 0 || jitter > max(p/5, 1) {
		return results.Recurrence{}, false
	}
	return results.Recurrence{Kind: kind, Count: len(starts), PeriodS: p, JitterS: jitter}, true
}

// describe says an episode in a sentence.
func describe(x results.Episode) string {
	d := x.EndS - x.StartS
	switch x.Kind {
	case results.EpisodeErrors:
		return fmt.Sprintf("errors: %.0f s from %s, %d exchanges failed, up to %.3g%% in a second (usually %.2g%%)", d, results.Clock(x.StartS), x.Failed, x.Peak, x.Baseline)
	case results.EpisodeSpike:
		return fmt.Sprintf("latency spike: %.0f s from %s, p99 up to %.4g ms (usually %.3g ms)", d, results.Clock(x.StartS), x.Peak, x.Baseline)
	}
	return x.Text
}

// ring holds the last BaselineSeconds values.
type ring struct {
	v    [BaselineSeconds]float64
	n, i int
}

func (r *ring) add(x float64) {
	r.v[r.i] = x
	r.i = (r.i + 1) % len(r.v)
	r.n = min(r.n+1, len(r.v))
}

func (r *ring) len() int { return r.n }

// baseline is the values' median and robust spread (MADScale × their
// median absolute deviation); zeros when empty.
func (r *ring) baseline() (med, spread float64) {
	if r.n == 0 {
		return 0, 0
	}
	v := slices.Clone(r.v[:r.n])
	med = median(v)
	for i := range v {
		v[i] = math.Abs(v[i] - med)
	}
	return med, trend.MADScale * median(v)
}

// median returns the median of v, which it reorders.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
