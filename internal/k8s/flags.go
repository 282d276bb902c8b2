package k8s

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/inputfile"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// Flags are `ceiling k8s`'s flags.
type Flags struct {
	Name, Namespace, Image string
	Agents                 int
	CPU, Memory            string
	Find                   bool
	TokenFile              string
	AgentsTimeout          time.Duration
	Deadline, TTL, Hold    time.Duration
	NetworkPolicy          bool
	// Apply creates the objects and waits for the result, rather than
	// printing them; Kubeconfig and Out go with it, and Wide: the table
	// printed then has every column, however narrow the terminal.
	Apply           bool
	Kubeconfig, Out string
	Wide            bool

	fs *pflag.FlagSet // Register's, which says where "--" was
}

// The command's help, next to its flags'.
const (
	Use   = "k8s PLAN.yaml --agents N [-- COORDINATOR FLAGS]"
	Short = "Print (or --apply) the Kubernetes objects that run a plan with N agents and a coordinator"
	Long  = `Print (or --apply) the Kubernetes objects that run a plan with N agents and a
coordinator: a Secret with the plan, a Secret with the token, a headless
Service, a NetworkPolicy that lets only the coordinator reach the agents, an
Indexed Job of agents (ceiling agent --once) and a coordinator Job
(docs/distributed.md).

--image is required: no image of ceiling is published; build one with the
repository's Dockerfile and give its name as the cluster's nodes pull it.
The plan's target must be reachable from the pods: a loopback target
(127.0.0.1, localhost, ::1) is refused. Both Jobs end by --deadline,
finished or not, and are deleted --ttl after they finish.`
	Example = `  ceiling k8s plan.yaml --agents 3 --image registry.example/ceiling:v1 | kubectl apply -f -
  ceiling k8s plan.yaml --agents 3 --image registry.example/ceiling:v1 --find --apply -- --start 50`
)

// Register adds the flags to fs, and keeps fs to find "--" in Run's
// arguments.
func (f *Flags) Register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.IntVar(&f.Agents, "agents", 0, "how many agents share the load (an Indexed Job of that many pods)")
	fs.StringVar(&f.Name, "name", "ceiling", "prefix of the objects' names, and their app.kubernetes.io/instance label")
	fs.StringVar(&f.Namespace, "namespace", "", "namespace of the objects (default: none written; with --apply, the kubeconfig's)")
	fs.StringVar(&f.Image, "image", "", "ceiling's container image, as the cluster's nodes pull it (required: none is published; the repository's Dockerfile builds it)")
	fs.StringVar(&f.CPU, "cpu", "1", "each agent's CPU, requested and its limit (a quantity: 2, 500m; \"\": none)")
	fs.StringVar(&f.Memory, "memory", "512Mi", "each agent's memory, requested and its limit (a quantity: 1Gi; \"\": none)")
	fs.BoolVar(&f.Find, "find", false, "the coordinator runs find, not run (give find's flags after --)")
	fs.StringVar(&f.TokenFile, "token-file", "", "file holding the agents' token (default: 32 random bytes, hex)")
	fs.DurationVar(&f.AgentsTimeout, "agents-timeout", defaultAgentsTimeout, "how long the coordinator waits for every agent to answer")
	fs.DurationVar(&f.Deadline, "deadline", DefaultDeadline, "the cluster stops each Job's pods this long after it started, finished or not (activeDeadlineSeconds)")
	fs.DurationVar(&f.TTL, "ttl", DefaultTTL, "the cluster deletes each Job, its pods and logs this long after it finished (ttlSecondsAfterFinished)")
	fs.DurationVar(&f.Hold, "hold-result", DefaultHold, "the coordinator keeps result.json served this long after the run, until it is fetched (--apply fetches it at once; 0: the log only)")
	fs.BoolVar(&f.NetworkPolicy, "network-policy", true, "add a NetworkPolicy that lets only the coordinator's pod reach the agents (false: leave it out)")
	fs.BoolVar(&f.Apply, "apply", false, "create the objects, follow the coordinator's log, write its result, delete them")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "with --apply: kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.Out, "out", "result.json", "with --apply: where to write result.json")
	fs.BoolVar(&f.Wide, "wide", false, "with --apply: print every column of the table, however narrow the terminal")
}

