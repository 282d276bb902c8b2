package demo

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The CPU-bound endpoint, GET /burn?ms=N: each request does a fixed amount
// of work, N ms of one core's time, so that the target's throughput is
// bounded by the CPU it is given (about cores × 1000 ÷ N requests a
// second) and a sweep over CPU quotas finds it proportional to the quota.
//
// The work is a count of rounds calibrated once per process, not a spin
// until time.Since(start) reaches N: wall time is not CPU time. Under a
// CFS quota a throttled handler's clock keeps running, so a spin on the
// clock would spend less CPU per request the tighter the quota (and the
// more requests share the cores), and throughput would follow the
// concurrency instead of the CPU. A fixed count costs the same CPU however
// long the request waits, like real work does.

// Bounds of ?ms=.
const (
	burnDefault = 5    // ms, without ?ms=
	burnMax     = 1000 // ms
)

// burnRounds is the rounds of work in one millisecond of CPU, calibrated
// the first time it is called (Start calls it).
var burnRounds = sync.OnceValue(calibrateBurn)

// burnSink keeps the work's result, so that the compiler cannot drop it.
var burnSink atomic.Uint64

// spin does n rounds of xorshift on x and returns the result.
func spin(n int64, x uint64) uint64 {
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// calibrateBurn measures the rounds of spin in one millisecond. It first
// spins for 10 ms, so that a process just started runs at its steady speed
// (measured here: a calibration at start ran 6 % slower than later ones, and
// N ms of rounds then took 3 % less than N), doubles a chunk until one run
// takes at least a millisecond, then times 15 runs of it and keeps the
// fastest. The fastest run is the one nothing interrupted (no preemption,
// no throttling by a CPU quota: a 1 ms chunk fits in a 100 ms CFS period's
// share), so it is the machine's speed. About 30 ms, once per process; a
// request's CPU is then N ms within the few per cent the machine's speed
// drifts.
func calibrateBurn() float64 {
	for t := time.Now(); time.Since(t) < 10*time.Millisecond; {
		burnSink.Store(spin(1<<12, burnSink.Load()|1))
	}
	n := int64(1 << 12)
	for {
		t := time.Now()
		burnSink.Store(spin(n, uint64(n)|1))
		if time.Since(t) >= time.Millisecond {
			break
		}
		n *= 2
	}
	best := time.Duration(1<<63 - 1)
	for range 15 {
		t := time.Now()
		burnSink.Store(spin(n, uint64(n)|1))
		best = min(best, time.Since(t))
	}
	return float64(n) / (float64(best) / float64(time.Millisecond))
}

// burn answers GET /burn?ms=N after N ms of CPU work (default 5, at most
// 1000): {"ms":N}.
func burn(w http.ResponseWriter, r *http.Request) {
	ms := burnDefault
	if v := r.URL.Query().Get("ms"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > burnMax {
			http.Error(w, fmt.Sprintf(`{"error":"ms: want a whole number of milliseconds from 0 to %d"}`, burnMax), http.StatusBadRequest)
			return
		}
		ms = n
	}
	burnSink.Store(spin(int64(float64(ms)*burnRounds()), uint64(time.Now().UnixNano())|1))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"ms":%d}`+"\n", ms)
}
