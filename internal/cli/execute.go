package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/wsx"
)

// execute runs a validated plan and turns its outcome into an exit code:
// interrupted, a failed threshold, or success.
func execute(e *env, p *plan.Plan, o *outputFlags) error {
	res, err := runPlan(e, p, o)
	switch {
	case err != nil:
		return err
	case res.Interrupted:
		return &codedError{code: ExitInterrupted, err: errors.New("interrupted")}
	case !res.Passed:
		return &codedError{code: ExitThreshold, err: errors.New("a threshold failed")}
	}
	return nil
}

// runPlan runs a validated plan: preflight, every step, result.json after
// each, the table at the end. Its error carries the exit code.
func runPlan(e *env, p *plan.Plan, o *outputFlags) (*results.Result, error) {
	steps := stepsOf(p)
	s, err := openSession(e, p, o, len(steps), p.Strict != nil && *p.Strict)
	if err != nil {
		return nil, err
	}
	defer s.close()
	for _, st := range steps {
		if _, err := s.step(st); err != nil {
			return nil, err
		}
		if s.res.Interrupted {
			break
		}
	}
	return s.finish(nil)
}

// maxWorkers is the open model's worker cap: load.max_workers, lowered to
// http.max_connections when that is set, since each worker holds one
// connection. Zero leaves the executor's default.
func maxWorkers(p *plan.Plan) int {
	w, c := p.Load.MaxWorkers, p.HTTP.MaxConnections
	if c > 0 && (w == 0 || c < w) {
		return c
	}
	return w
}

func where(p *plan.Plan, path string) string {
	if w := p.Where(path); w != "" {
		return w
	}
	return "--" + path
}

// sockets turns the run's cumulative socket counts into per-step figures.
type sockets struct {
	last scenario.SocketTotals
}

func (k *sockets) step(set *scenario.Set) *results.Sockets {
	t, ok := set.SocketTotals()
	if !ok {
		return nil
	}
	f := &results.Sockets{
		Open: t.Open, Opened: t.Opened - k.last.Opened, Failed: t.Failed - k.last.Failed,
		Dropped: t.Dropped - k.last.Dropped, UnknownAcks: t.UnknownAcks - k.last.UnknownAcks,
		ConnectMS: t.Connect,
	}
	k.last = t
	return f
}

// openSockets opens the plan's held websocket sockets before the first step.
// Opening thousands of sockets leaves handshake garbage; collecting often
// while they open, and returning the memory afterwards, keeps ceiling's own
// footprint (which an idle soak is often about) close to what the sockets
// hold.
func openSockets(set *scenario.Set, p *plan.Plan) error {
	if !hasWebSocket(p) {
		return nil
	}
	old := debug.SetGCPercent(20)
	err := set.OpenSockets(wsx.New(p.HTTP.Insecure), 50)
	debug.SetGCPercent(old)
	debug.FreeOSMemory()
	if err != nil {
		return cannotRun("%w", err)
	}
	return nil
}

func hasWebSocket(p *plan.Plan) bool {
	for i := range p.Scenarios {
		if p.Scenarios[i].WebSocket != nil {
			return true
		}
	}
	return false
}

// socketWarnings says what went wrong with a step's sockets.
func socketWarnings(f *results.Sockets) []string {
	var w []string
	if f == nil {
		return nil
	}
	if f.Dropped > 0 {
		w = append(w, fmt.Sprintf("%d sockets dropped during the step: frames in flight on them are ws_closed failures; they were reopened with backoff", f.Dropped))
	}
	if f.Failed > 0 {
		w = append(w, fmt.Sprintf("%d socket handshakes failed", f.Failed))
	}
	if f.UnknownAcks > 0 {
		w = append(w, fmt.Sprintf("%d received frames matched no frame in flight (late acks after a timeout, or acks for ids never sent)", f.UnknownAcks))
	}
	return w
}

// describeTarget names what the run sends: the request of a one-request
// plan, or its scenarios.
func describeTarget(p *plan.Plan) string {
	if len(p.Scenarios) == 1 {
		switch sc := &p.Scenarios[0]; {
		case sc.WebSocket != nil:
			return fmt.Sprintf("websocket %s over %d sockets", p.WebSocketURL(sc.WebSocket), max(sc.WebSocket.Connections, 1))
		case len(sc.Steps) == 0:
			return sc.Request.Method + " " + p.URL(sc)
		}
	}
	names := make([]string, len(p.Scenarios))
	for i := range p.Scenarios {
		names[i] = p.Scenarios[i].Name
	}
	return fmt.Sprintf("%d scenarios (%s) against %s", len(names), strings.Join(names, ", "), p.Target)
}

// preflight sends the run's first request once before the first step: a
// target that cannot be reached at all is exit 3, not a table of errors.
func preflight(ex transport.Exchanger, set *scenario.Set, p *plan.Plan) error {
	sess := ex.Session()
	defer sess.Close()
	out, err := set.Preflight(sess)
	if err != nil {
		return badInput("preflight: %w", err)
	}
	if out.Kind.Responded() {
		return nil
	}
	hint := map[transport.Kind]string{
		transport.Refused: " (nothing is listening there)",
		transport.Timeout: " (no answer within the timeout)",
		transport.TLS:     " (use --insecure for a self-signed certificate)",
	}[out.Kind]
	return cannotRun("target unreachable: %s: %s%s", describeTarget(p), out.Kind, hint)
}

// stepsOf lists the plan's steps.
func stepsOf(p *plan.Plan) []load.Step {
	warm := time.Duration(0)
	if p.Load.Warmup != nil {
		warm = p.Load.Warmup.Duration
	}
	var steps []load.Step
	switch {
	case p.Load.Model == plan.Closed:
		for i, v := range p.Load.VUs {
			steps = append(steps, load.Step{Index: i, VUs: v, Warmup: warm, Length: p.Load.Step.Duration})
		}
	case p.Load.Ramp != nil:
		steps = append(steps, load.Step{
			Ramp:   &schedule.Linear{From: p.Load.Ramp.From, To: p.Load.Ramp.To},
			Warmup: warm, Length: p.Load.Ramp.Over.Duration,
		})
	default:
		for i, r := range p.Load.Rates {
			steps = append(steps, load.Step{Index: i, Rate: r, Warmup: warm, Length: p.Load.Step.Duration})
		}
	}
	return steps
}

func host() results.Host {
	name, _ := os.Hostname()
	return results.Host{Hostname: name, OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Version: version()}
}

// reproduce returns the command line, quoted for a POSIX shell.
func reproduce(args []string) string {
	parts := []string{"ceiling"}
	for _, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?<>|&;()[]{}#~%") {
			parts = append(parts, a)
			continue
		}
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}
