package metrics

import (
	"math/bits"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Histogram bounds, in microseconds.
const (
	// LowestUS is the smallest latency told apart from zero: 1 µs.
	LowestUS = 1
	// HighestUS is the largest latency recorded exactly: one hour.
	HighestUS = int64(time.Hour / time.Microsecond)
	// SigFigs is the number of significant decimal digits kept.
	SigFigs = 3
)

// LateAfter is the schedule lag past which an arrival counts as late: it
// started more than this after its intended time, because no worker was free
// or the generator was starved of CPU.
const LateAfter = 10 * time.Millisecond

// NewHistogram returns an empty histogram with the package's bounds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestUS, HighestUS, SigFigs)
}

// Resolution is the width of the histogram's bucket that holds d: the
// histogram records every latency within it as one value, so two figures
// closer than this are not told apart. With SigFigs 3 it is 1 µs below
// 2.048 ms, then d/2048 to d/1024 (a power of two of microseconds): 16 µs
// at 20 ms, 512 µs at 1 s.
func Resolution(d time.Duration) time.Duration {
	us := max(int64(d/time.Microsecond), 0)
	// The histogram's buckets: 2048 sub-buckets of 1 µs up to 2048 µs,
	// then each power of two [2^k, 2^(k+1)) µs split in 1024 sub-buckets
	// of 2^(k-10) µs (hdrhistogram's getBucketIndex with unit magnitude 0
	// and sub-bucket half count magnitude 10).
	const subBuckets = 2048
	if us < subBuckets {
		return time.Microsecond
	}
	k := bits.Len64(uint64(us)) - 1 // 2^k <= us < 2^(k+1)
	return time.Duration(int64(1)<<(k-10)) * time.Microsecond
}

// Tally is what a set of exchanges amounted to.
type Tally struct {
	// Latency holds response times (end − intended) in microseconds.
	Latency *hdrhistogram.Histogram
	// Service holds service times (end − start) in microseconds.
	Service *hdrhistogram.Histogram
	// Kinds counts counted exchanges by outcome kind.
	Kinds Counts
	// BytesIn and BytesOut count body bytes received and sent.
	BytesIn, BytesOut int64
	// Late counts exchanges whose schedule lag exceeded LateAfter.
	Late int64
	// RetryAfters counts limited responses that carried a Retry-After, and
	// RetryAfterMax is the longest wait one asked for.
	RetryAfters   int64
	RetryAfterMax time.Duration
	// Redirected counts OK answers that came after following a redirect.
	Redirected int64
	// Idle counts counted iterations that sent nothing by design (an idle
	// WebSocket soak): arrivals that are not lost exchanges.
	Idle int64
	// Retried counts exchanges sent twice because the first attempt met a
	// keep-alive connection the server had closed.
	Retried int64
	// MaxLag is the largest schedule lag (start − intended) seen, and
	// LagSum the sum of every exchange's lag (for the mean).
	MaxLag, LagSum time.Duration
	// Clamped counts response times longer than HighestUS, recorded as HighestUS.
	Clamped int64
	// Status4xx is the status of the 4xx failures when they all had the
	// same one, -1 when they had several, 0 when there were none: a step
	// whose every request failed with one 4xx (a wrong URL's 404) measured
	// a wrong request, not the target's capacity.
	Status4xx int
	// breakdowns hold the per-scenario and per-tag figures of iterations.
	breakdowns
	// Logins are the login flows' figures, apart from everything above.
	Logins Logins
	// Finished counts exchanges of any step phase (warm-up included) that
	// were answered OK or Limited and ended inside the counted window: the
	// achieved throughput. Failures do not count, so a target that answers
	// 503 at once does not look as if it kept up.
	Finished int64
}

// NewTally returns an empty Tally with no breakdowns.
func NewTally() *Tally { return NewTallyFor(Layout{}) }

// NewTallyFor returns an empty Tally with the breakdowns l asks for.
func NewTallyFor(l Layout) *Tally { return newTally(l, false) }

// NewInterimTallyFor returns an empty Tally with the breakdowns l asks
// for, kept as their iterations' times rather than histograms until it is
// merged into a full Tally: for a tally the figures only pass through (a
// recorder's shards, a second's collection), which would otherwise hold a
// histogram for each scenario and tag value whatever it counted, 37 MB for
// 200 scenarios. Its breakdowns' Latency are nil; its totals are whole.
func NewInterimTallyFor(l Layout) *Tally { return newTally(l, true) }

func newTally(l Layout, interim bool) *Tally {
	t := &Tally{Latency: NewHistogram(), Service: NewHistogram(), breakdowns: newBreakdowns(l, interim)}
	if l.Login {
		t.Logins.Latency = NewHistogram()
	}
	return t
}

