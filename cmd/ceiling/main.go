// Command ceiling finds how far a web service goes before it falls over.
// See the README, or run `ceiling --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ceiling-dev/ceiling/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig // first: stop starting work, let in-flight requests finish, write what we have
		fmt.Fprintln(os.Stderr, "\nceiling: stopping: finishing in-flight requests and writing the result (interrupt again to abort)")
		cancel()
		<-sig // second: abort at once
		os.Exit(int(cli.ExitInterrupted))
	}()
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(int(code))
}
