package testkit

import "runtime"

// LoopProcs gives Go's scheduler at least 8 processors, for a test binary
// whose tests run ceiling in its own process, side by side: each event
// loop (httpx.Loop, wsx.Loop) holds a processor while it waits in the
// kernel (docs/measurements.md), so two loops on a 2-core machine would
// leave none to the tests' own servers, whose answers, and so the
// latencies measured, would wait for Go to preempt a loop. The kernel
// still shares the cores between the threads. Call it from TestMain; the
// -test.parallel default is already set by then, from the machine's count.
func LoopProcs() {
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 8))
}
