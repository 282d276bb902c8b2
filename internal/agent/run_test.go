package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// Whole runs driven by a coordinator over agents, all in this process on
// loopback: what `ceiling run --agents` does, and `ceiling agent` with
// its flags (Serve).

// runWith runs p with o, as `ceiling run` does, its result written to a
// file of the test's: the result and the run's error.
func runWith(t *testing.T, p *plan.Plan, o run.Options) (*results.Result, error) {
	t.Helper()
	if o.Out == "" {
		o.Out = filepath.Join(t.TempDir(), "result.json")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := run.Open(ctx, p, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx)
}

// tokenFile writes the agents' token for a test.
func tokenFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve runs `ceiling agent` with f (the test's token, a free loopback
// port) until the test ends, and returns its address once it listens, and
// Serve's error when it returns.
func serve(t *testing.T, f ServeFlags) (addr string, served <-chan error) {
	t.Helper()
	addr = fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	f.Listen, f.TokenFile = addr, tokenFile(t)
	if f.Lease == 0 {
		f.Lease = DefaultLease
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		done <- Serve(ctx, f, "test", nil, io.Discard)
		close(finished)
	}()
	t.Cleanup(func() { cancel(); <-finished })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, done
		}
		select {
		case err := <-done:
			t.Fatalf("the agent did not serve: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not listen within 10s")
		}
	}
}

// Three agents at 600/s in all against a 20 ms endpoint: exactly the
// arrivals of one machine, and the same percentiles within noise, merged
// from their histograms; each agent sent its third, and the table shows
// the agents.
func TestAgentsMatchOneMachine(t *testing.T) {
	long(t)
	// Each agent's event loop holds a processor while it waits in the
	// kernel: in a process of its own, an agent has its own; here, one
	// more each, or the target's answers wait for one.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 3))
	var addrs []string
	for range 3 {
		addrs = append(addrs, agent(t, &Server{}))
	}
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 20 * time.Millisecond, Body: "ok"})
	p := planText(t, "target: "+srv.URL+"\nload: {rates: [600], step: 1s, warmup: 300ms}\nscenarios: [{request: {url: /api}}]\n")
	one, err := runWith(t, p, run.Options{})
	if err != nil {
		t.Fatalf("one machine: %v", err)
	}
	c, err := connect(t, p, token, addrs...)
	if err != nil {
		t.Fatal(err)
	}
	three, err := runWith(t, p, run.Options{Remote: c})
	if err != nil {
		t.Fatalf("three agents: %v", err)
	}
	a, b := one.Steps[0], three.Steps[0]
	if a.GeneratorLimited || b.GeneratorLimited {
		t.Skipf("this machine could not hold 600/s (one: %v, three: %v): nothing to compare", a.VerdictReason, b.VerdictReason)
	}
	if !one.Passed || !three.Passed {
		t.Errorf("passed: one machine %v, three agents %v; want both", one.Passed, three.Passed)
	}
	t.Logf("one machine: sent %d, p50 %.2f ms, p99 %.2f ms; three agents: sent %d, p50 %.2f ms, p99 %.2f ms", a.Sent, a.LatencyMS.P50, a.LatencyMS.P99, b.Sent, b.LatencyMS.P50, b.LatencyMS.P99)
	// Every arrival is accounted for: sent, or (the last ones of a window
	// a busy machine reached too late) said not sent.
	if a.Sent+a.NotSent != 600 || b.Sent+b.NotSent != 600 || b.TargetRate != 600 || a.NotSent > 6 || b.NotSent > 6 {
		t.Errorf("arrivals: one machine %d sent + %d not, three agents %d + %d (target %v); want 600 each, exactly, nearly all sent",
			a.Sent, a.NotSent, b.Sent, b.NotSent, b.TargetRate)
	}
	if math.Abs(a.LatencyMS.P50-b.LatencyMS.P50) > 3 || b.LatencyMS.P99 > 2*a.LatencyMS.P99+10 || a.LatencyMS.P99 > 2*b.LatencyMS.P99+10 {
		t.Errorf("p50 %.1f vs %.1f ms, p99 %.1f vs %.1f ms: want the same within noise", a.LatencyMS.P50, b.LatencyMS.P50, a.LatencyMS.P99, b.LatencyMS.P99)
	}
	checkAgentParts(t, three)
}

