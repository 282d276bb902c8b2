// Command ceiling finds how far a web service goes before it falls over.
// See the README, or run `ceiling --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/ceiling-dev/ceiling/internal/cli"
	"github.com/ceiling-dev/ceiling/internal/control"
)

func main() {
	// life holds what the commands start that must not outlive ceiling:
	// the targets, their commands, a sweep's containers and cgroups.
	life := new(control.Lifecycle)
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	arrivals := stamp(sig)
	go func() {
		s := <-arrivals // first: stop starting work, let in-flight requests finish, write what we have
		first, second := cli.StopNotes(os.Args[1:], s.sig)
		fmt.Fprintf(os.Stderr, "\n%s\n", first)
		cancel()
		for next := <-arrivals; repeated(s, next); next = <-arrivals {
			// a copy of the first (GNU timeout's), not a second request
		}
		// second: abort at once, but leave no started target behind
		fmt.Fprintln(os.Stderr, second)
		life.Abort(5 * time.Second) // containers and cgroups a sweep made too
		os.Exit(int(cli.ExitInterrupted))
	}()
	stopProfile := profile(os.Getenv("CEILING_CPUPROFILE"))
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, life)
	cancel()
	stopProfile()
	os.Exit(int(code))
}

// arrival is a signal and when it came.
type arrival struct {
	sig os.Signal
	at  time.Time
}

// stamp passes on the signals of sig with the time each came, read as
// they come, whatever the reader of its channel is busy with.
func stamp(sig <-chan os.Signal) <-chan arrival {
	out := make(chan arrival, 8)
	go func() {
		for s := range sig {
			select {
			case out <- arrival{sig: s, at: time.Now()}:
			default: // the reader has 8 waiting: it is aborting already
			}
		}
	}()
	return out
}

// sameStop is how soon after the first signal a copy of it is the same
// request to stop, not a second one.
const sameStop = 100 * time.Millisecond

// repeated reports whether next is a copy of first rather than a second
// request: the same signal, within sameStop of it. GNU timeout sends its
// SIGTERM to the command and then to its whole process group, so the
// command gets it twice within microseconds; taken as a second signal, it
// aborted a run that should have stopped in order (ceiling k8s --apply
// then left its objects in the cluster). A person's second Ctrl-C comes
// later than that.
func repeated(first, next arrival) bool {
	return next.sig == first.sig && next.at.Sub(first.at) < sameStop
}

// profile writes a CPU profile to path when it is set: a developer's tool
// for measuring the generator (see bench/README.md), not a user feature.
func profile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ceiling: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "ceiling: cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
