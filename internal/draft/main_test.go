package draft

import (
	"flag"
	"os"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// TestMain gives the scheduler a processor more than the tests that run
// at once: the drafts' runs go side by side in this process
// (testkit.LoopProcs).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}