// checkAgentParts checks a run of one step by three agents: the agents
// listed, each part a third of the arrivals, the parts summing to the
// step, the merged histogram holding every sample, the table showing the
// agents.
func checkAgentParts(t *testing.T, three *results.Result) {
	t.Helper()
	b := three.Steps[0]
	if b.Agents != 3 || len(b.Parts) != 3 || len(three.Agents) != 3 || three.Agents[0].Version == "" {
		t.Errorf("agents %d, parts %d, run's agents %+v; want three listed", b.Agents, len(b.Parts), three.Agents)
	}
	var sent int64
	for _, p := range b.Parts {
		sent += p.Sent
		if p.Sent < 199 || p.Sent > 201 {
			t.Errorf("agent %s sent %d, want its third, 200", p.Agent, p.Sent)
		}
	}
	if sent != b.Sent {
		t.Errorf("the parts sent %d, the step %d", sent, b.Sent)
	}
	if h, err := metrics.Decode(b.Histogram); err != nil || h.TotalCount() != b.Completed {
		t.Errorf("the merged histogram: %v, the step completed %d; want as many samples", err, b.Completed)
	}
	var table strings.Builder
	if err := report.Text(&table, three); err != nil || !strings.Contains(table.String(), "agents") {
		t.Errorf("the table does not show the agents (%v):\n%s", err, table.String())
	}
}

// verdicts lists a result's steps' verdicts and reasons.
func verdicts(r *results.Result) []string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.Verdict+": "+s.VerdictReason)
	}
	return out
}

// stepped is a run.Output that calls after with each finished step.
type stepped struct{ after func(*run.Finished) }

func (o stepped) Start(*results.Result) error { return nil }
func (o stepped) Step(f *run.Finished) error  { o.after(f); return nil }
func (o stepped) Stop(*results.Result) error  { return nil }

var _ run.Output = stepped{}

