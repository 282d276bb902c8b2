package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Defaults for LaunchConfig's zero values.
const (
	DefaultReadyTimeout = 30 * time.Second
	DefaultStopGrace    = 5 * time.Second
)

// readyPoll is how often Launch asks the ready URL; readyTry bounds one ask.
const (
	readyPoll = 50 * time.Millisecond
	readyTry  = 500 * time.Millisecond
)

// LaunchConfig says how to start a command target.
type LaunchConfig struct {
	// Command is run through /bin/sh -c, in its own process group; on
	// Windows through cmd.exe /d /s /c, in its own process group too (so
	// that a Ctrl-C in ceiling's console does not reach it).
	Command string
	// Argv, when set instead of Command, is a program and its arguments,
	// run directly (no shell, no quoting), in its own process group too.
	Argv []string
	// Env holds "KEY=value" entries added to ceiling's own environment.
	Env []string
	// Dir is the working folder; empty means ceiling's own.
	Dir string
	// Ready is a URL that answers (with any HTTP status) once the target is
	// ready; empty means the target is taken as ready once started.
	Ready string
	// ReadyTimeout bounds the wait for Ready; zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL; zero
	// means DefaultStopGrace. Windows has no SIGTERM: Stop kills at once.
	StopGrace time.Duration
	// Log is the file that receives the target's stdout and stderr
	// (truncated first, unless Append); empty means they are discarded.
	Log    string
	Append bool
	// Lifecycle, when set, keeps the target from its start until it is
	// stopped, so that its Abort kills it; nil: only Stop (or Kill) ends
	// it.
	Lifecycle *Lifecycle
}

// Target is a command started by Launch. Its methods are safe for
// concurrent use.
type Target struct {
	cmd   *exec.Cmd
	pid   int      // the command's own process (see PID)
	log   *os.File // nil when output is discarded
	grace time.Duration
	life  *Lifecycle // kills it at an abort until it is stopped; nil: none

	done    chan struct{} // closed once the shell has exited and been reaped
	waitErr error         // the shell's exit, valid after done
	// shell is true when Command runs through the shell (not Argv).
	shell bool
	// ending is set before ceiling signals the target to end it (Stop,
	// Kill, Lifecycle.KillAll); died says how it ended when it ended
	// without that (died.Known), valid after done.
	ending atomic.Bool
	died   Exit

	stopOnce sync.Once
	stopErr  error
}

