package k8s

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Options say what to deploy: a plan, run by Agents agents and one
// coordinator.
type Options struct {
	// Name prefixes every object's name (NAME-plan, NAME-token,
	// NAME-agents for the Service and the agents' Job, NAME-coordinator)
	// and labels them all (app.kubernetes.io/instance=NAME). A DNS-1035
	// label: lower-case letters, digits and '-', starting with a letter.
	Name string
	// Namespace of every object. Empty: none is written, so that the
	// objects go where kubectl applies them, and the coordinator reaches
	// the agents by names relative to its own namespace.
	Namespace string
	// Image is ceiling's container image, for the agents and the
	// coordinator (its entry point is the ceiling binary), as the
	// cluster's nodes can pull it. Required: no image is published, the
	// repository's Dockerfile builds it.
	Image string
	// Agents is how many agents share the load; at least 1.
	Agents int
	// CPU and Memory are each agent's requests and limits (equal, so that
	// an agent gets what it asked for), as Kubernetes quantities: "2",
	// "500m", "1Gi". Empty: none.
	CPU, Memory string
	// Find makes the coordinator run `ceiling find`, not `ceiling run`.
	Find bool
	// Args are more flags of the coordinator's command, after those
	// Manifests sets: "--start", "50".
	Args []string
	// Plan is the plan file's contents, mounted as plan.yaml.
	Plan []byte
	// PlanName is the plan file's name, kept in an annotation of the
	// plan's Secret. Empty: none.
	PlanName string
	// SecretHeaders are the plan's http.secret_headers: a --header in
	// Args that names one holds a secret (secret.Names).
	SecretHeaders []string
	// Token is the secret the coordinator and the agents share.
	Token string
	// AgentsTimeout is how long the coordinator waits for every agent to
	// answer its health check. Zero: 5 minutes.
	AgentsTimeout time.Duration
	// Deadline bounds each Job's run (activeDeadlineSeconds): past it,
	// the cluster stops its pods and fails it, so that agents no
	// coordinator reaches do not hold their CPUs for ever. It must leave
	// room for the agents' wait and the plan's load (PlanLoad). Zero:
	// DefaultDeadline.
	Deadline time.Duration
	// TTL is how long a finished Job (with its pods and their logs) is
	// kept before the cluster deletes it (ttlSecondsAfterFinished). Zero:
	// DefaultTTL.
	TTL time.Duration
	// PlanLoad is how long the plan's load lasts (plan.Plan.Duration, with
	// the coordinator's flags in Args that shape it: --rate, --step,
	// --repeat...), checked against Deadline; zero: not known (a search).
	PlanLoad time.Duration
	// Hold is how long the coordinator keeps result.json served after the
	// run (its --hold-result), until a client fetches and releases it:
	// Apply does at once; by hand, kubectl port-forward and curl
	// (docs/distributed.md). Zero: DefaultHold; negative: not held (the
	// log only).
	Hold time.Duration
	// NetworkPolicy adds a NetworkPolicy that lets only the coordinator's
	// pod reach the agents' port, and nothing else reach the agents' pods.
	NetworkPolicy bool
}

// The paths, port and flags the objects share with the ceiling image.
const (
	// Port is the agents' port.
	Port = 7070
	// PlanPath and TokenPath are where the plan and the token are mounted
	// in every container.
	PlanPath  = "/etc/ceiling/plan/plan.yaml"
	TokenPath = "/etc/ceiling/token/token"
	// outPath is where the coordinator writes result.json, in an emptyDir:
	// the root file system is read-only.
	outPath = "/tmp/result.json"
	// defaultAgentsTimeout is Options.AgentsTimeout's zero.
	defaultAgentsTimeout = 5 * time.Minute
	// DefaultDeadline is Options.Deadline's zero: a run's Jobs end within
	// two hours, finished or not.
	DefaultDeadline = 2 * time.Hour
	// DefaultTTL is Options.TTL's zero: a finished run's Jobs, pods and
	// logs are kept a day.
	DefaultTTL = 24 * time.Hour
	// DefaultHold is Options.Hold's zero: the coordinator keeps the result
	// a quarter of an hour for a client to fetch.
	DefaultHold = 15 * time.Minute
	// idleMargin is how much longer than the coordinator's wait for them
	// the agents wait for its session (--idle-timeout): the coordinator's
	// pod may start after theirs.
	idleMargin = 5 * time.Minute
)

