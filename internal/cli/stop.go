package cli

import (
	"context"
	"io"
	"os"
	"syscall"
)

// stopping says what the first signal does to the commands that run load
// (ceiling run, find, sweep, demo, and k8s --apply, which follows one),
// and aborted what a second one leaves behind. The other commands serve
// (demo-target, mock, agent) or end soon: they just stop.
var (
	stopping = map[string]string{
		"run": "finishing in-flight requests and writing the result", "find": "finishing in-flight requests and writing the result",
		"sweep": "finishing in-flight requests and writing the results", "demo": "finishing in-flight requests and writing the result",
		"k8s": "deleting the objects it created",
	}
	aborted = map[string]string{
		"run": "the result holds the steps written so far", "find": "the result holds the steps written so far",
		"sweep": "the results hold the steps written so far", "demo": "the result holds the steps written so far",
		"k8s": "the objects it created may remain",
	}
)

// StopNotes are the lines ceiling prints on stderr for the command line
// args (without the program name) at its first interrupt or termination
// signal sig, and at a second one, which aborts: what the command does
// when stopped, and how to abort it. A SIGTERM comes from a supervisor
// (ceiling stopping a target it started, a container runtime), not from
// someone at a keyboard: its note does not ask to interrupt again.
func StopNotes(args []string, sig os.Signal) (first, second string) {
	root := newRoot(&env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard})
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		c = root
	}
	who := c.CommandPath()
	first = who + ": stopping"
	if sig == syscall.SIGTERM {
		first = who + ": terminated, stopping"
	}
	if what := stopping[c.Name()]; what != "" {
		first += ": " + what
	}
	if sig == syscall.SIGTERM {
		first += " (a second signal aborts)"
	} else {
		first += " (interrupt again to abort)"
	}
	second = who + ": aborted"
	if what := aborted[c.Name()]; what != "" {
		second += "; " + what
	}
	return first, second
}
