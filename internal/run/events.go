package run

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// eventCommandTimeout bounds a run: command of an event.
const eventCommandTimeout = 5 * time.Minute

// stepEvents are the events of one step under way, each on a goroutine of
// its own, fired at its offset into the step's window.
type stepEvents struct {
	wg     sync.WaitGroup
	cancel context.CancelFunc
	mu     sync.Mutex
	done   []results.Event
	failed []error // required events that failed
}

// traceLead is how long before a step's first event its trace begins: the
// exchanges in flight when it fires are in its window.
const traceLead = time.Second

// traced returns st asking for the trace of its exchanges (load.Step.Trace)
// from traceLead before its first event, when it has events: what their
// recovery is measured from, to the millisecond.
func (s *Session) traced(st load.Step) load.Step {
	for i := range s.p.Events {
		ev := &s.p.Events[i]
		if !slices.Contains(ev.EventSteps(s.p.Steps()), st.Index) {
			continue
		}
		from := max(ev.At.Duration-traceLead, 0)
		if !st.Trace || from < st.TraceFrom {
			st.Trace, st.TraceFrom = true, from
		}
	}
	return st
}

// startEvents starts the plan's events of step st, whose window opens
// st.Warmup after start; base is the run's clock's origin (series times).
// An event that has not fired when the step ends does not fire.
func (s *Session) startEvents(ctx context.Context, st load.Step, start, base time.Time) *stepEvents {
	ctx, cancel := context.WithCancel(ctx)
	e := &stepEvents{cancel: cancel}
	for i := range s.p.Events {
		ev := &s.p.Events[i]
		if !slices.Contains(ev.EventSteps(s.p.Steps()), st.Index) {
			continue
		}
		e.wg.Go(func() {
			window := start.Add(st.Warmup)
			fire := window.Add(ev.At.Duration)
			select {
			case <-time.After(time.Until(fire)):
			case <-ctx.Done():
				return
			}
			at := time.Now()
			r := results.Event{Name: ev.Name, Action: cmp.Or(ev.Action, "run"), Step: st.Index, Required: ev.Required,
				AtS: at.Sub(window).Seconds(), StartS: at.Sub(base).Seconds()}
			err := s.act(ctx, ev, &r)
			r.DurationS = time.Since(at).Seconds()
			if err != nil {
				r.Error = err.Error()
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			e.done = append(e.done, r)
			if err != nil && ev.Required {
				e.failed = append(e.failed, fmt.Errorf("%w: %s: %w", failure.ErrEventFailed, ev.Name, err))
			}
		})
	}
	return e
}

// wait stops the events that have not fired, waits for those under way
// (each bounded), and returns what they did, in the order they fired, and
// the failures of required ones.
func (e *stepEvents) wait() ([]results.Event, error) {
	e.cancel()
	e.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done, errors.Join(e.failed...)
}

func eventOutcome(r *results.Event) string {
	switch {
	case r.Error != "":
		return "failed: " + r.Error
	case r.ExitCode != nil:
		return fmt.Sprintf("exit %d after %.1fs", *r.ExitCode, r.DurationS)
	case r.Handover != "":
		return fmt.Sprintf("done in %.1fs (%s)", r.DurationS, r.Handover)
	}
	return fmt.Sprintf("done in %.1fs", r.DurationS)
}

// act does an event to the watched target (or runs its command), filling
// what it did into r.
//
// An action that lasts (a pause, a CPU limit) ends early when ctx does (the
// step ended, or a Ctrl-C), and is undone on an abort (Options.Lifecycle):
// a target is never left frozen or starved.
func (s *Session) act(ctx context.Context, ev *plan.Event, r *results.Event) error {
	w := s.watch
	m := &s.p.Monitor
	switch ev.Action {
	case "":
		return s.runEvent(ctx, ev, r)
	case plan.ActionPause:
		pause, resume := func() error { return control.PauseTree(m.PID) }, func() error { return control.ResumeTree(m.PID) }
		if t := w.current(); t != nil {
			pause, resume = t.Pause, t.Resume
		}
		undo := s.o.Lifecycle.AtAbort(func() { resume() })
		defer undo()
		err := pause() // a part of the tree may have been stopped: resumed below all the same
		if err == nil {
			hold(ctx, ev.For.Duration) // the target is frozen: its requests wait, and count from their intended times
		}
		return errors.Join(err, resume())
	case plan.ActionKill, plan.ActionRestart, plan.ActionRolling:
		w.events.Lock() // one replacement of the target at a time
		defer w.events.Unlock()
		return s.replace(ev, r)
	case plan.ActionCPU:
		restore, err := control.LimitCPU(m.Cgroup, ev.CPUs)
		if err != nil {
			return err
		}
		undo := s.o.Lifecycle.AtAbort(func() { restore() })
		defer undo()
		hold(ctx, ev.For.Duration)
		return restore()
	}
	return fmt.Errorf("unknown action %q", ev.Action)
}

// replace kills, restarts or rolls the target: a command target is
// started again (and waited for until ready); a running process
// (monitor.pid) can only be killed. A rolling deploy says in r how it knew
// that the new copy was ready before it stopped the old one.
func (s *Session) replace(ev *plan.Event, r *results.Event) error {
	w := s.watch
	switch ev.Action {
	case plan.ActionKill:
		if w.current() == nil {
			return control.KillTree(s.p.Monitor.PID)
		}
		if err := w.current().Kill(); err != nil {
			return err
		}
		_, err := w.relaunch(context.Background(), nil)
		return err
	case plan.ActionRestart:
		if err := w.current().Stop(); err != nil {
			return err
		}
		_, err := w.relaunch(context.Background(), nil)
		return err
	}
	// Rolling: the new copy first, ready, then the old one goes. Both copies
	// answer the ready URL, so its answer does not say that the new one is
	// up: the new copy must also hold a listening socket of its own on the
	// ports where the old one listens.
	ports, unchecked := s.handoverPorts(w.current())
	started := time.Now()
	old, err := w.relaunch(context.Background(), ports)
	if err != nil {
		return fmt.Errorf("start the new copy (a rolling deploy needs a target that can share its port, e.g. SO_REUSEPORT): %w", err)
	}
	r.Handover = results.HandoverNotChecked + unchecked + "; the new copy was taken as ready when the ready URL answered, which the old copy answers too"
	if unchecked == "" {
		r.Handover = fmt.Sprintf("the new copy (pid %d) listened on %s itself %.0f ms after it was started; then the old one was stopped",
			w.current().PID(), portsText(ports), float64(time.Since(started))/float64(time.Millisecond))
	}
	return old.Stop()
}

// handoverPorts returns the ports on which a rolling deploy's new copy
// must listen itself before the old copy is stopped: those of the ready
// URL and of the plan's target on which the old copy's process tree holds
// a listening socket. With none, it says why the overlap cannot be
// checked: this OS cannot tell which process listens on a port, or the
// old copy's processes do not hold those sockets (a container's, or a
// proxy's in front).
func (s *Session) handoverPorts(old *control.Target) ([]int, string) {
	var want []int
	for _, u := range []string{s.p.Monitor.Ready, s.p.Target} {
		if p := urlPort(u); p > 0 && !slices.Contains(want, p) {
			want = append(want, p)
		}
	}
	if len(want) == 0 {
		return nil, "neither the ready URL nor the target names a port"
	}
	held, err := monitor.ListeningPorts(old.PID())
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, "only Linux shows which process listens on a port"
	case err != nil:
		return nil, err.Error()
	}
	ports := slices.DeleteFunc(want, func(p int) bool { return !slices.Contains(held, p) })
	if len(ports) == 0 {
		return nil, "the old copy's processes hold no listening socket on " + portsText(want)
	}
	return ports, ""
}

