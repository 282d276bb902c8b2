package testkit

import (
	"flag"
	"os"
	"runtime"
)

// LoopProcs gives Go's scheduler one processor more than the tests that
// may run at once (-test.parallel), for a test binary whose tests run
// ceiling in its own process, side by side: each event loop (httpx.Loop,
// wsx.Loop) holds a processor while it waits in the kernel
// (docs/measurements.md), so two loops on a 2-core machine would leave
// none to the tests' own servers, whose answers, and so the latencies
// measured, would wait for Go to preempt a loop. The kernel still shares
// the cores between the threads; no more processors than that are added,
// so as not to add to the load of the packages tested beside it. Call it
// from TestMain after flag.Parse.
//
// It also has each run take one event loop (CEILING_LOOPS=1) rather than
// one per core: the tests' runs go side by side in one process, and their
// loops together would hold every processor.
func LoopProcs() {
	_ = os.Setenv("CEILING_LOOPS", "1")
	n := runtime.GOMAXPROCS(0)
	if f := flag.Lookup("test.parallel"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if p, ok := g.Get().(int); ok {
				n = max(n, p+1)
			}
		}
	}
	runtime.GOMAXPROCS(n)
}
