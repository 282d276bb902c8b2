package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Options say how a coordinator reaches its agents.
type Options struct {
	// Addrs are the agents, host:port (http) or https://host:port.
	Addrs []string
	// Token is the bearer token every agent requires.
	Token string
	// Wait bounds the wait for every agent to answer its health check
	// (agents still starting, as a Kubernetes Job's pods are). Zero: 30s.
	Wait time.Duration
	// MaxSkew refuses an agent whose clock is further than this from the
	// coordinator's. Zero: 500ms.
	MaxSkew time.Duration
	// Version is the coordinator's: every agent must run the same.
	Version string
	// Client makes the requests; nil: a client with no proxy.
	Client *http.Client
}

// Coordinator drives agents step by step: it implements run.Remote, so
// that a session on it judges, searches and writes as on one machine.
type Coordinator struct {
	o      Options
	client *http.Client
	agents []*peer
	base   time.Time
	fresh  bool
	// steps counts the steps sent: each step's id (StepRequest.ID).
	steps int
	// drain bounds an agent's step beyond its window (run.DrainBound).
	drain time.Duration
	// beats are the agents' heartbeats, from each one's session opening
	// to Close.
	beats     sync.WaitGroup
	stopBeats context.CancelFunc
}

// peer is one agent as the coordinator sees it.
type peer struct {
	addr, url string
	health    Health
	offset    time.Duration // agent clock − coordinator clock
	rtt       time.Duration
	session   string
	lease     time.Duration // the session's, as the agent said
}

var _ run.Remote = (*Coordinator)(nil)

// Connect checks every agent (its health, API, version and clock), then
// opens the plan on each, agent i of N running segment i of N. The plan
// is sent as YAML, with its users file and without its monitor section
// (the coordinator watches the target). A plan an agent refuses is a
// failure.InputError.
func Connect(ctx context.Context, o Options, p *plan.Plan) (*Coordinator, error) {
	if len(o.Addrs) == 0 {
		return nil, errors.New("agents: none given")
	}
	c := &Coordinator{o: o, client: o.Client, drain: run.DrainBound(p)}
	beats, stop := context.WithCancel(context.Background())
	c.stopBeats = stop
	if c.client == nil {
		c.client = &http.Client{Transport: newTransport()}
	}
	for _, a := range o.Addrs {
		u := strings.TrimRight(a, "/")
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		// addr names the agent in messages and result.json: a password in
		// its URL is redacted there.
		c.agents = append(c.agents, &peer{addr: secret.URL(a), url: u})
	}
	if err := c.each(ctx, c.check); err != nil {
		stop()
		return nil, err
	}
	open, err := c.openRequest(p)
	if err != nil {
		stop()
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, 2*time.Minute) // an agent checks the target first
	defer cancel()
	if err := c.each(octx, func(ctx context.Context, i int, a *peer) error {
		o := open
		o.Segment.I, o.Segment.N = i, len(c.agents)
		var out Opened
		if err := c.call(ctx, a, http.MethodPost, pathSession, o, &out); err != nil {
			return err
		}
		a.session, a.lease = out.Session, cmp.Or(out.Lease, DefaultLease)
		// Heartbeats from now on: the other agents may take a while to
		// open theirs (each checks the target first).
		c.beats.Go(func() { c.heartbeat(beats, a) })
		return nil
	}); err != nil {
		c.Close()
		return nil, err
	}
	c.base = time.Now()
	return c, nil
}

// idleConns is how long a coordinator keeps an idle connection to an
// agent: less than an agent's idle timeout (Conns.Idle, 30s), so that the
// coordinator drops it first, and never sends a request on a connection
// the agent is closing.
const idleConns = 20 * time.Second

// newTransport is the coordinator's HTTP transport: no proxy, a few idle
// connections per agent, kept idleConns.
func newTransport() *http.Transport {
	return &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: idleConns}
}

