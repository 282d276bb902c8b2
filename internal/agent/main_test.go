package agent

import (
	"flag"
	"os"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// TestMain lets eight tests run at once, for they wait on their agents'
// short steps and timeouts more than they compute (testkit.ParallelWaits),
// and gives the scheduler a processor more than that: their agents run
// steps on the event loop in this process, side by side, and must still
// answer their health checks (testkit.LoopProcs).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.ParallelWaits(8)
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}
