package load

import (
	"runtime"
	"runtime/metrics"
)

// DefaultMemoryBudget is Config.MemoryBudget's default: the heap the open
// model may hold before it makes no more users.
const DefaultMemoryBudget = 1 << 30

// memoryCheckEvery is how many new users come between two readings of the
// heap: a reading costs about a microsecond, a user at least a few
// kilobytes.
const memoryCheckEvery = 64

// heapSample reads the bytes held by heap objects, live or not yet swept;
// liveSample those the last collection found live.
var (
	heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
)

// heapBytes returns the bytes the heap's objects hold.
func heapBytes() int64 {
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(heapSample[0].Value.Uint64())
}

// liveHeap collects the garbage and returns the bytes of the heap's live
// objects: what a step's users hold, not what they churned. A collection
// of what ceiling holds (its users, the steps' histograms) takes about a
// millisecond per 100 MB of pointers, run between steps only.
func liveHeap() int64 {
	runtime.GC()
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(liveSample[0].Value.Uint64())
}

// mayMakeUser reports whether the open model may make one more user in
// step sr: every memoryCheckEvery new users it reads the heap, and once the
// heap holds more than the budget it makes none for the rest of the step
// (its arrivals wait for a free user, late, and the step says why: Result.
// MemoryLimited). The step's lanes call it at once (memMu).
func (r *Runner) mayMakeUser(sr *stepRun) bool {
	sr.memMu.Lock()
	defer sr.memMu.Unlock()
	if sr.memoryLimited {
		return false
	}
	sr.made++
	if sr.made%memoryCheckEvery != 0 {
		return true
	}
	budget := r.cfg.MemoryBudget
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	if h := heapBytes(); h > budget {
		sr.memoryLimited, sr.heapAtLimit = true, h
		return false
	}
	return true
}