// Reset empties the tally, keeping its histograms' memory.
func (t *Tally) Reset() {
	lat, svc, b, l := t.Latency, t.Service, t.breakdowns, t.Logins
	lat.Reset()
	svc.Reset()
	b.reset()
	l.reset()
	*t = Tally{Latency: lat, Service: svc, breakdowns: b, Logins: l}
}

// Merge adds o into t.
func (t *Tally) Merge(o *Tally) {
	t.Latency.Merge(o.Latency)
	t.Service.Merge(o.Service)
	t.Kinds.add(&o.Kinds)
	t.BytesIn += o.BytesIn
	t.BytesOut += o.BytesOut
	t.Late += o.Late
	t.Retried += o.Retried
	t.Idle += o.Idle
	t.Redirected += o.Redirected
	t.RetryAfters += o.RetryAfters
	t.RetryAfterMax = max(t.RetryAfterMax, o.RetryAfterMax)
	t.MaxLag = max(t.MaxLag, o.MaxLag)
	t.LagSum += o.LagSum
	t.Clamped += o.Clamped
	t.Status4xx = SameStatus(t.Status4xx, o.Status4xx)
	t.Finished += o.Finished
	t.breakdowns.merge(&o.breakdowns)
	t.Logins.Merge(&o.Logins)
}

// Completed counts counted exchanges that ended, whatever the outcome.
func (t *Tally) Completed() int64 { return t.Kinds.Completed() }

// Iterations counts the counted iterations that ended, whatever the
// outcome, from the per-scenario breakdowns; ok is false for a tally
// kept without them (Layout.Scenarios 0), which cannot tell.
func (t *Tally) Iterations() (n int64, ok bool) {
	for _, s := range t.Scenarios {
		n += s.Completed()
	}
	return n, len(t.Scenarios) > 0
}

// OK counts exchanges the scenario accepted.
func (t *Tally) OK() int64 { return t.Kinds[transport.OK] }

// Limited counts exchanges answered with a limited status.
func (t *Tally) Limited() int64 { return t.Kinds[transport.Limited] }

// Failed counts exchanges of every failure kind.
func (t *Tally) Failed() int64 { return t.Kinds.Failed() }

// Counts counts outcomes by kind.
type Counts [transport.NumKinds]int64

// Completed sums every kind.
func (c *Counts) Completed() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// Failed sums the failure kinds.
func (c *Counts) Failed() int64 { return c.Completed() - c[transport.OK] - c[transport.Limited] }

func (c *Counts) add(o *Counts) {
	for k := range c {
		c[k] += o[k]
	}
}

// Sample is one finished exchange, as offsets from the run's monotonic base.
type Sample struct {
	// Intended is when the schedule wanted the exchange to start.
	Intended time.Duration
	// Start is when it started.
	Start time.Duration
	// End is when it ended.
	End time.Duration
	// Outcome is what it produced.
	Outcome transport.Outcome
	// Counted is true when Intended falls inside the step's counted window
	// (not in its warm-up).
	Counted bool
	// InWindow is true when End falls inside the step's counted window.
	InWindow bool
}

// add records one sample; the caller holds whatever lock guards t.
func (t *Tally) add(s *Sample) {
	if s.InWindow && !s.Outcome.Kind.Failed() {
		t.Finished++
	}
	if !s.Counted {
		return
	}
	t.Kinds[s.Outcome.Kind]++
	if s.Outcome.Kind == transport.HTTP4xx {
		t.Status4xx = SameStatus(t.Status4xx, s.Outcome.Status)
	}
	t.BytesIn += s.Outcome.BytesIn
	t.BytesOut += s.Outcome.BytesOut
	if s.Outcome.Retried {
		t.Retried++
	}
	if s.Outcome.Redirected && s.Outcome.Kind == transport.OK {
		t.Redirected++
	}
	if s.Outcome.RetryAfter > 0 {
		t.RetryAfters++
		t.RetryAfterMax = max(t.RetryAfterMax, s.Outcome.RetryAfter)
	}
	if record(t.Latency, s.End-s.Intended) {
		t.Clamped++
	}
	record(t.Service, s.End-s.Start)
	lag := s.Start - s.Intended
	t.LagSum += lag
	if lag > LateAfter {
		t.Late++
	}
	if lag > t.MaxLag {
		t.MaxLag = lag
	}
}

// SameStatus combines two Status4xx values (of exchanges, or of steps):
// the status both had, 0 for none, -1 for several.
func SameStatus(a, b int) int {
	switch {
	case a == 0 || a == b:
		return b
	case b == 0:
		return a
	}
	return -1
}

// record adds d to h in microseconds, clamped to the histogram's range, and
// reports whether it had to clamp a too-long value.
func record(h *hdrhistogram.Histogram, d time.Duration) (clamped bool) {
	us := int64(d / time.Microsecond)
	switch {
	case us < LowestUS:
		us = LowestUS
	case us > HighestUS:
		us, clamped = HighestUS, true
	}
	_ = h.RecordValue(us) // in range by construction
	return clamped
}
