package sweep

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
)

// A Launcher starts the target under one shape and stops it after the
// shape's run. Three do: Local (a command in a cgroup), Container (docker
// or podman run) and Commands (the user's own apply and teardown, for
// Kubernetes and anything else).
type Launcher interface {
	// Start readies the target for shape c, its templates rendered with
	// v: it brings the target up and waits until it is ready, or sets
	// p.Monitor so that the run does. dir is the shape's folder, for logs.
	// What it starts or makes that must not outlive an abort (a second
	// Ctrl-C: a command, a container, a cgroup) it gives to life, which
	// may be nil (nothing is kept). The stop it returns (never nil once Start succeeds) undoes what
	// Start did and is called when the run is over; Enforced says how the
	// shape's CPU and memory are enforced. An error that is a *failure.InputError is
	// the sweep's own input (a template that does not render); any other
	// is the shape's target not starting.
	Start(ctx context.Context, c Config, v Values, p *plan.Plan, dir string, life *control.Lifecycle) (stop func() error, e Enforced, err error)
}

// Enforced says how a shape's limits were applied.
type Enforced struct {
	// How says by what: "cgroup v1", "docker --cpus and --memory", "no
	// cgroup (why): CPU by affinity ...", "set by the apply command".
	How string
	// CPUs is the CPU time the target could use, in cores: the shape's,
	// whole CPUs by affinity (0.5 pinned to one CPU is 1), or 0 when
	// nothing limited it. Throughput per CPU and scaling are taken on it.
	CPUs float64
	// Group is the cgroup that enforces them (the local launcher's), whose
	// memory controller says whether a target that died was OOM-killed;
	// nil without one.
	Group *Limits
}

// Target is what every launcher shares: the target's environment and how
// to tell it is ready, all templates of the shape's Values.
type Target struct {
	// Env adds KEY: template entries to the target's environment
	// (WORKERS: "{{.workers}}").
	Env map[string]string
	// Ready is a URL that answers once the target is up.
	Ready string
	// ReadyTimeout bounds the wait for Ready (control's default when zero).
	ReadyTimeout time.Duration
}

// render renders the environment and the ready URL.
func (t *Target) render(v Values) (env map[string]string, ready string, err error) {
	env = make(map[string]string, len(t.Env))
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		if env[k], err = v.Render(t.Env[k]); err != nil {
			return nil, "", invalid("env %s: %w", k, err)
		}
	}
	if ready, err = v.Render(t.Ready); err != nil {
		return nil, "", invalid("ready: %w", err)
	}
	return env, ready, nil
}

// invalid is a problem with the sweep's own input (a template that does
// not render, a plan that does not validate, a sweep file or a flag): a
// *failure.InputError (exit 2), its message "invalid sweep: " and what
// format says.
func invalid(format string, args ...any) error {
	return &failure.InputError{Err: fmt.Errorf("invalid sweep: %w", fmt.Errorf(format, args...))}
}

// Local starts the target as a command on this machine (the plan's
// monitor.command, which the run starts, watches and stops with its
// process tree), in a new cgroup with the shape's CPU quota and memory
// limit. Without a usable cgroup controller it pins the command to whole
// CPUs by affinity (Linux, with taskset) and leaves memory unenforced.
type Local struct {
	Target
	// Command starts the target, through sh -c: the shell that runs it
	// has moved itself into the shape's group (or onto its CPUs) first.
	Command string
}

// Start implements Launcher.
func (l *Local) Start(_ context.Context, c Config, v Values, p *plan.Plan, _ string, life *control.Lifecycle) (func() error, Enforced, error) {
	cmd, err := v.Render(l.Command)
	if err != nil {
		return nil, Enforced{}, invalid("command: %w", err)
	}
	env, ready, err := l.render(v)
	if err != nil {
		return nil, Enforced{}, err
	}
	stop, e := func() error { return nil }, Enforced{How: "cgroup v1", CPUs: c.CPUs}
	lim, err := NewLimits(c.ID(), c)
	switch {
	case err == nil:
		unregister := life.AtAbort(func() { lim.Remove() })
		stop = func() error {
			// Removed before the abort forgets it: a second Ctrl-C
			// during this removal still removes the group (both wait
			// for its processes to die; the second finds it gone).
			defer unregister()
			return lim.Remove()
		}
		cmd = lim.Prefix() + "sh -c " + shellQuote(cmd)
		p.Monitor.Cgroup = lim.Path() // watch the group: its quota is the CPU limit
		e.Group = lim
		if lim.V2() {
			e.How = "cgroup v2"
		}
	case errors.Is(err, ErrNoController):
		prefix, cpus, why := pin(c.CPUs)
		if prefix != "" {
			cmd = prefix + "sh -c " + shellQuote(cmd)
		}
		e = Enforced{How: "no cgroup (" + err.Error() + "): " + why, CPUs: cpus}
	default:
		return nil, Enforced{}, err
	}
	p.Monitor.Command, p.Monitor.Env, p.Monitor.Ready = cmd, env, ready
	if l.ReadyTimeout > 0 {
		p.Monitor.ReadyTimeout.Duration = l.ReadyTimeout
	}
	return stop, e, nil
}

