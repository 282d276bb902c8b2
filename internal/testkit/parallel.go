package testkit

import (
	"flag"
	"runtime"
	"strconv"
)

// ParallelWaits lets n of a test binary's parallel tests run at once
// (-test.parallel n, where go test would run as many as the machine has
// cores), for a package whose parallel tests spend their time waiting on
// short steps of loopback load, timers and child processes rather than
// computing: n of them at a time keep two cores busy without one starving
// another. Under the race detector, which multiplies their CPU, and when
// -test.parallel is given, go test's own number stands, as it does on a
// machine of n cores or more. Call it from TestMain after flag.Parse and
// before LoopProcs, which gives the scheduler processors for the event
// loops of that many tests.
func ParallelWaits(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given || race || runtime.GOMAXPROCS(0) >= n {
		return
	}
	_ = flag.Set("test.parallel", strconv.Itoa(n))
}
