package cli

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// asCeiling makes the test binary act as ceiling itself when set in its
// environment: `ceiling demo` starts the demo target by running its own
// executable, which under `go test` is this binary.
const asCeiling = "CEILING_TEST_AS_CEILING"

// hogMB and hogWhen make the test binary, acting as ceiling, take hogMB
// MiB of memory once the file named by hogWhen exists: a target that
// outgrows a shape's memory limit when the test says, for the sweep's
// OOM tests.
const (
	hogMB   = "CEILING_TEST_HOG_MB"
	hogWhen = "CEILING_TEST_HOG_WHEN"
)

func TestMain(m *testing.M) {
	if os.Getenv(asCeiling) == "1" {
		// Started by a test, directly or not (a sweep's `cmd &`, a shell
		// of the code under test): gone with the test binary.
		testkit.ExitWithOwner()
		if mb, err := strconv.Atoi(os.Getenv(hogMB)); err == nil && mb > 0 {
			go hog(mb, os.Getenv(hogWhen))
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
		stop()
		os.Exit(int(code))
	}
	testkit.Own()
	// Every child of this binary the tests start (a sweep's --cmd, the
	// demo's target, the doc blocks' ceiling) acts as ceiling: set once
	// here, so that no test sets it for itself and must run alone.
	os.Setenv(asCeiling, "1")
	// The tables of the tests' runs are whole, whatever terminal runs them.
	os.Unsetenv("COLUMNS")
	// The parallel tests of this package wait on short steps of loopback
	// load more than they compute.
	flag.Parse()
	testkit.ParallelWaits(12)
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}

// hogged holds what hog took, so that it stays resident.
var hogged [][]byte

// hog waits (a minute at most) for the file when to exist, then takes mb
// MiB of memory, a MiB at a time, writing every page so that it is
// resident.
func hog(mb int, when string) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(when); err == nil {
			break
		}
	}
	for range mb {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hogged = append(hogged, b)
	}
}