// Options builds the Options of a command line: args are the command's
// arguments, the plan file then, after "--", the coordinator's own flags;
// dash is how many arguments came before "--" (cobra's ArgsLenAtDash), -1
// when there was none. The plan is read and validated here, so that a
// wrong plan fails before anything is deployed, and so is any path in it
// that names the machine ceiling k8s runs on (a data file, a process, a
// cgroup, a command to start) and any loopback target (loopbackTargets):
// the pods could not reach them. Every problem is said at once.
func (f *Flags) Options(args []string, dash int) (Options, error) {
	extra := []string(nil)
	if dash >= 0 {
		args, extra = args[:dash], args[dash:]
	}
	if len(args) != 1 {
		return Options{}, fmt.Errorf("k8s: want one plan file, then the coordinator's flags after --, not %q", args)
	}
	data, err := plan.ReadLimited(args[0])
	if err != nil {
		return Options{}, fmt.Errorf("read plan: %w", err)
	}
	p, err := plan.Parse(args[0], data)
	if err != nil {
		return Options{}, err
	}
	unreachable := errors.Join(local(p), loopbackTargets(p, extra))
	token, err := f.token()
	if err != nil {
		return Options{}, errors.Join(unreachable, err)
	}
	o := Options{
		Name: f.Name, Namespace: f.Namespace, Image: f.Image, Agents: f.Agents, CPU: f.CPU, Memory: f.Memory,
		Find: f.Find, Args: extra, Plan: data, PlanName: filepath.Base(args[0]), SecretHeaders: p.HTTP.SecretHeaders, Token: token, AgentsTimeout: f.AgentsTimeout,
		Deadline: f.Deadline, TTL: f.TTL, NetworkPolicy: f.NetworkPolicy, Hold: f.Hold,
	}
	if f.Hold == 0 {
		o.Hold = -1 // not held
	}
	if !f.Find { // a search's length is not known before it runs
		if err := withFlags(p, extra); err != nil {
			return Options{}, errors.Join(unreachable, err)
		}
		o.PlanLoad = p.Duration()
	}
	return o, errors.Join(unreachable, o.validate())
}

// withFlags applies to p the coordinator's flags after "--" that shape its
// load (--rate, --vus, --step, --warmup, --repeat), as `ceiling run` will
// apply them, so that the plan's length counts them: --repeat 50 --step
// 10m makes a plan of hours. Other flags are left to the coordinator.
func withFlags(p *plan.Plan, extra []string) error {
	if len(extra) == 0 {
		return nil
	}
	var q plan.Quick
	fs := pflag.NewFlagSet("coordinator", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.StringVar(&q.Rate, "rate", "", "")
	fs.StringVar(&q.VUs, "vus", "", "")
	fs.StringVar(&q.Step, "step", "", "")
	fs.StringVar(&q.Warmup, "warmup", "", "")
	fs.IntVar(&q.Repeat, "repeat", 1, "")
	if err := fs.Parse(extra); err != nil {
		return fmt.Errorf("coordinator flags: %w", err)
	}
	if err := p.Apply(&q, fs.Changed); err != nil {
		return fmt.Errorf("coordinator flags: %w", err)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("coordinator flags: %w", err)
	}
	return nil
}

// local returns the keys of p that refer to the machine the plan is read
// on, which no pod can see.
func local(p *plan.Plan) error {
	var errs []error
	for _, k := range []struct {
		path string
		set  bool
	}{
		{"data.users", p.Data.Users != ""},
		{"monitor.pid", p.Monitor.PID != 0},
		{"monitor.command", p.Monitor.Command != ""},
		{"monitor.cgroup", p.Monitor.Cgroup != ""},
	} {
		if k.set {
			errs = append(errs, fmt.Errorf("%s: %s: names something on this machine, which the pods cannot reach: leave it out of a plan run in Kubernetes",
				p.Where(k.path), k.path))
		}
	}
	for _, path := range p.BodyFiles() {
		errs = append(errs, fmt.Errorf("%s: %s: names a file on this machine, which the pods cannot reach: put the body in the plan (body or json)", p.Where(path), path))
	}
	return errors.Join(errs...)
}

// maxTokenFileBytes bounds --token-file: a token is a line.
const maxTokenFileBytes = 64 << 10

// token reads --token-file (at most maxTokenFileBytes), or makes a token of 32 random bytes.
func (f *Flags) token() (string, error) {
	if f.TokenFile == "" {
		b := make([]byte, 32)
		rand.Read(b) // never fails: crypto/rand crashes the program instead
		return hex.EncodeToString(b), nil
	}
	data, err := inputfile.Read(context.Background(), f.TokenFile, maxTokenFileBytes)
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("read token: %s is empty", f.TokenFile)
	}
	return token, nil
}