// ownFlags are the coordinator's flags that Manifests sets itself: Args
// may not repeat them.
var ownFlags = []string{"--agents", "--token-file", "--agents-timeout", "--out", "--emit-result", "--hold-result"}

// The objects' names (the NetworkPolicy is the agents').
func (o *Options) planName() string        { return o.Name + "-plan" }
func (o *Options) tokenName() string       { return o.Name + "-token" }
func (o *Options) agentsName() string      { return o.Name + "-agents" }
func (o *Options) coordinatorName() string { return o.Name + "-coordinator" }

// AgentAddrs returns each agent's host:port, as the coordinator dials it.
// An Indexed Job names the hostname of its pod of index i JOB-i, and a pod
// whose subdomain is a headless Service's name resolves as
// HOSTNAME.SERVICE.NAMESPACE.svc (the agents' Job and Service are both
// NAME-agents). Without a namespace the name is HOSTNAME.SERVICE, which
// the coordinator's resolver completes with its own namespace's search
// domain.
func (o *Options) AgentAddrs() []string {
	addrs := make([]string, o.Agents)
	for i := range addrs {
		host := fmt.Sprintf("%s-%d.%s", o.agentsName(), i, o.agentsName())
		if o.Namespace != "" {
			host += "." + o.Namespace + ".svc"
		}
		addrs[i] = host + ":" + strconv.Itoa(Port)
	}
	return addrs
}

// command returns the coordinator's arguments (after the image's entry
// point).
func (o *Options) command() []string {
	cmd := "run"
	if o.Find {
		cmd = "find"
	}
	args := []string{cmd, PlanPath,
		"--agents", strings.Join(o.AgentAddrs(), ","),
		"--token-file", TokenPath,
		"--agents-timeout", o.agentsTimeout().String(),
		"--out", outPath,
		"--emit-result",
	}
	if hold := o.hold(); hold > 0 {
		args = append(args, "--hold-result", hold.String())
	}
	extra := slices.Clone(o.Args)
	for _, i := range o.secretArgs() {
		extra[i] = "$(" + argEnv(i) + ")" // the kubelet puts the Secret's value in
	}
	return append(args, extra...)
}

// secretArgs returns the indexes of the arguments of Args that hold a
// secret: those that ceiling redacts wherever it writes a command line
// (secret.Names.Args), such as --header 'Authorization: ...', the value of
// --password, a URL with a password.
func (o *Options) secretArgs() []int {
	var idx []int
	for i, a := range secret.Names(o.SecretHeaders).Args(o.Args) {
		if a != o.Args[i] {
			idx = append(idx, i)
		}
	}
	return idx
}

// agentsTimeout is AgentsTimeout, or its default.
func (o *Options) agentsTimeout() time.Duration {
	if o.AgentsTimeout > 0 {
		return o.AgentsTimeout
	}
	return defaultAgentsTimeout
}

// deadline is Deadline, or its default.
func (o *Options) deadline() time.Duration {
	if o.Deadline > 0 {
		return o.Deadline
	}
	return DefaultDeadline
}

// hold is Hold, or its default; 0 when the result is not held.
func (o *Options) hold() time.Duration {
	switch {
	case o.Hold < 0:
		return 0
	case o.Hold == 0:
		return DefaultHold
	}
	return o.Hold
}

// agentsIdle is how long an agent waits for the coordinator's session
// before it gives up (agent --idle-timeout): the coordinator's own wait
// for the agents and a margin for its pod to start.
func (o *Options) agentsIdle() time.Duration {
	return o.agentsTimeout() + idleMargin
}

// ttl is TTL, or its default.
func (o *Options) ttl() time.Duration {
	if o.TTL > 0 {
		return o.TTL
	}
	return DefaultTTL
}

