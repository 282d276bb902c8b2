package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/monitor"
)

// listenPoll is how often WaitListening looks for the listening sockets.
const listenPoll = 10 * time.Millisecond

// WaitListening waits until the target's process tree holds a listening
// socket on every one of ports (monitor.ListeningPorts), polling every 10 ms: the
// moment a new copy of a server can take connections itself, told apart
// from an old copy that shares its port. It gives up when the target
// exits, timeout passes or ctx ends. It needs Linux: elsewhere it returns
// an error matching errors.ErrUnsupported at once.
func (t *Target) WaitListening(ctx context.Context, ports []int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(listenPoll)
	defer tick.Stop()
	for {
		held, err := monitor.ListeningPorts(t.PID())
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return err
		case err == nil && containsAll(held, ports):
			return nil
		}
		select {
		case <-t.done:
			return fmt.Errorf("target exited (%v) before it listened on port %s", exitText(t.waitErr), portList(ports))
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("target did not listen on port %s within %s (it listens on %s)", portList(ports), timeout.Round(time.Millisecond), portList(held))
			}
			return fmt.Errorf("wait for port %s: %w", portList(ports), context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func containsAll(have, want []int) bool {
	for _, p := range want {
		if !slices.Contains(have, p) {
			return false
		}
	}
	return true
}

// portList writes ports as "8080" or "8080, 8443"; none as "no port".
func portList(ports []int) string {
	if len(ports) == 0 {
		return "no port"
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}