// each runs f for every agent at once and joins their errors, each
// naming its agent.
func (c *Coordinator) each(ctx context.Context, f func(context.Context, int, *peer) error) error {
	errs := make([]error, len(c.agents))
	var wg sync.WaitGroup
	for i, a := range c.agents {
		wg.Go(func() {
			if err := f(ctx, i, a); err != nil {
				errs[i] = fmt.Errorf("agent %s: %w", a.addr, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		var bad *failure.InputError
		for _, e := range errs {
			if errors.As(e, &bad) {
				return &failure.InputError{Err: err}
			}
		}
		return err
	}
	return nil
}

// check waits for an agent's health, then measures its clock's offset
// from the best (shortest) of five round trips.
func (c *Coordinator) check(ctx context.Context, _ int, a *peer) error {
	wait := c.o.Wait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	busy := false
	for {
		err := c.call(wctx, a, http.MethodGet, pathHealth, nil, &a.health)
		// A look the wait's end cut short leaves the last one's answer:
		// an agent busy then is still busy, not unanswering (a wait of a
		// multiple of the 500 ms between looks can end as one starts).
		if cut := err != nil && ctx.Err() == nil && wctx.Err() != nil; !cut || !busy {
			last, busy = err, err == nil && a.health.Busy
		}
		if err == nil {
			switch {
			case a.health.API != API:
				return &failure.InputError{Err: fmt.Errorf("it speaks API %q, this coordinator %q", a.health.API, API)}
			case a.health.Version != c.o.Version:
				return &failure.InputError{Err: fmt.Errorf("it runs ceiling %s, this coordinator %s: run the same version everywhere (figures must mean the same)", a.health.Version, c.o.Version)}
			}
			if !a.health.Busy {
				break
			}
			// Another coordinator's session: wait for it to end, as it
			// does when that coordinator closes it or stops renewing its
			// lease (a coordinator that died).
			last = fmt.Errorf("busy with another coordinator's run: its session ends when that coordinator closes it, or %v after its last heartbeat (%v left at the last look); a coordinator that still renews it keeps it",
				seconds(a.health.LeaseS), seconds(a.health.LeaseLeftS))
		}
		select {
		case <-wctx.Done():
			if busy {
				return fmt.Errorf("still busy after %v (--agents-timeout): %w", wait, last)
			}
			return fmt.Errorf("no answer to its health check within %v: %w", wait, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
	ctx, cancelClock := context.WithTimeout(ctx, 30*time.Second)
	defer cancelClock()
	a.rtt = time.Duration(math.MaxInt64)
	for range 5 {
		var ck Clock
		t0 := time.Now()
		if err := c.call(ctx, a, http.MethodGet, pathClock, nil, &ck); err != nil {
			return err
		}
		t2 := time.Now()
		if rtt := t2.Sub(t0); rtt < a.rtt {
			a.rtt = rtt
			a.offset = time.Unix(0, ck.UnixNano).Sub(t0.Add(rtt / 2))
		}
	}
	skew := c.o.MaxSkew
	if skew <= 0 {
		skew = 500 * time.Millisecond
	}
	if a.offset > skew || a.offset < -skew {
		return fmt.Errorf("its clock is %v off this one's (round trip %v), more than --max-skew %v: synchronise the clocks (NTP)", a.offset.Round(time.Millisecond), a.rtt.Round(time.Microsecond), skew)
	}
	return nil
}

// openRequest is the session every agent opens: the plan without its
// monitor section, its users file sent along.
func (c *Coordinator) openRequest(p *plan.Plan) (Open, error) {
	q := *p
	q.Monitor = plan.Monitor{}
	o := Open{PlanFile: p.File}
	if files := p.BodyFiles(); len(files) > 0 {
		return o, &failure.InputError{Err: fmt.Errorf("%s: %s: a body in a file is not sent to the agents: put it in the plan (body or json)", p.Where(files[0]), files[0])}
	}
	if path := p.UsersPath(); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return o, err
		}
		o.Users, o.UsersName = data, "users"+filepath.Ext(path)
		q.Data.Users = o.UsersName
	}
	data, err := yaml.Marshal(&q)
	if err != nil {
		return o, fmt.Errorf("write the plan for the agents: %w", err)
	}
	o.Plan = string(data)
	return o, nil
}

// Step implements run.Remote: every agent runs its share of st, all
// starting at one instant a little ahead (the round trips and a margin),
// each told the instant on its own clock.
func (c *Coordinator) Step(ctx context.Context, st load.Step) (results.Step, run.Window, error) {
	lead := 500 * time.Millisecond
	for _, a := range c.agents {
		lead = max(lead, 500*time.Millisecond+2*a.rtt)
	}
	start := time.Now().Add(lead)
	c.steps++
	req := stepRequest(st)
	req.ID, req.Fresh = strconv.Itoa(c.steps), c.fresh
	c.fresh = false
	bound := lead + st.Warmup + st.Length + c.drain
	parts := make([]*StepResult, len(c.agents))
	errs := make([]error, len(c.agents))
	lostAt := make([]time.Duration, len(c.agents))
	// The requests outlive ctx: a Ctrl-C stops the agents' steps (stop),
	// and their answers, what they measured, are still wanted.
	rctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.stopAll()
		case <-stopped:
		}
	}()
	var wg sync.WaitGroup
	for i, a := range c.agents {
		r := req
		r.StartUnixNano = start.Add(a.offset).UnixNano()
		wg.Go(func() {
			var out StepResult
			if err := c.call(rctx, a, http.MethodPost, pathSession+"/"+a.session+"/step", r, &out); err != nil {
				errs[i], lostAt[i] = err, max(time.Since(start), 0)
				return
			}
			parts[i] = &out
		})
	}
	wg.Wait()
	close(stopped)
	win := run.Window{Start: start.Add(st.Warmup), End: start.Add(st.Warmup + st.Length)}
	return c.merge(st, start, parts, errs, lostAt, win)
}

// merge puts the agents' steps together; an agent that did not answer is
// lost, and the step says so: it keeps its planned load (target rate or
// users), lists the shares that are missing from its figures (LostParts)
// and warns that its figures are the other agents' only.
func (c *Coordinator) merge(st load.Step, start time.Time, parts []*StepResult, errs []error, lostAt []time.Duration, win run.Window) (results.Step, run.Window, error) {
	var steps []results.Step
	var names []string
	var lost []results.LostPart
	var why []error
	var refused []error
	for i, a := range c.agents {
		var bad *failure.InputError
		switch {
		case errors.As(errs[i], &bad):
			refused = append(refused, fmt.Errorf("agent %s: %w", a.addr, errs[i]))
		case errs[i] != nil:
			lost = append(lost, lostShare(st, a.addr, schedule.Segment{I: i, N: len(c.agents)}, lostAt[i]))
			why = append(why, errs[i])
		default:
			s := parts[i].Step
			// The agent's step, on its session's clock, moved to this
			// run's: every agent started it at the common instant (within
			// its collector's jitter).
			if err := s.LineUp(start.Sub(c.base).Seconds()); err != nil {
				return results.Step{}, win, fmt.Errorf("agent %s: %w", a.addr, err)
			}
			steps = append(steps, s)
			names = append(names, a.addr)
		}
	}
	if len(refused) > 0 {
		return results.Step{}, win, errors.Join(refused...)
	}
	var m results.Step
	if len(steps) > 0 {
		var err error
		if m, err = results.MergeSteps(steps, names); err != nil {
			return m, win, err
		}
	} else {
		m = results.Step{Figures: results.Figures{Index: st.Index, Model: "open", Errors: map[string]int64{}, Warnings: []string{}, VerdictReasons: []string{}, Scenarios: []results.Breakdown{}}}
		if st.VUs > 0 {
			m.Model = "closed"
		}
	}
	if len(lost) > 0 {
		m.Lost = lostLines(st, lost, why)
		keepPlanned(&m, st, lost)
		return m, win, fmt.Errorf("%w: %s", failure.ErrAgentLost, m.Lost)
	}
	return m, win, nil
}

// lostShare is the share of st that the agent at addr, running segment
// seg, was running when it was lost after the step's start.
func lostShare(st load.Step, addr string, seg schedule.Segment, after time.Duration) results.LostPart {
	lp := results.LostPart{Agent: addr, Segment: fmt.Sprintf("%d/%d", seg.I+1, seg.N), AfterS: after.Seconds()}
	if st.VUs > 0 {
		lp.VUs = seg.Users(st.VUs)
		lp.Share = float64(lp.VUs) / float64(st.VUs)
	} else {
		lp.Share = seg.Fraction()
		lp.TargetRate = st.TargetRate() * lp.Share
	}
	return lp
}

// lostLines says which agents were lost, when, and what share of st each
// took with it; why holds each one's error.
func lostLines(st load.Step, lost []results.LostPart, why []error) string {
	lines := make([]string, len(lost))
	for i, lp := range lost {
		cause := why[i]
		var u *url.Error
		if errors.As(cause, &u) {
			cause = u.Err // the request's URL holds nothing the reader needs
		}
		lines[i] = fmt.Sprintf("agent %s lost after %.1f s: its share (segment %s, %s) is missing from these figures (%v)",
			lp.Agent, lp.AfterS, lp.Segment, shareOf(st, lp), cause)
	}
	return strings.Join(lines, "; ")
}

// shareOf says a lost part's share of the step's load: "200/s of the
// step's 400/s", "2 of the step's 5 users".
func shareOf(st load.Step, lp results.LostPart) string {
	if st.VUs > 0 {
		return fmt.Sprintf("%d of the step's %d users", lp.VUs, st.VUs)
	}
	return fmt.Sprintf("%s of the step's %s", report.Rate(lp.TargetRate), report.Rate(st.TargetRate()))
}

// keepPlanned makes the merge of the agents that answered keep the step's
// planned load (the merge alone would add up the shares it has, and pass
// the step off as a smaller one), lists the lost shares and warns that the
// figures are the others' only.
func keepPlanned(m *results.Step, st load.Step, lost []results.LostPart) {
	var share float64
	var missing results.LostPart
	for _, lp := range lost {
		share += lp.Share
		missing.TargetRate += lp.TargetRate
		missing.VUs += lp.VUs
	}
	if st.VUs > 0 {
		m.VUs = st.VUs
	} else {
		m.TargetRate = st.TargetRate()
	}
	m.LostParts = lost
	m.Warnings = append(m.Warnings, fmt.Sprintf("%s of the load (%s) was on lost agents: the figures are the other agents' share only, not the whole step",
		report.Percent(share), shareOf(st, missing)))
}

// stopAll asks every agent to cut its step short (a Ctrl-C here).
func (c *Coordinator) stopAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.each(ctx, func(ctx context.Context, _ int, a *peer) error {
		return c.call(ctx, a, http.MethodPost, pathSession+"/"+a.session+"/stop", nil, nil)
	})
}

// Fresh implements run.Remote: the next step starts with new users.
func (c *Coordinator) Fresh(context.Context) error {
	c.fresh = true
	return nil
}

// Agents implements run.Remote.
func (c *Coordinator) Agents() []results.Agent {
	out := make([]results.Agent, len(c.agents))
	for i, a := range c.agents {
		out[i] = results.Agent{Addr: a.addr, Version: a.health.Version, Host: a.health.Host, CPUs: a.health.CPUs,
			ClockOffsetMS: float64(a.offset) / float64(time.Millisecond), RoundTripMS: float64(a.rtt) / float64(time.Millisecond)}
	}
	return out
}

// Base implements run.Remote.
func (c *Coordinator) Base() time.Time { return c.base }

// Close implements run.Remote: it stops the heartbeats and closes every
// agent's session.
func (c *Coordinator) Close() {
	c.stopBeats()
	c.beats.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.each(ctx, func(ctx context.Context, _ int, a *peer) error {
		if a.session == "" {
			return nil
		}
		return c.call(ctx, a, http.MethodDelete, pathSession+"/"+a.session, nil, nil)
	})
	c.client.CloseIdleConnections()
}

// seconds is s seconds as a duration, to the millisecond.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// heartbeat renews a's lease every quarter of it until ctx ends (Close):
// while this coordinator runs, during steps and between them, the agent
// stays its own; once it stops (killed, its machine or network gone), the
// agent is free again a lease later. A heartbeat that fails is not an
// error here: the next step finds out whether the agent is lost.
func (c *Coordinator) heartbeat(ctx context.Context, a *peer) {
	every := max(a.lease/4, 10*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		hctx, cancel := context.WithTimeout(ctx, a.lease/2)
		c.call(hctx, a, http.MethodPost, pathSession+"/"+a.session+"/lease", nil, nil)
		cancel()
	}
}

// call makes one API request: in (if not nil) as JSON, the answer into
// out. An error answer is a *Problem (a refused plan or request, 400, 401,
// 403 or 413, is also a failure.InputError).
func (c *Coordinator) call(ctx context.Context, a *peer, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.o.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		p := &Problem{}
		if json.Unmarshal(data, p) != nil || p.Message == "" {
			p.Message = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(data[:min(len(data), 200)])))
		}
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusForbidden, http.StatusUnauthorized, http.StatusRequestEntityTooLarge:
			return &failure.InputError{Err: p}
		}
		return p
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return json.Unmarshal(data, out)
}