// portsText writes ports as "port 8080" or "ports 8080 and 8443".
func portsText(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	if len(s) == 1 {
		return "port " + s[0]
	}
	return "ports " + strings.Join(s, " and ")
}

// urlPort is the TCP port of an http(s) URL, explicit or by its scheme; 0
// when there is none.
func urlPort(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	switch u.Scheme {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	}
	return 0
}

// runEvent runs an event's command, templated with the target's pid, its
// process group and URL (shell-quoted: a URL is one word whatever it
// holds), with them in its environment too, and records its exit code and
// the tail of its output (a line that mentions a secret withheld). The pid
// is the target's own process (control.Target.PID), not the shell that
// keeps it; the group is every process its command started (the pid
// itself for a monitor.pid target, whose group is not ceiling's to know).
func (s *Session) runEvent(ctx context.Context, ev *plan.Event, r *results.Event) error {
	pid := s.p.Monitor.PID
	pgid := pid
	if w := s.watch; w != nil && w.current() != nil {
		pid, pgid = w.current().PID(), w.current().Group()
	}
	t, err := template.New(ev.Name).Option("missingkey=error").Parse(ev.Run)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	// The values go in shell-quoted, each one word whatever it holds (a
	// URL with $(...) in it runs nothing), and in the environment too.
	url, err := control.Quote(s.p.Target)
	if err != nil {
		return fmt.Errorf("run: {{.target.url}}: %w; use $CEILING_TARGET_URL", err)
	}
	var cmd bytes.Buffer
	if err := t.Execute(&cmd, map[string]any{"target": map[string]any{"pid": pid, "pgid": pgid, "url": url}}); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	log, err := os.CreateTemp("", "ceiling-event-*.log")
	if err != nil {
		return err
	}
	log.Close()
	defer os.Remove(log.Name())
	// Bounded by the step (and a Ctrl-C): a command still running when the
	// step ends is stopped, and says so.
	env := []string{"CEILING_TARGET_URL=" + s.p.Target, fmt.Sprintf("CEILING_TARGET_PID=%d", pid), fmt.Sprintf("CEILING_TARGET_PGID=%d", pgid)}
	err = control.RunCommand(ctx, control.LaunchConfig{Command: cmd.String(), Env: env, Log: log.Name(), Lifecycle: s.o.Lifecycle}, eventCommandTimeout)
	var exit *exec.ExitError
	switch {
	case err == nil:
		code := 0
		r.ExitCode = &code
	case errors.As(err, &exit):
		code := exit.ExitCode()
		r.ExitCode = &code
		err = fmt.Errorf("the command exited with %d", code)
	}
	r.Output = secret.Tail(log.Name(), 5, 1024)
	return err
}

// noteEvents records a step's events in the result and on the step; a
// target an event started again is not "exited".
func (s *Session) noteEvents(step *results.Step, done []results.Event) {
	restarted := false
	for _, e := range done {
		if s.o.OnNote != nil { // here, after the step: the progress line is not being written
			s.o.OnNote(fmt.Sprintf("event %s (%s) at %.1fs of step %d: %s", e.Name, e.Action, e.AtS, e.Step+1, eventOutcome(&e)))
		}
		s.res.Events = append(s.res.Events, e)
		step.Events = append(step.Events, e.Name)
		restarted = restarted || e.Action == plan.ActionKill || e.Action == plan.ActionRestart || e.Action == plan.ActionRolling
	}
	if restarted {
		step.Warnings = slices.DeleteFunc(step.Warnings, func(w string) bool { return strings.HasPrefix(w, "the target exited") })
	}
}

// hold waits d, or until ctx ends.
func hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
