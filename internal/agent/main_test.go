package agent

import (
	"flag"
	"os"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// TestMain gives the scheduler a processor more than the tests that run at
// once: their agents run steps on the event loop in this process, side by
// side, and must still answer their health checks (testkit.LoopProcs).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.LoopProcs()
	os.Exit(m.Run())
}