// Commands brings the target up with the user's own commands, templates
// of the shape's Values: Apply (helm upgrade ... --set
// resources.limits.cpu={{.cpus}}, then a rollout wait), and Teardown after
// the run. ceiling does not enforce the limits: the user's tooling does.
// The target's figures come from the plan's monitor section (its
// Prometheus endpoint, say), as in any run.
type Commands struct {
	Target
	Apply, Teardown string
	// Timeout bounds each of Apply and Teardown; 10 minutes when zero.
	Timeout time.Duration
}

// Start implements Launcher.
func (k *Commands) Start(ctx context.Context, c Config, v Values, p *plan.Plan, dir string, life *control.Lifecycle) (func() error, Enforced, error) {
	apply, err := v.Render(k.Apply)
	if err != nil {
		return nil, Enforced{}, invalid("apply: %w", err)
	}
	teardown, err := v.Render(k.Teardown)
	if err != nil {
		return nil, Enforced{}, invalid("teardown: %w", err)
	}
	env, ready, err := k.render(v)
	if err != nil {
		return nil, Enforced{}, err
	}
	timeout := k.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	run := func(ctx context.Context, what, command string) error {
		if command == "" {
			return nil
		}
		return control.RunCommand(ctx, control.LaunchConfig{Command: command, Env: envList(env), Log: filepath.Join(dir, what+".log"), Lifecycle: life}, timeout)
	}
	stop := func() error {
		// The run may have been interrupted: tear down all the same, within
		// the timeout. (An abort, a second Ctrl-C, does not wait for it.)
		if err := run(context.Background(), "teardown", teardown); err != nil {
			return fmt.Errorf("teardown: %w", err)
		}
		return nil
	}
	if err := run(ctx, "apply", apply); err != nil {
		return nil, Enforced{}, errors.Join(fmt.Errorf("apply: %w", err), stop())
	}
	if ready != "" {
		if err := control.WaitReady(ctx, ready, k.ReadyTimeout); err != nil {
			return nil, Enforced{}, errors.Join(err, stop())
		}
	}
	return stop, Enforced{How: "set by the apply command (not checked by ceiling)", CPUs: c.CPUs}, nil
}

// Container runs the target as a container of Image with docker or podman
// (Engine), published on the shape's loopback port, with --cpus and
// --memory (and --memory-swap, so that the limit is not stretched by swap)
// set from the shape; it removes the container after the run. On Linux the
// run watches the container's processes (their CPU, memory and CPU quota)
// from the host.
type Container struct {
	Target
	// Engine is the command: "docker" or "podman".
	Engine string
	Image  string
	// Port is the port the target listens on inside the container,
	// published as 127.0.0.1:{{.port}}.
	Port int
	// Args follow the image on the run command line (templates).
	Args []string
}

// containerTimeout bounds each docker or podman command.
const containerTimeout = 2 * time.Minute

