package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/inputfile"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/schedule"
)

// ServeFlags are `ceiling agent`'s flags.
type ServeFlags struct {
	Listen, TokenFile, TLSCert, TLSKey string
	AllowCommands, Once                bool
	// AllowTargets is Server.AllowTargets as written: a comma-separated
	// list (ParseTargets).
	AllowTargets string
	Limits       Limits
	// Lease is Server.Lease.
	Lease time.Duration
	// Idle, with Once, is how long the agent waits for a coordinator's
	// session: when none has opened by then, it stops with an error (a
	// coordinator that never came must not keep its resources). Zero:
	// for ever.
	Idle time.Duration
}

// The agent command's help, next to its flags'.
const (
	Short = "Serve as a remote agent: run the share of each step a coordinator (run/find --agents) sends"
	Long  = `Serve as a remote agent: run the share of each step a coordinator
(ceiling run/find --agents) sends, one coordinator at a time
(docs/distributed.md).

A coordinator holds the agent by a lease it renews with a heartbeat every
quarter of --lease, during steps and between them. When its heartbeats
stop (the coordinator was killed, its machine or network went away), the
agent stops the running step, closes the session and is free again
--lease after the last heartbeat (10s by default). A coordinator that
finds the agent busy waits for that, up to its --agents-timeout: to take
over an agent whose coordinator died, start the new coordinator with an
--agents-timeout longer than the lease (its default, 30s, is). A
coordinator that is still alive keeps its agents: stop it (Ctrl-C), or
restart the agent.

With --once the agent serves one coordinator's run and exits when its
session closes; --idle-timeout bounds its wait for that coordinator: when
no session has opened by then, the agent stops with an error (exit 3), so
that agents whose coordinator never came do not keep their CPUs.

What it accepts is bounded: a request's header must come within 10s and
the whole request within 30s (a second more a MiB of a plan), an idle
connection is closed after 30s, one IP address holds at most 16
connections, and a step asks for at most 10,000,000/s or 1,000,000 users
(the plan's own maxima) and runs once (a replayed step is refused).
--allow-targets refuses plans that send load to hosts outside the list
(names as the plan writes them; a host that is a template, or redirects
followed, cannot be checked and are refused). Listening beyond loopback
without --tls-cert, the agent warns: the token and the plans then cross
the network in clear.`
	Example = `  openssl rand -hex 32 > token
  ceiling agent --listen :7070 --token-file token --tls-cert cert.pem --tls-key key.pem --allow-targets 10.0.0.0/8,*.svc
  ceiling run plan.yaml --agents https://10.0.0.5:7070,https://10.0.0.6:7070 --token-file token --agents-ca cert.pem`
)

// Register adds the flags to fs.
func (f *ServeFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Listen, "listen", "127.0.0.1:7070", "address to serve the control API on (loopback unless you say otherwise, e.g. :7070)")
	fs.StringVar(&f.TokenFile, "token-file", "", "file holding the bearer token coordinators must present (required)")
	fs.StringVar(&f.TLSCert, "tls-cert", "", "serve over TLS with this certificate (PEM), with --tls-key")
	fs.StringVar(&f.TLSKey, "tls-key", "", "the certificate's key (PEM)")
	fs.BoolVar(&f.Once, "once", false, "serve one coordinator's run, then exit (a Kubernetes Job's agents)")
	fs.DurationVar(&f.Idle, "idle-timeout", 0, "with --once: stop with an error when no coordinator has opened a session this long after the start (0: wait for ever)")
	fs.DurationVar(&f.Lease, "lease", DefaultLease, "free the agent this long after its coordinator's last heartbeat (a coordinator that died)")
	fs.BoolVar(&f.AllowCommands, "allow-commands", false, "let plans start commands on this machine (monitor.command); refused otherwise")
	fs.StringVar(&f.AllowTargets, "allow-targets", "", "send load only to these hosts: networks, addresses, names and *.suffix, e.g. 10.0.0.0/8,*.svc (names as written, not resolved; default: any)")
	fs.Float64Var(&f.Limits.MaxRate, "max-rate", 0, "refuse steps that ask this agent for more requests a second (0: no bound)")
	fs.IntVar(&f.Limits.MaxUsers, "max-users", 0, "refuse steps that ask this agent for more users (0: no bound)")
	fs.DurationVar(&f.Limits.MaxDuration, "max-duration", 0, "refuse steps longer than this, warm-up included (0: no bound)")
}