// Run is `ceiling k8s`. args are the command's arguments: the plan
// file, then the coordinator's own flags after "--" (where Register's flag
// set saw it). Without --apply, Run prints the objects on stdout, for
// `kubectl apply -f -`, and what to do with them on stderr, and returns
// nil, nil. With --apply, it checks that Out can be written, connects to
// the cluster (connect), runs Apply with its progress on stderr, writes the
// result to Out and returns it, with a nil error; the caller shows it and
// exits as `ceiling run` would.
//
// Errors: a wrong command line, plan or token is a *failure.InputError
// (nothing was deployed); a cancelled ctx is failure.ErrInterrupted, once Run
// has said on stderr what Apply could not delete; anything else is a run
// that could not be carried out.
func (f *Flags) Run(ctx context.Context, args []string, stdout, stderr io.Writer) (*results.Result, error) {
	dash := -1
	if f.fs != nil {
		dash = f.fs.ArgsLenAtDash()
	}
	o, err := f.Options(args, dash)
	if err != nil {
		return nil, &failure.InputError{Err: err}
	}
	if !f.Apply {
		fmt.Fprintf(stderr, "ceiling: %s\n", o.Hint())
		m, _ := Manifests(o) // Options validated o
		return nil, Write(stdout, m.List()...)
	}
	if err := results.Writable(f.Out); err != nil {
		return nil, err
	}
	c, namespace, err := connect(f.Kubeconfig)
	if err != nil {
		return nil, err
	}
	o.Namespace = cmp.Or(o.Namespace, namespace)
	a := newApplier(c, stderr)
	res, err := a.apply(ctx, o)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "ceiling: %v\n", err) // what it could not delete; an interrupted run prints nothing more
		return nil, failure.ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	if a.raw != nil {
		// The coordinator's own file, byte for byte, as its checksum says.
		if err := results.WriteFile(f.Out, a.raw, results.Public); err != nil {
			return nil, fmt.Errorf("write result: %w", err)
		}
	} else if err := results.Write(f.Out, res, results.Public); err != nil {
		return nil, err // a result is returned only once written
	}
	return res, nil
}

// Hint says where the token is and what to do with the printed objects.
func (o *Options) Hint() string {
	h := fmt.Sprintf("the plan is in secret/%s, key \"plan.yaml\"; the agents' token in secret/%s, key \"token\"\napply: %s; follow the run: %s; delete: %s",
		o.planName(), o.tokenName(), o.kubectl("apply -f FILE"), o.kubectl("logs -f job/"+o.coordinatorName()), o.deleteCommand())
	if hold := o.hold(); hold > 0 {
		h += fmt.Sprintf("\nthe result: the coordinator holds result.json %v after the run on its port %d: %s, then GET and DELETE http://127.0.0.1:%d%s with the token in the %s header (docs/distributed.md)",
			hold, results.HeldPort, o.kubectl(fmt.Sprintf("port-forward job/%s %d", o.coordinatorName(), results.HeldPort)), results.HeldPort, results.HeldPath, results.HeldTokenHeader)
	}
	return h
}
