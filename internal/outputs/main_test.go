package outputs

import (
	"flag"
	"os"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// TestMain lets four tests run at once, for the parallel ones wait on
// their runs' short steps and on Prometheus more than they compute
// (testkit.ParallelWaits), and gives the scheduler a processor more than
// their runs' event loops (testkit.LoopProcs).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.ParallelWaits(4)
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}