// Serve runs an agent with the flags until ctx ends; log gets a line for
// what it does, and life the targets its sessions start (Server.Lifecycle).
func Serve(ctx context.Context, f ServeFlags, version string, life *control.Lifecycle, log io.Writer) error {
	token, err := ReadToken(ctx, f.TokenFile)
	if err != nil {
		return err
	}
	if (f.TLSCert == "") != (f.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if f.Idle < 0 || f.Idle > 0 && !f.Once {
		return &failure.InputError{Err: fmt.Errorf("--idle-timeout %v: want a positive duration, with --once", f.Idle)}
	}
	if f.Lease < 100*time.Millisecond {
		return &failure.InputError{Err: fmt.Errorf("--lease %v: want 100ms or more (a coordinator renews it every quarter of it)", f.Lease)}
	}
	allow, err := ParseTargets(f.AllowTargets)
	if err != nil {
		return &failure.InputError{Err: err}
	}
	// Session folders left by agents killed before they could remove them
	// hold plans and users files.
	removed, err := RemoveStale("")
	if len(removed) > 0 {
		fmt.Fprintf(log, "ceiling agent: removed the session folders of agents that died: %s\n", strings.Join(removed, ", "))
	}
	if err != nil {
		fmt.Fprintf(log, "ceiling agent: warning: %v\n", err)
	}
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.Listen, err)
	}
	ended := make(chan struct{})
	var once sync.Once
	s := &Server{Token: token, AllowCommands: f.AllowCommands, AllowTargets: allow, Limits: f.Limits, Version: version, Lease: f.Lease,
		Log: func(line string) { fmt.Fprintf(log, "ceiling agent: %s\n", line) }, Lifecycle: life}
	if f.Once {
		s.Ended = func() { once.Do(func() { close(ended) }) }
	}
	defer s.Close()
	srv := s.HTTPServer()
	ln = s.Listener(ln)
	scheme := "http"
	if f.TLSCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(log, "ceiling agent: serving API %s on %s://%s\n", API, scheme, ln.Addr())
	if w := exposed(ln.Addr(), f.TLSCert != ""); w != "" {
		fmt.Fprintf(log, "ceiling agent: %s\n", w)
	}
	if !allow.Any() {
		fmt.Fprintf(log, "ceiling agent: sending load only to %s (--allow-targets)\n", allow)
	}
	var idle <-chan time.Time
	if f.Idle > 0 {
		t := time.NewTimer(f.Idle)
		defer t.Stop()
		idle = t.C
	}
	idleFor := f.Idle
	done := make(chan error, 1)
	go func() {
		if f.TLSCert != "" {
			done <- srv.ServeTLS(ln, f.TLSCert, f.TLSKey)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}
	for {
		select {
		case err := <-done:
			return err
		case <-ended:
			fmt.Fprintf(log, "ceiling agent: the run is over (--once)\n")
			shutdown()
			return nil
		case <-idle:
			switch opened, opening := s.used(); {
			case opened:
				idle = nil // its session's end ends the agent (ended)
			case opening:
				// Checking the target: wait as long again for it.
				idle, idleFor = time.After(f.Idle), idleFor+f.Idle
			default:
				shutdown()
				return fmt.Errorf("no coordinator opened a session within %v of the agent's start (--idle-timeout)", idleFor)
			}
		case <-ctx.Done():
			shutdown()
			return nil
		}
	}
}

// MaxTokenFileBytes bounds a token file: a token is a line.
const MaxTokenFileBytes = 64 << 10

// MaxAgentsFileBytes bounds --agents-file: a line per agent.
const MaxAgentsFileBytes = 1 << 20

// ReadToken reads a bearer token from a file of at most
// MaxTokenFileBytes (a pipe or a device too, never past the limit): its
// first line, trimmed; at least 16 characters, so that it cannot be
// guessed.
func ReadToken(ctx context.Context, path string) (string, error) {
	if path == "" {
		return "", &failure.InputError{Err: errors.New("--token-file: required: a file holding the agents' bearer token (e.g. openssl rand -hex 32 > token)")}
	}
	data, err := inputfile.Read(ctx, path, MaxTokenFileBytes)
	if err != nil {
		return "", &failure.InputError{Err: fmt.Errorf("--token-file: %w", err)}
	}
	token, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if token = strings.TrimSpace(token); len(token) < 16 {
		return "", &failure.InputError{Err: fmt.Errorf("--token-file %s: the token has %d characters, want at least 16 (e.g. openssl rand -hex 32)", path, len(token))}
	}
	return token, nil
}

// Flags are the distribution flags of run and find: the agents to drive,
// or the one segment to run here.
type Flags struct {
	Agents, AgentsFile, TokenFile, Segment, CA string
	Wait, MaxSkew                              time.Duration
	// Emit prints result.json between marker lines at the end
	// (results.WriteLog): a coordinator's log, read back by ceiling k8s.
	Emit bool
	// Hold keeps result.json served on results.HeldPort after the run, until a
	// client with the token fetches and releases it, at most this long
	// (HoldResult). Zero: not held.
	Hold time.Duration
}

// Register adds the flags to fs, under the Agents help group; segment
// says whether --segment is one (run has it, find not: a search's levels
// depend on its own steps).
func (f *Flags) Register(fs *pflag.FlagSet, segment bool) {
	flaggroup.In(fs, flaggroup.Agent, func() { f.register(fs, segment) })
}