// validate returns every problem of o at once.
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	o.validateNames(bad)
	o.validatePods(bad)
	if len(o.Plan) == 0 {
		bad("plan: empty")
	} else if !utf8.Valid(o.Plan) {
		bad("plan: not UTF-8 text")
	}
	if strings.TrimSpace(o.Token) == "" {
		bad("token: empty")
	}
	o.validateTimes(bad)
	for _, a := range o.Args {
		flag, _, _ := strings.Cut(a, "=")
		if slices.Contains(ownFlags, flag) {
			bad("coordinator flag %s: set by ceiling k8s itself", flag)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("k8s: %w", errors.Join(errs...))
	}
	return nil
}

// validateNames says to bad what is wrong with the objects' names: the
// run's name (a DNS label, short enough for its last agent's hostname and
// the coordinator's Job) and the namespace's.
func (o *Options) validateNames(bad func(string, ...any)) {
	if msgs := validation.IsDNS1035Label(o.Name); len(msgs) > 0 {
		bad("name %q: %s", o.Name, strings.Join(msgs, "; "))
	} else if last := fmt.Sprintf("%s-%d", o.agentsName(), max(o.Agents-1, 0)); len(last) > validation.DNS1035LabelMaxLength ||
		len(o.coordinatorName()) > validation.DNS1035LabelMaxLength {
		bad("name %q: too long: the hostname of the last agent, %s, and the coordinator's Job, %s, must be at most %d characters",
			o.Name, last, o.coordinatorName(), validation.DNS1035LabelMaxLength)
	}
	if o.Namespace != "" {
		if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
			bad("namespace %q: %s", o.Namespace, strings.Join(msgs, "; "))
		}
	}
}

// validatePods says to bad what is wrong with the pods: how many agents,
// their image, and their CPU and memory.
func (o *Options) validatePods(bad func(string, ...any)) {
	if o.Agents < 1 {
		bad("agents: want 1 or more, not %d", o.Agents)
	}
	if strings.TrimSpace(o.Image) == "" {
		bad("image: required: ceiling's container image as the cluster's nodes can pull it, such as registry.example/ceiling:v1.2.3; no image is published: build one with the repository's Dockerfile (docs/distributed.md, \"The image\")")
	}
	for _, q := range []struct{ name, value string }{{"cpu", o.CPU}, {"memory", o.Memory}} {
		if q.value == "" {
			continue
		}
		if v, err := resource.ParseQuantity(q.value); err != nil {
			bad("%s %q: want a Kubernetes quantity such as 2, 500m or 1Gi: %w", q.name, q.value, err)
		} else if v.Sign() <= 0 {
			bad("%s %q: want more than zero", q.name, q.value)
		}
	}
}

// validateTimes says to bad what is wrong with the run's times: the
// agents' wait, the deadline (long enough for the wait and the load, the
// coordinator's flags included), the result's hold and the objects' TTL.
func (o *Options) validateTimes(bad func(string, ...any)) {
	if o.AgentsTimeout < 0 {
		bad("agents timeout: want a positive duration, not %v", o.AgentsTimeout)
	}
	switch deadline, need := o.deadline(), o.agentsTimeout()+o.PlanLoad; {
	case o.Deadline < 0 || o.Deadline > 0 && o.Deadline < time.Second:
		bad("deadline: want a duration of a second or more, not %v", o.Deadline)
	case deadline < need:
		load := o.PlanLoad.Round(time.Second).String()
		if len(o.Args) > 0 {
			load += " with the coordinator's flags"
		}
		bad("deadline %v: shorter than the agents' wait (%v) and the plan's load (%s): the cluster would stop the run before its end; give a longer one", deadline, o.agentsTimeout(), load)
	}
	if o.Hold > 0 && o.Hold < time.Second {
		bad("hold: want a duration of a second or more, not %v", o.Hold)
	}
	if o.TTL < 0 || o.TTL > 0 && o.TTL < time.Second {
		bad("ttl: want a duration of a second or more, not %v", o.TTL)
	}
}
