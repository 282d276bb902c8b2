package testkit

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// ParallelWaits raises -test.parallel to n when go test chose it (not
// under the race detector, nor when -parallel was given), and
// LoopProcs gives a processor more than the loops of that many tests.
// Both change the binary's settings, so the test puts them back.
func TestParallelWaitsAndLoopProcs(t *testing.T) {
	f := flag.Lookup("test.parallel")
	was, procs := f.Value.String(), runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		_ = f.Value.Set(was)
		runtime.GOMAXPROCS(procs)
	})
	t.Setenv("CEILING_LOOPS", "")
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	n := procs + 3
	ParallelWaits(n)
	want := strconv.Itoa(n)
	if race || given {
		want = was
	}
	if got := f.Value.String(); got != want {
		t.Errorf("-test.parallel %s after ParallelWaits(%d) (race detector %v, -parallel given %v), want %s", got, n, race, given, want)
	}
	p := int(f.Value.(flag.Getter).Get().(int))
	LoopProcs(2)
	if got, want := runtime.GOMAXPROCS(0), max(procs, 2*p+1); got != want {
		t.Errorf("GOMAXPROCS %d after LoopProcs(2) with -test.parallel %d, want %d", got, p, want)
	}
	if v := os.Getenv("CEILING_LOOPS"); v != "1" {
		t.Errorf("CEILING_LOOPS=%q after LoopProcs, want 1: each run one loop", v)
	}
}
