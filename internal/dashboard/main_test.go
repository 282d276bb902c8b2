package dashboard

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// asChild makes the test binary, started by a test as a process of its
// own, do one thing and exit: "run URL PAGE OUT" runs a step against URL
// with its live page at PAGE and its result written to OUT, as `ceiling
// run --dashboard PAGE` does; "serve ADDR" serves HTTP at ADDR until
// stopped, as `ceiling mock` does.
const asChild = "CEILING_DASHBOARD_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(asChild) == "1" {
		testkit.ExitWithOwner()
		if err := child(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testkit.Own()
	flag.Parse()
	// The parallel tests wait on their viewers and steps more than they
	// compute.
	testkit.ParallelWaits(4)
	testkit.LoopProcs(1)
	os.Exit(m.Run())
}

// child does what its arguments say (see asChild).
func child(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case len(args) == 2 && args[0] == "serve":
		ln, err := net.Listen("tcp", args[1])
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })}
		go srv.Serve(ln)
		<-ctx.Done()
		return srv.Close()
	case len(args) == 4 && args[0] == "run":
		// A short step: the flood's harm (descriptors the page takes from
		// the run, CPU its accept loop burns) is there from the instant it
		// lands, in the warmup, and lasts the step; 200 exchanges give the
		// step its p99 and verdict.
		p, err := plan.Parse("plan.yaml", []byte("target: "+args[1]+"\nload: {rates: [200], step: 1s, warmup: 500ms}\nhttp: {timeout: 2s}\nscenarios: [{request: {url: /}}]\n"))
		if err != nil {
			return err
		}
		page, err := Listen(Options{Addr: args[2]})
		if err != nil {
			return err
		}
		s, err := run.Open(ctx, p, run.Options{Out: args[3], Outputs: []run.Output{NewOutput(page, Feed{Steps: 1})}})
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Run(ctx)
		return err
	}
	return fmt.Errorf("child %q: want run URL PAGE OUT, or serve ADDR", args)
}
