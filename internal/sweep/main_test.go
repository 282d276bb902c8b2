package sweep

import (
	"flag"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// asTarget makes the test binary serve the built-in target when set in
// its environment, as `ceiling demo-target FLAGS` does (its arguments:
// demo-target FLAGS): the target a sweep's commands start under each
// shape. With hogMB set, it takes that many MiB of memory once the file
// hogWhen names exists: a target that outgrows a shape's memory limit when
// the test says.
const (
	asTarget = "CEILING_SWEEP_TEST_TARGET"
	hogMB    = "CEILING_TEST_HOG_MB"
	hogWhen  = "CEILING_TEST_HOG_WHEN"
)

func TestMain(m *testing.M) {
	if os.Getenv(asTarget) == "1" {
		os.Exit(serveTarget(os.Args[2:]))
	}
	testkit.Own()
	// The sweeps' commands, which inherit this environment, start this
	// binary as the built-in target (targetCmd).
	os.Setenv(asTarget, "1")
	flag.Parse()
	// Most tests wait on their sweeps' short steps and targets more than
	// they compute.
	testkit.ParallelWaits(8)
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}

// serveTarget serves the built-in target with the flags args until
// SIGTERM or SIGINT, and returns the exit status.
func serveTarget(args []string) int {
	// Started by a test, directly or not (a shell's `cmd &`): gone with
	// the test binary.
	testkit.ExitWithOwner()
	var f demo.Flags
	fs := pflag.NewFlagSet("demo-target", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := f.Config(fs.Changed)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 2
	}
	srv, err := demo.Start(cfg)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 3
	}
	if mb, err := strconv.Atoi(os.Getenv(hogMB)); err == nil && mb > 0 {
		go hog(mb, os.Getenv(hogWhen))
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	srv.Close()
	return 0
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
