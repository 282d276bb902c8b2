package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// Spec is a sweep of the local launcher: the shapes, how each starts the
// target (its command, environment and readiness URL, templates of the
// shape's Values), and the plan each runs.
type Spec struct {
	Configs []Config
	// Cmd starts the target, e.g. "server --port {{.port}}"; Env adds
	// "KEY=value" templates to its environment ("WORKERS={{.workers}}");
	// Ready is the URL that answers once it is up.
	Cmd   string
	Env   []string
	Ready string
	// Plan returns the (not yet validated) plan one shape runs, its target
	// rendered with the shape's values.
	Plan func(Values) (*plan.Plan, error)
	// UsersPerRPS converts throughput into estimated active users (seed
	// 004: 0.5 requests a second per attendee). Zero: 0.5.
	UsersPerRPS float64
	// Need, when set, marks the smallest shape that holds this many
	// requests a second within its verdict and SLO.
	Need float64
	// Out is sweep.json's path; each shape's result.json goes in a folder
	// beside it, named by the file's stem and the shape's ID.
	Out string
	// Command is the sweep's command line, for sweep.json (secrets
	// redacted by the caller).
	Command string
	// Run holds the options every shape's run shares (progress, version,
	// the reproduce line); Out is set per shape.
	Run run.Options
}

// Values are what a shape's templates read: {{.workers}}, {{.cpus}},
// {{.memory}} ("512Mi"), {{.memory_mb}} and {{.port}} (a free loopback
// port for this shape's target).
type Values map[string]any

// Render renders a template with v; an error names the template.
func (v Values) Render(text string) (string, error) {
	t, err := template.New("").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, map[string]any(v)); err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	return b.String(), nil
}

// values returns a shape's template values with a free port.
func values(c Config) (Values, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return Values{"workers": c.Workers, "cpus": formatCPUs(c.CPUs), "memory": formatMemory(c.MemoryMB), "memory_mb": c.MemoryMB, "port": port}, nil
}

// ParseNeed reads --need, a rate such as "1500/s" ("" is none).
func ParseNeed(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	rates, err := plan.ParseRates(strings.TrimSuffix(s, "/s"))
	if err != nil || len(rates) != 1 {
		return 0, fmt.Errorf("--need %q: want one rate such as 1500/s", s)
	}
	return rates[0], nil
}

// ErrInvalid wraps a problem with the sweep's own input (a template that
// does not render, a plan that does not validate): exit 2.
var ErrInvalid = errors.New("invalid sweep")

// Run starts the target under each shape in turn, runs the plan against
// it, stops it, and writes sweep.json after every shape, so that an
// interrupted sweep keeps every finished shape. A shape whose target never
// became ready is FAILED TO START, and the sweep goes on. It returns
// run.ErrInterrupted when ctx was cancelled.
func Run(ctx context.Context, s Spec) (*Result, error) {
	if s.UsersPerRPS <= 0 {
		s.UsersPerRPS = 0.5
	}
	r := &Result{Schema: Schema, Command: s.Command, StartedAt: time.Now().Round(0), UsersPerRPS: s.UsersPerRPS, Need: s.Need, Configs: []Row{}, Lessons: []string{}}
	dir := strings.TrimSuffix(s.Out, filepath.Ext(s.Out))
	for _, c := range s.Configs {
		row, err := s.one(ctx, c, filepath.Join(dir, c.ID(), "result.json"), r)
		if row != nil {
			r.Configs = append(r.Configs, *row)
		}
		r.judge()
		if werr := r.write(s.Out); werr != nil {
			return r, werr
		}
		if err != nil {
			if errors.Is(err, run.ErrInterrupted) {
				r.Interrupted = true
				return r, errors.Join(err, r.write(s.Out))
			}
			return r, err
		}
	}
	return r, nil
}

// one runs the plan against one shape.
func (s *Spec) one(ctx context.Context, c Config, out string, r *Result) (*Row, error) {
	v, err := values(c)
	if err != nil {
		return nil, err
	}
	p, err := s.Plan(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, c.Name(), err)
	}
	cmd, err := v.Render(s.Cmd)
	if err != nil {
		return nil, fmt.Errorf("%w: --cmd: %w", ErrInvalid, err)
	}
	env := map[string]string{}
	for _, e := range s.Env {
		k, val, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: --env %q: want KEY=value", ErrInvalid, e)
		}
		if env[k], err = v.Render(val); err != nil {
			return nil, fmt.Errorf("%w: --env: %w", ErrInvalid, err)
		}
	}
	ready, err := v.Render(s.Ready)
	if err != nil {
		return nil, fmt.Errorf("%w: --ready: %w", ErrInvalid, err)
	}
	row := &Row{Name: c.Name(), ID: c.ID(), Workers: c.Workers, CPUs: c.CPUs, MemoryMB: c.MemoryMB, Result: out}
	lim, err := NewLimits(c.ID(), c)
	switch {
	case err == nil:
		defer lim.Remove()
		cmd = lim.Prefix() + cmd
		r.Limits = "cgroup v1"
		if lim.V2() {
			r.Limits = "cgroup v2"
		}
	case errors.Is(err, ErrNoController):
		r.Limits = "not enforced: " + err.Error()
	default:
		return nil, err
	}
	p.Monitor.Command, p.Monitor.Env, p.Monitor.Ready = cmd, env, ready
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, c.Name(), err)
	}
	if lim != nil {
		p.Monitor.Cgroup = lim.Path() // watch the group: the quota is the CPU limit
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	o := s.Run
	o.Out = out
	if o.OnNote != nil {
		o.OnNote(fmt.Sprintf("shape %s: starting the target (port %v)", c.Name(), v["port"]))
	}
	sess, err := run.Open(ctx, p, o)
	if err != nil {
		var bad *run.InputError
		switch {
		case ctx.Err() != nil:
			return nil, run.ErrInterrupted
		case errors.As(err, &bad):
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, c.Name(), err)
		}
		row.State, row.Error = FailedToStart, err.Error()
		return row, nil
	}
	res, err := sess.Run(ctx)
	sess.Close()
	if res != nil {
		row.fill(res, r.UsersPerRPS)
	}
	return row, err
}

// fill takes a shape's figures from its run: the last step, the top of
// the stairs (seed 004 ran one level per shape).
func (row *Row) fill(res *results.Result, usersPerRPS float64) {
	if len(res.Steps) == 0 {
		row.State = "NO STEP"
		return
	}
	s := res.Steps[len(res.Steps)-1]
	row.Throughput, row.ErrorRate = s.Throughput, s.ErrorRate
	row.P50MS, row.P95MS, row.P99MS = s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99
	row.State, row.SLOPassed = s.Verdict, s.SLOPassed
	row.EstUsers = s.Throughput / usersPerRPS
	if row.CPUs > 0 {
		row.PerCPU = s.Throughput / row.CPUs
	}
	if t := s.Target; t != nil {
		row.CPUPct, row.RSSMB = t.CPUPct, t.RSSMaxMB
	}
	if res.Interrupted {
		row.State = "INTERRUPTED"
	}
}