// An agent killed during a step makes that step INVALID ("agent ADDR lost
// after N s"), never a smaller rate passed off as the whole: the step
// keeps its planned 100/s, lists the lost agent's share (segment 2/2,
// 50/s) and warns; the run stops with its finished steps kept, could not
// be carried out (exit 3), the error an agent lost, and the table shows
// the lost step at its planned rate.
func TestAgentLost(t *testing.T) {
	long(t)
	a1 := agent(t, &Server{})
	a2, kill := mortalAgent(t, &Server{})
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 5 * time.Millisecond, Body: "ok"})
	p := planText(t, "target: "+srv.URL+"\nload: {rates: [50, 100, 100], step: 2s, warmup: 200ms}\nscenarios: [{request: {url: /}}]\n")
	c, err := connect(t, p, token, a1, a2)
	if err != nil {
		t.Fatal(err)
	}
	// The second agent dies in the second step's counted window: once the
	// first step is done, when the target has had the second's warm-up
	// (20 requests at 100/s) and 40 more.
	killed := make(chan struct{})
	after := stepped{after: func(f *run.Finished) {
		if len(f.Result.Steps) != 1 {
			return
		}
		from := srv.Hits()
		go func() {
			defer close(killed)
			for deadline := time.Now().Add(30 * time.Second); srv.Hits() < from+60 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			}
			kill()
		}()
	}}
	r, err := runWith(t, p, run.Options{Remote: c, Outputs: []run.Output{after}})
	<-killed
	if !errors.Is(err, failure.ErrAgentLost) || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("the run: %v, want an agent lost", err)
	}
	if r == nil || len(r.Steps) != 2 || r.Steps[0].Verdict != results.Healthy || r.Steps[1].Verdict != results.Invalid ||
		!strings.Contains(r.Steps[1].VerdictReason, "agent "+a2+" lost after") || r.Passed || r.Unfinished || r.Outcome.Status != results.StatusCouldNotRun {
		t.Fatalf("result %+v; want the first step kept, the second INVALID naming the lost agent, the run could not be carried out", r)
	}
	checkLostStep(t, r.Steps[1], a2)
	var table strings.Builder
	if err := report.Text(&table, r); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^2 +100/s +[0-9.]+/s .* INVALID \(agent ` + regexp.QuoteMeta(a2) + ` lost after`)
	if !row.MatchString(table.String()) || !strings.Contains(table.String(), a2+" LOST after") {
		t.Errorf("the table does not show the lost step at its planned 100/s, INVALID, and the lost agent:\n%s", table.String())
	}
}

// checkLostStep checks a step of 100/s by two agents, of which agent a2
// was lost about a second into it: at its planned rate, measured by the
// one surviving agent, with the lost agent's share listed and warned of.
func checkLostStep(t *testing.T, s results.Step, a2 string) {
	t.Helper()
	if s.TargetRate != 100 {
		t.Errorf("the lost step's target_rate = %v, want the planned 100 (not the surviving agent's 50)", s.TargetRate)
	}
	// What was measured is the surviving agent's share: about 50/s.
	if s.AchievedRate < 30 || s.AchievedRate > 60 || s.Agents != 1 {
		t.Errorf("achieved %.1f/s from %d agents; want the one surviving agent's 50/s", s.AchievedRate, s.Agents)
	}
	want := results.LostPart{Agent: a2, Segment: "2/2", Share: 0.5, TargetRate: 50}
	if len(s.LostParts) != 1 {
		t.Fatalf("lost_parts = %+v, want %+v", s.LostParts, want)
	}
	got := s.LostParts[0]
	if after := got.AfterS; after < 0 || after > 3 {
		t.Errorf("lost after %.1f s; want within the step (the agent was killed about a second after its start, of 2.7 s)", after)
	}
	got.AfterS = 0
	if got != want {
		t.Errorf("lost_parts[0] = %+v, want %+v", got, want)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "50.0% of the load (50/s of the step's 100/s)") }) {
		t.Errorf("warnings %q; want one saying which share of the load was lost", s.Warnings)
	}
}

// mortal is a coordinator's way out to its agents that can die as its
// process would: every connection closed at once, none made after.
type mortal struct {
	mu    sync.Mutex
	conns []net.Conn
	dead  bool
}

func (m *mortal) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return nil, errors.New("the coordinator is dead")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		m.conns = append(m.conns, c)
	}
	return c, err
}

func (m *mortal) kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dead = true
	for _, c := range m.conns {
		c.Close()
	}
}

// A coordinator holds its agent by heartbeats, past the lease, in the
// middle of a long step; dead (its connections gone at once, the step's
// too, and no heartbeat after), it stops renewing, and the agent is free
// a lease later: a second coordinator waiting for it takes it over then,
// not minutes later, and runs its step.
func TestAgentTakenOverAfterCoordinatorDied(t *testing.T) {
	long(t)
	const lease = 2 * time.Second
	addr := agent(t, &Server{Lease: lease})
	srv := testkit.NewTarget(t, testkit.TargetConfig{Body: "ok"})
	p := planText(t, "target: "+srv.URL+"\nload: {rates: [20], step: 60s, warmup: 0s}\nscenarios: [{request: {url: /}}]\n")
	var way mortal
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, err := Connect(ctx, Options{Addrs: []string{addr}, Token: token, Version: "test", Client: &http.Client{Transport: &http.Transport{DialContext: way.dial}}}, p)
	if err != nil {
		t.Fatal(err)
	}
	stepped := make(chan error, 1)
	go func() {
		_, _, err := first.Step(context.Background(), run.Level(p, 20))
		stepped <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); srv.Hits() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first coordinator's step did not start within 30 s")
		}
	}
	// Held past the lease by the heartbeats, in the middle of its step.
	time.Sleep(lease + lease/2)
	if !health(t, addr).Busy {
		t.Fatalf("the agent is free %v into a live coordinator's 60 s step, want it held by the heartbeats", lease+lease/2)
	}
	way.kill()
	killed := time.Now()
	defer first.Close()
	if err := <-stepped; err == nil {
		t.Errorf("the dead coordinator's step: no error, want its agent lost")
	}
	second, err := Connect(context.Background(), Options{Addrs: []string{addr}, Token: token, Version: "test", Wait: 20 * time.Second}, p)
	if err != nil {
		t.Fatalf("a second coordinator after the first died: %v", err)
	}
	q := planText(t, "target: "+srv.URL+"\nload: {rates: [20], step: 300ms, warmup: 0s}\nscenarios: [{request: {url: /}}]\n")
	r, err := runWith(t, q, run.Options{Remote: second})
	took := time.Since(killed)
	if err != nil || len(r.Steps) != 1 || r.Steps[0].Sent == 0 {
		t.Fatalf("the second coordinator's run, %v after the first died: %v; want its one step run on the agent", took, err)
	}
	// The lease from the last heartbeat, a look at the health every
	// 500 ms, then the run's own second or so.
	t.Logf("the second coordinator's run ended %v after the first died (lease %v)", took, lease)
	if took > lease+8*time.Second {
		t.Errorf("the second coordinator's run ended %v after the first died, want within about the lease (%v) and its own run", took, lease)
	}
}

// A search through two agents finds the edge one machine finds, on a
// target of known capacity (200 requests a second, 503 past it).
func TestAgentsFind(t *testing.T) {
	long(t)
	a1, a2 := agent(t, &Server{}), agent(t, &Server{})
	srv := testkit.NewTarget(t, testkit.TargetConfig{Capacity: 200, Body: "ok"})
	p := planText(t, "target: "+srv.URL+"\nload: {rates: [50], step: 600ms, warmup: 200ms}\nslo: errors<1%\nscenarios: [{request: {url: /}}]\n")
	cfg, err := (&run.SearchFlags{Start: "50", Max: "800", Precision: "10%", RateGiven: true}).Config(p)
	if err != nil {
		t.Fatal(err)
	}
	edges := map[string]float64{}
	for _, name := range []string{"one machine", "two agents"} {
		var o run.Options
		if name == "two agents" {
			if o.Remote, err = connect(t, p, token, a1, a2); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		o.Out, o.RefusedStops = filepath.Join(t.TempDir(), "result.json"), true
		s, err := run.Open(ctx, p, o)
		if err != nil {
			t.Fatal(err)
		}
		r, err := run.Find(ctx, s, cfg)
		s.Close()
		for _, st := range r.Steps {
			// A busy machine (the race detector, a neighbour) can make the
			// generator late: the search then stops, rightly, at no edge.
			if st.GeneratorLimited {
				t.Skipf("%s: step %d generator-limited on this machine: %s", name, st.Index+1, st.VerdictReason)
			}
		}
		if err != nil || r.Edge == nil {
			t.Fatalf("%s: %v, edge %v", name, err, r.Edge)
		}
		edges[name] = r.Edge.Rate
		t.Logf("%s: %s", name, report.FindAnswer(r))
	}
	one, two := edges["one machine"], edges["two agents"]
	if one < 120 || one > 260 || math.Abs(one-two)/one > 0.2 {
		t.Errorf("edges: one machine %.0f/s, two agents %.0f/s; want both near the target's 200/s and within the search's precision of each other", one, two)
	}
}

// Segments i/N of a run (--segment) on two machines (here, two sessions
// at once), then merged: the segments' arrivals add up to the whole's,
// judged; the merge refuses, as bad input, files that are not every
// segment of one plan, once each.
func TestSegmentsMerge(t *testing.T) {
	long(t)
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 10 * time.Millisecond, Body: "ok"})
	text := "target: " + srv.URL + "\nload: {rates: [100, 200], step: 1s, warmup: 200ms}\nscenarios: [{request: {url: /}}]\n"
	dir := t.TempDir()
	segment := func(seg, text, out string) error {
		p := planText(t, text)
		o := run.Options{Out: out}
		if err := (&Flags{Segment: seg}).Apply(context.Background(), p, "test", &o); err != nil {
			return err
		}
		_, err := runWith(t, p, o)
		return err
	}
	s1, s2, merged := filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2.json"), filepath.Join(dir, "merged.json")
	var wg sync.WaitGroup
	for i, out := range []string{s1, s2} {
		wg.Go(func() {
			if err := segment(fmt.Sprintf("%d/2", i+1), text, out); err != nil {
				t.Errorf("segment %d/2: %v", i+1, err)
			}
		})
	}
	wg.Wait()
	r, err := run.MergeFiles([]string{s1, s2}, merged, []string{"merge", s1, s2}, false)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	// Every arrival of the window is accounted: sent, or (on a starved
	// machine, said) left unsent at the window's end.
	if len(r.Steps) != 2 || r.Steps[0].Sent+r.Steps[0].NotSent != 100 || r.Steps[1].Sent+r.Steps[1].NotSent != 200 ||
		r.Steps[1].TargetRate != 200 || r.Steps[0].Verdict == "" {
		t.Errorf("merged steps %+v; want 100 and 200 arrivals, judged", verdicts(r))
	}
	if onDisk, err := results.Read(merged); err != nil || len(onDisk.Steps) != 2 {
		t.Errorf("the merged result.json: %v", err)
	}
	other := filepath.Join(dir, "other.json")
	if err := segment("2/2", "target: "+srv.URL+"\nload: {rates: [100], step: 300ms, warmup: 200ms}\nscenarios: [{request: {url: /}}]\n", other); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		files []string
		want  string
	}{
		{[]string{s1}, "segment 2/2 is missing"},
		{[]string{s1, s1}, "given twice"},
		{[]string{s1, other}, "another plan"},
	} {
		var bad *failure.InputError
		if _, err := run.MergeFiles(tt.files, merged, nil, false); !errors.As(err, &bad) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("merge %v: %v, want refused as bad input, saying %q", tt.files, err, tt.want)
		}
	}
}

// The closed model's users are split over the agents as evenly as they
// go, and add up to the step's; fewer users than agents is refused.
func TestAgentsClosedModel(t *testing.T) {
	t.Parallel()
	a1, a2 := agent(t, &Server{}), agent(t, &Server{})
	srv := testkit.NewTarget(t, testkit.TargetConfig{Delay: 5 * time.Millisecond, Body: "ok"})
	p := planText(t, "target: "+srv.URL+"\nload: {vus: [3], step: 500ms, warmup: 100ms}\nscenarios: [{request: {url: /}}]\n")
	f := Flags{Agents: a1 + "," + a2, TokenFile: tokenFile(t), Wait: 10 * time.Second}
	var o run.Options
	if err := f.Apply(context.Background(), p, "test", &o); err != nil {
		t.Fatal(err)
	}
	r, err := runWith(t, p, o)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Steps[0]
	if s.Model != "closed" || s.VUs != 3 || len(s.Parts) != 2 || s.Parts[0].VUs != 2 || s.Parts[1].VUs != 1 || s.Completed == 0 {
		t.Errorf("step %s, %d users, parts %+v; want 3 users split 2 and 1", s.Model, s.VUs, s.Parts)
	}
	one := planText(t, "target: "+srv.URL+"\nload: {vus: [1], step: 300ms}\nscenarios: [{request: {url: /}}]\n")
	var bad *failure.InputError
	if err := f.Apply(context.Background(), one, "test", &run.Options{}); !errors.As(err, &bad) || !strings.Contains(err.Error(), "2 agents for 1 users") {
		t.Errorf("1 user on 2 agents: %v, want refused as bad input", err)
	}
}

// A plan with sinks is refused by the agent, as bad input: delivery
// accounting needs one machine.
func TestAgentRefusesSinks(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	p := quickPlan(t, target(t), "sinks: [{name: hook, listen: 127.0.0.1:0, id: {json: text}}]\n")
	var bad *failure.InputError
	if _, err := connect(t, p, token, addr); !errors.As(err, &bad) || !strings.Contains(err.Error(), "sinks") {
		t.Errorf("a plan with sinks: %v, want refused as bad input", err)
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ceiling agent"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key
}

// `ceiling agent`'s flags, served: over TLS, a coordinator trusts the
// agent's certificate through --agents-ca and refuses it without;
// --allow-targets refuses a run whose target is outside the list (naming
// the host and the list) and runs one inside it, and a list that does not
// read is bad input; --once serves one coordinator's run, then returns.
func TestServeFlags(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Body: "ok"})
	p := planText(t, "target: "+srv.URL+"\nload: {rates: [20], step: 300ms, warmup: 100ms}\nscenarios: [{request: {url: /}}]\n")
	apply := func(f Flags) (*results.Result, error) {
		f.TokenFile = tokenFile(t)
		if f.Wait == 0 {
			f.Wait = 5 * time.Second
		}
		var o run.Options
		if err := f.Apply(context.Background(), p, "test", &o); err != nil {
			return nil, err
		}
		return runWith(t, p, o)
	}
	t.Run("tls", func(t *testing.T) {
		t.Parallel()
		cert, key := selfSigned(t)
		addr, _ := serve(t, ServeFlags{TLSCert: cert, TLSKey: key})
		if r, err := apply(Flags{Agents: "https://" + addr, CA: cert}); err != nil || r.Steps[0].Agents != 1 || r.Steps[0].Sent == 0 {
			t.Errorf("with --agents-ca: %v", err)
		}
		if _, err := apply(Flags{Agents: "https://" + addr, Wait: 2 * time.Second}); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("without --agents-ca: %v, want the unknown certificate refused", err)
		}
	})
	t.Run("allow-targets", func(t *testing.T) {
		t.Parallel()
		elsewhere, _ := serve(t, ServeFlags{AllowTargets: "10.0.0.0/8,*.svc"})
		var bad *failure.InputError
		if _, err := apply(Flags{Agents: elsewhere}); !errors.As(err, &bad) || !strings.Contains(err.Error(), "127.0.0.1 is outside this agent's --allow-targets 10.0.0.0/8,*.svc") {
			t.Errorf("a target outside the agent's list: %v, want refused as bad input", err)
		}
		here, _ := serve(t, ServeFlags{AllowTargets: "127.0.0.1"})
		if r, err := apply(Flags{Agents: here}); err != nil || r.Steps[0].Sent == 0 {
			t.Errorf("a target in the agent's list: %v", err)
		}
		err := Serve(context.Background(), ServeFlags{TokenFile: tokenFile(t), Lease: DefaultLease, AllowTargets: "shop.example:8080"}, "test", nil, io.Discard)
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "a port is not part of it") {
			t.Errorf("--allow-targets shop.example:8080: %v, want bad input", err)
		}
	})
	t.Run("once", func(t *testing.T) {
		t.Parallel()
		addr, served := serve(t, ServeFlags{Once: true})
		if r, err := apply(Flags{Agents: addr}); err != nil || len(r.Steps) != 1 || r.Steps[0].Agents != 1 || r.Steps[0].Sent == 0 {
			t.Fatalf("a run on the agent: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("the agent --once returned %v, want nil", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the agent --once still serves 20 s after its run ended")
		}
	})
}