// Launch starts c.Command and waits until c.Ready answers. If the target
// exits first, or the timeout passes, or ctx is cancelled, Launch stops
// what it started and returns an error saying which, pointing at the log.
// ctx bounds only the wait: once Launch returns, the target lives until
// Stop.
func Launch(ctx context.Context, c LaunchConfig) (*Target, error) {
	if c.Command == "" && len(c.Argv) == 0 {
		return nil, errors.New("launch target: empty command")
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.StopGrace <= 0 {
		c.StopGrace = DefaultStopGrace
	}
	t := &Target{grace: c.StopGrace, life: c.Lifecycle, done: make(chan struct{}), shell: len(c.Argv) == 0}
	var cmd *exec.Cmd
	var pids *os.File // the keeper's report of the command's own pid
	if len(c.Argv) > 0 {
		cmd = argvCommand(c.Argv)
	} else {
		cmd, pids = shellCommand(c.Command)
	}
	defer func() {
		for _, f := range cmd.ExtraFiles {
			f.Close() // the write end: the shell has its own, or did not start
		}
	}()
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Dir = c.Dir
	if c.Log != "" {
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if c.Append {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(c.Log, flags, 0o644)
		if err != nil {
			return nil, fmt.Errorf("launch target: open log: %w", err)
		}
		t.log = f
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		t.closeLog()
		if pids != nil {
			pids.Close()
		}
		return nil, fmt.Errorf("launch target: %w", err)
	}
	t.cmd, t.pid = cmd, cmd.Process.Pid
	for _, f := range cmd.ExtraFiles {
		f.Close() // so that the read sees the end when the shell closes its copy
	}
	cmd.ExtraFiles = nil
	if pid := childPID(pids); pid > 0 {
		t.pid = pid
	}
	t.life.add(t)
	go func() {
		t.waitErr = cmd.Wait()
		if !t.ending.Load() {
			t.died = exitOf(cmd.ProcessState, t.shell)
		}
		t.closeLog()
		close(t.done)
	}()
	if c.Ready == "" {
		return t, nil
	}
	if err := t.waitReady(ctx, c.Ready, c.ReadyTimeout); err != nil {
		_ = t.Stop()
		return nil, fmt.Errorf("launch target: %w; %s", err, logHint(c.Log))
	}
	return t, nil
}

func logHint(log string) string {
	if log == "" {
		return "its output was discarded (set a log file to keep it)"
	}
	return "its output is in " + log
}

// waitReady asks url every readyPoll until it answers, the target exits,
// timeout passes or ctx ends.
func (t *Target) waitReady(ctx context.Context, url string, timeout time.Duration) error {
	err := waitReady(ctx, url, timeout, t.done, func() error { return t.waitErr })
	if err != nil && !t.Exited() {
		err = fmt.Errorf("%w (it was stopped)", err)
	}
	return err
}

// WaitReady asks url every 50 ms until it gives any HTTP response, timeout
// (DefaultReadyTimeout when zero) passes, or ctx ends: for a target
// something else started (a container, a Kubernetes rollout).
func WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	return waitReady(ctx, url, timeout, nil, nil)
}

// waitReady is WaitReady that also gives up when exited is closed (the
// target's shell exited with exitErr()); a nil exited never closes.
func waitReady(ctx context.Context, url string, timeout time.Duration, exited <-chan struct{}, exitErr func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A redirect is an answer of the target's: it is not followed (to
	// another host, a 302 would make that host's answer the target's
	// readiness, or a dead host's silence its unreadiness).
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	shown := secret.URL(url) // these lines end up in CI logs
	for {
		if ready(ctx, client, url) {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("target exited (%v) before %s answered", exitText(exitErr()), shown)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("target not ready: %s did not answer within %s", shown, timeout)
			}
			return fmt.Errorf("wait for %s: %w", shown, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// RunCommand runs c.Command through the shell, as Launch starts a target
// (c.Ready is not asked), and waits for it to end: its output goes to
// c.Log. When timeout passes or ctx ends first, it stops the command's
// process tree as Stop does and says so. A command that exits non-zero is
// an error naming its exit status and the log, not the command (which may
// hold a secret): the caller says which command it was.
func RunCommand(ctx context.Context, c LaunchConfig, timeout time.Duration) error {
	c.Ready = ""
	t, err := Launch(ctx, c)
	if err != nil {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		// What the command left running in its group (a server it started
		// in the background) is the user's to stop: their teardown.
		t.life.remove(t)
		if t.waitErr != nil {
			return fmt.Errorf("%w; %s", t.waitErr, logHint(c.Log))
		}
		return nil
	case <-timer.C:
		_ = t.Stop()
		return fmt.Errorf("did not finish within %s (it was stopped); %s", timeout, logHint(c.Log))
	case <-ctx.Done():
		_ = t.Stop()
		return fmt.Errorf("%w (it was stopped)", context.Cause(ctx))
	}
}

// ready reports whether url gives any HTTP response within readyTry.
func ready(ctx context.Context, client *http.Client, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, readyTry)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return true
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func (t *Target) closeLog() {
	if t.log != nil {
		t.log.Close()
	}
}

// PID returns the process ID of the target itself: the command's own
// process (the program, when the command is one, which the shell execs;
// else the shell's child that runs it), whose tree is watched and which
// events signal. On Windows, and for Argv, the process started.
func (t *Target) PID() int { return t.pid }

// Group returns the target's process group ID (the keeper shell's pid on
// Unix), for signals to every process the command started.
func (t *Target) Group() int { return t.cmd.Process.Pid }

// Exited reports whether the target's shell has exited.
func (t *Target) Exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// Done returns a channel that is closed once the target's shell has
// exited and been reaped, whoever ended it.
func (t *Target) Done() <-chan struct{} { return t.done }

// Died says how the target ended when it ended on its own, once Done is
// closed, and whether it did: false while it runs, and when ceiling ended
// it (Stop, Kill, Lifecycle.KillAll): a target stopped at the end of a
// run, or killed by an event, did not die.
func (t *Target) Died() (Exit, bool) {
	if !t.Exited() || !t.died.Known {
		return Exit{}, false
	}
	return t.died, true
}

// Stop sends SIGTERM to the target's process group, waits up to the stop
// grace for the group to end, then sends SIGKILL to what is left. It
// returns once the shell has been reaped. A target that had already exited
// is not an error. Calling Stop again returns the first result.
//
// On Windows, Stop kills the shell (os.Process.Kill) at once: Windows has
// neither SIGTERM nor a way to signal a process group, so the processes the
// shell started are not reached and may outlive it.
func (t *Target) Stop() error {
	t.stopOnce.Do(func() {
		t.ending.Store(true)
		t.stopErr = t.stop()
		t.life.remove(t)
	})
	return t.stopErr
}
