package run

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The test binary, started again, stands in for what a test needs outside
// its own process: the demo target, which a run starts as its command
// target (the events), or a run of its own, under limits the test sets on
// that process alone (the open-file limit).
const (
	// demoEnv is the demo target's listen address; demoReuseEnv "1" has
	// it listen with SO_REUSEPORT (a rolling deploy's two copies).
	demoEnv      = "RUN_TEST_DEMO"
	demoReuseEnv = "RUN_TEST_DEMO_REUSE"
	// planEnv names a plan file to run, writing its result to planOutEnv;
	// the process exits 0 when the run passed, 1 when it did not, 3 when
	// it could not open or run.
	planEnv    = "RUN_TEST_PLAN"
	planOutEnv = "RUN_TEST_OUT"
)

// standIn does what the environment asks of a test binary started again,
// and reports whether it asked anything (it does not return when it did).
func standIn() bool {
	switch {
	case os.Getenv(demoEnv) != "":
		serveDemo(os.Getenv(demoEnv), os.Getenv(demoReuseEnv) == "1")
	case os.Getenv(planEnv) != "":
		runFile(os.Getenv(planEnv), os.Getenv(planOutEnv))
	default:
		return false
	}
	return true
}

// serveDemo serves the demo target on addr until SIGTERM or an interrupt.
func serveDemo(addr string, reuse bool) {
	testkit.ExitWithOwner()
	srv, err := demo.Start(demo.Config{Addr: addr, ReusePort: reuse})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	<-ctx.Done()
	stop()
	srv.Close()
	os.Exit(0)
}

// runFile runs the plan in path, writing its result to out.
func runFile(path, out string) {
	testkit.ExitWithOwner()
	text, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	p, err := plan.Parse(path, text)
	if err == nil {
		err = p.Validate()
	}
	var s *Session
	if err == nil {
		s, err = Open(context.Background(), p, Options{Out: out})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	res, err := s.Run(context.Background())
	s.Close()
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	case !res.Passed:
		fmt.Fprintln(os.Stderr, "the run did not pass")
		os.Exit(1)
	}
	os.Exit(0)
}
