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
	"github.com/ceiling-dev/ceiling/internal/monitor"
)

func main() {
	// life holds what the commands start that must not outlive ceiling:
	// the targets, their commands, a sweep's containers and cgroups.
	life := new(monitor.Lifecycle)
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig // first: stop starting work, let in-flight requests finish, write what we have
		first, second := cli.StopNotes(os.Args[1:], s)
		fmt.Fprintf(os.Stderr, "\n%s\n", first)
		cancel()
		<-sig // second: abort at once, but leave no started target behind
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