// Start implements Launcher.
func (k *Container) Start(ctx context.Context, c Config, v Values, p *plan.Plan, dir string, life *control.Lifecycle) (func() error, Enforced, error) {
	env, ready, err := k.render(v)
	if err != nil {
		return nil, Enforced{}, err
	}
	args := make([]string, len(k.Args))
	for i, a := range k.Args {
		if args[i], err = v.Render(a); err != nil {
			return nil, Enforced{}, invalid("args[%d]: %w", i, err)
		}
	}
	name := "ceiling-" + c.ID() + "-" + suffix()
	engine := cmp.Or(k.Engine, "docker")
	run := func(ctx context.Context, log string, argv ...string) error {
		return control.RunCommand(ctx, control.LaunchConfig{Argv: argv, Env: envList(env), Log: log, Lifecycle: life}, containerTimeout)
	}
	log := filepath.Join(dir, "target.log")
	remove := func(ctx context.Context) error {
		if err := run(ctx, filepath.Join(dir, "rm.log"), engine, "rm", "-f", name); err != nil {
			return fmt.Errorf("%s rm -f %s: %w", engine, name, err)
		}
		return nil
	}
	unregister := life.AtAbort(func() { _ = remove(context.Background()) })
	stop := func() error {
		// Keep the container's output (when the engine still has it), then
		// remove the container, stopping it.
		defer unregister()
		if run(context.Background(), log+".part", engine, "logs", name) == nil {
			os.Rename(log+".part", log)
		}
		return remove(context.Background())
	}
	if err := run(ctx, filepath.Join(dir, "run.log"), k.runArgs(engine, name, c, v, env, args)...); err != nil {
		return nil, Enforced{}, errors.Join(fmt.Errorf("%s run: %w", engine, err), stop())
	}
	if ready != "" {
		wctx, cancel := context.WithCancelCause(ctx)
		go k.watchExit(wctx, cancel, engine, name, dir, life)
		err := control.WaitReady(wctx, ready, k.ReadyTimeout)
		cancel(nil)
		if err != nil {
			return nil, Enforced{}, errors.Join(fmt.Errorf("%w; the container's output is in %s", err, log), stop())
		}
	}
	e := Enforced{How: engine + " --cpus and --memory", CPUs: c.CPUs}
	if runtime.GOOS == "linux" {
		if pid, err := containerPID(ctx, engine, name, dir, life); err == nil {
			p.Monitor.PID = pid
		} else {
			e.How += " (its CPU and memory not watched: " + err.Error() + ")"
		}
	}
	return stop, e, nil
}

// watchExit asks the engine every second whether the container still
// runs, and cancels ctx when it has exited: its target will never be
// ready, and the wait need not last its whole timeout.
func (k *Container) watchExit(ctx context.Context, cancel context.CancelCauseFunc, engine, name, dir string, life *control.Lifecycle) {
	out := filepath.Join(dir, "state.txt")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := control.RunCommand(ctx, control.LaunchConfig{Argv: []string{engine, "inspect", "--format", "{{.State.Running}}", name}, Log: out, Lifecycle: life}, containerTimeout)
		if data, _ := os.ReadFile(out); err == nil && strings.TrimSpace(string(data)) == "false" {
			cancel(errors.New("the container exited"))
			return
		}
	}
}

// runArgs is the command that starts the container, detached (not --rm:
// a container that exits at once keeps its output for the log). The
// environment's values stay off the command line: -e NAME takes each from
// the environment of docker (or podman) itself.
func (k *Container) runArgs(engine, name string, c Config, v Values, env map[string]string, args []string) []string {
	line := []string{engine, "run", "-d", "--name", name, "-p", fmt.Sprintf("127.0.0.1:%v:%d", v["port"], k.Port)}
	if c.CPUs > 0 {
		line = append(line, "--cpus", formatCPUs(c.CPUs))
	}
	if c.MemoryMB > 0 {
		m := strconv.Itoa(c.MemoryMB) + "m"
		line = append(line, "--memory", m, "--memory-swap", m)
	}
	for _, key := range slices.Sorted(maps.Keys(env)) {
		line = append(line, "-e", key)
	}
	return append(append(line, k.Image), args...)
}

// containerPID asks the engine for the host PID of the container's first
// process, and checks that this PID is the container's here: in a cgroup
// named by the container's ID. It is not when ceiling runs in another PID
// namespace than the engine (in a container itself, or against Docker
// Desktop's virtual machine), and watching it would measure some other
// process.
func containerPID(ctx context.Context, engine, name, dir string, life *control.Lifecycle) (int, error) {
	out := filepath.Join(dir, "inspect.txt")
	if err := control.RunCommand(ctx, control.LaunchConfig{Argv: []string{engine, "inspect", "--format", "{{.State.Pid}} {{.Id}}", name}, Log: out, Lifecycle: life}, containerTimeout); err != nil {
		return 0, fmt.Errorf("%s inspect: %w", engine, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	pid := 0
	if len(f) == 2 {
		pid, _ = strconv.Atoi(f[0])
	}
	if len(f) != 2 || pid <= 0 || len(f[1]) < 12 {
		return 0, fmt.Errorf("%s inspect gave no PID and ID: %q", engine, strings.TrimSpace(string(data)))
	}
	cg, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil || !strings.Contains(string(cg), f[1]) {
		return 0, fmt.Errorf("PID %d is not the container's in this PID namespace (ceiling in a container, or the engine in a VM)", pid)
	}
	return pid, nil
}

// envList turns an environment map into KEY=value entries, sorted.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// suffix is a short random name part, so that two sweeps never share a
// container.
func suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