func (f *Flags) register(fs *pflag.FlagSet, segment bool) {
	fs.StringVar(&f.Agents, "agents", "", "run the load on these agents, host:port,... (see ceiling agent), merged exactly")
	fs.StringVar(&f.AgentsFile, "agents-file", "", "the agents, one host:port a line")
	fs.StringVar(&f.TokenFile, "token-file", "", "with --agents: the file holding the agents' bearer token")
	fs.StringVar(&f.CA, "agents-ca", "", "with https:// agents: trust this CA bundle (PEM), e.g. the agents' own self-signed certificate")
	fs.DurationVar(&f.Wait, "agents-timeout", 30*time.Second, "with --agents: how long to wait for every agent to answer")
	fs.DurationVar(&f.MaxSkew, "max-skew", 500*time.Millisecond, "with --agents: refuse agents whose clock is further off than this")
	fs.BoolVar(&f.Emit, "emit-result", false, "print result.json to stdout between marker lines at the end (a coordinator's log)")
	fs.DurationVar(&f.Hold, "hold-result", 0, fmt.Sprintf("after the run, serve result.json on port %d to clients with the token (--token-file) until one fetches and releases it, at most this long (a coordinator in a pod)", results.HeldPort))
	if segment {
		fs.StringVar(&f.Segment, "segment", "", "run share i of N of the load here, i/N (then: ceiling merge)")
	}
}

// Apply sets o for the flags: o.Remote connected to the agents (the plan
// opened on each), or o.Segment for a share run here. Nothing set, it
// does nothing.
func (f *Flags) Apply(ctx context.Context, p *plan.Plan, version string, o *run.Options) error {
	if f.Hold < 0 || f.Hold > 0 && f.TokenFile == "" {
		return &failure.InputError{Err: fmt.Errorf("--hold-result %v: want a positive duration, with --token-file (the token a client fetches the result with)", f.Hold)}
	}
	addrs := splitAgents(f.Agents)
	if f.AgentsFile != "" {
		data, err := inputfile.Read(ctx, f.AgentsFile, MaxAgentsFileBytes)
		if err != nil {
			return &failure.InputError{Err: fmt.Errorf("--agents-file: %w", err)}
		}
		addrs = append(addrs, splitAgents(string(data))...)
	}
	switch {
	case len(addrs) > 0 && f.Segment != "":
		return &failure.InputError{Err: errors.New("--segment runs one share here; --agents runs them all elsewhere: give one")}
	case f.Segment != "":
		seg, err := schedule.ParseSegment(f.Segment)
		if err != nil {
			return &failure.InputError{Err: fmt.Errorf("--segment: %w", err)}
		}
		o.Segment, o.SecondHistograms = seg, true
		return nil
	case len(addrs) == 0:
		return nil
	}
	token, err := ReadToken(ctx, f.TokenFile)
	if err != nil {
		return err
	}
	if p.Load.Model == plan.Closed && len(p.Load.VUs) > 0 && slicesMin(p.Load.VUs) < len(addrs) {
		return &failure.InputError{Err: fmt.Errorf("%d agents for %d users: each agent needs a user at least", len(addrs), slicesMin(p.Load.VUs))}
	}
	client, err := clientFor(f.CA)
	if err != nil {
		return err
	}
	c, err := Connect(ctx, Options{Addrs: addrs, Token: token, Wait: f.Wait, MaxSkew: f.MaxSkew, Version: version, Client: client}, p)
	if err != nil {
		return err
	}
	o.Remote = c
	return nil
}

// maxCABytes bounds --agents-ca: a few PEM certificates.
const maxCABytes = 1 << 20

// HoldResult holds the result written at out (Hold) on results.HeldPort, when
// --hold-result asks for it; log gets what it does. It returns once the
// result was fetched and released, the hold ended or ctx did.
func (f *Flags) HoldResult(ctx context.Context, out string, log io.Writer) error {
	if f.Hold <= 0 || out == "" {
		return nil
	}
	token, err := ReadToken(ctx, f.TokenFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", results.HeldPort))
	if err != nil {
		return fmt.Errorf("hold the result: %w", err)
	}
	_, err = Hold(ctx, ln, out, token, f.Hold, log)
	return err
}

// clientFor is the coordinator's HTTP client: no proxy, and with ca (a
// PEM file) as the roots of https:// agents' certificates when given.
func clientFor(ca string) (*http.Client, error) {
	tr := newTransport()
	if ca != "" {
		pem, err := inputfile.Read(context.Background(), ca, maxCABytes)
		if err != nil {
			return nil, &failure.InputError{Err: fmt.Errorf("--agents-ca: %w", err)}
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, &failure.InputError{Err: fmt.Errorf("--agents-ca %s: no PEM certificate in it", ca)}
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

// splitAgents reads host:port items separated by commas, spaces or lines
// (# starts a comment in a file).
func splitAgents(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		out = append(out, strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' })...)
	}
	return out
}

func slicesMin(v []int) int {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}
