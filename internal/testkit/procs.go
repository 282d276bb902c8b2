package testkit

import (
	"flag"
	"os"
	"runtime"
)

// LoopProcs gives Go's scheduler a processor more than the event loops
// that the tests that may run at once (-test.parallel), each running up to
// loops of them side by side, hold: for a test binary whose tests run
// ceiling in its own process. Each event loop (httpx.Loop, wsx.Loop)
// holds a processor while it waits in the kernel (docs/measurements.md),
// so two loops on a 2-core machine would leave none to the tests' own
// servers, whose answers, and so the latencies measured, would wait for Go
// to preempt a loop (10 ms and more). The kernel still shares the cores
// between the threads, and a loop sleeping in the kernel uses none; no more
// processors than that are added, so as not to add to the load of the
// packages tested beside it. Call it from TestMain after flag.Parse (and
// ParallelWaits).
//
// It also has each run take one event loop (CEILING_LOOPS=1) rather than
// one per core: the tests' runs go side by side in one process, and their
// loops together would hold every processor.
func LoopProcs(loops int) {
	_ = os.Setenv("CEILING_LOOPS", "1")
	n := runtime.GOMAXPROCS(0)
	if f := flag.Lookup("test.parallel"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if p, ok := g.Get().(int); ok {
				n = max(n, p*loops+1)
			}
		}
	}
	runtime.GOMAXPROCS(n)
}
