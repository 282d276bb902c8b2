package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
)

const token = "0123456789abcdef0123"

// agent starts an agent on loopback, served as `ceiling agent` serves it
// (its http.Server and listener).
func agent(t *testing.T, s *Server) string {
	t.Helper()
	addr, _ := mortalAgent(t, s)
	return addr
}

// mortalAgent is agent, with what kills it as a kill -9 of its process
// would: its listener and every connection closed at once (a step under
// way, its heartbeats), its session ended.
func mortalAgent(t *testing.T, s *Server) (addr string, kill func()) {
	t.Helper()
	s.Token, s.Version = token, "test"
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = s.HTTPServer()
	srv.Listener = s.Listener(srv.Listener)
	srv.Start()
	t.Cleanup(func() { srv.Close(); s.Close() })
	return strings.TrimPrefix(srv.URL, "http://"), func() { srv.Listener.Close(); srv.CloseClientConnections(); s.Close() }
}

func target(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

func quickPlan(t *testing.T, url, extra string) *plan.Plan {
	t.Helper()
	return planText(t, "target: "+url+"\nload: {rates: [50], step: 300ms, warmup: 100ms}\nscenarios: [{request: {url: /}}]\n"+extra)
}

func planText(t *testing.T, text string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse("plan.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func connect(t *testing.T, p *plan.Plan, tok string, addrs ...string) (*Coordinator, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return Connect(ctx, Options{Addrs: addrs, Token: tok, Version: "test", Wait: 2 * time.Second}, p)
}

// The health check answers without a token; everything else needs it.
func TestAgentToken(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	resp, err := http.Get("http://" + addr + pathHealth)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	_, err = connect(t, quickPlan(t, target(t), ""), "not-the-token-at-all", addr)
	var bad *failure.InputError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "valid bearer token") {
		t.Errorf("a wrong token: %v, want refused as bad input", err)
	}
}

// An agent refuses a plan that would run a command on its machine, unless
// it allows commands; and a step above its bounds.
func TestAgentRefuses(t *testing.T) {
	addr := agent(t, &Server{Limits: Limits{MaxRate: 20}})
	p := quickPlan(t, target(t), "")
	p.Monitor.Command = "touch /tmp/pwned"
	c := &Coordinator{o: Options{Token: token}, client: http.DefaultClient, agents: []*peer{{addr: addr, url: "http://" + addr}}}
	// A coordinator strips the monitor section; this request, as anyone
	// could send it, keeps it.
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	o := Open{Plan: string(data), PlanFile: "plan.yaml"}
	o.Segment.N = 1
	err = c.call(context.Background(), c.agents[0], http.MethodPost, pathSession, o, &Opened{})
	if err == nil || !strings.Contains(err.Error(), "monitor.command") || !strings.Contains(err.Error(), "--allow-commands") {
		t.Errorf("a plan with monitor.command: %v, want refused", err)
	}
	// Nor does it hand its environment to the plan.
	t.Setenv("CEILING_TEST_AGENT_ENV", "x")
	p = quickPlan(t, target(t), "")
	p.Vars = map[string]string{"k": `{{env "CEILING_TEST_AGENT_ENV"}}`}
	if data, err = yaml.Marshal(p); err != nil {
		t.Fatal(err)
	}
	o.Plan = string(data)
	err = c.call(context.Background(), c.agents[0], http.MethodPost, pathSession, o, &Opened{})
	if err == nil || !strings.Contains(err.Error(), "CEILING_TEST_AGENT_ENV") || !strings.Contains(err.Error(), "environment") {
		t.Errorf("a plan that reads the environment: %v, want refused", err)
	}
	coord, err := connect(t, quickPlan(t, target(t), ""), token, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	st := run.Level(quickPlan(t, target(t), ""), 50)
	_, _, err = coord.Step(context.Background(), st)
	if err == nil || !strings.Contains(err.Error(), "above its --max-rate 20/s") {
		t.Errorf("a step of 50/s on an agent bound to 20/s: %v, want refused", err)
	}
}

// One coordinator at a time: a second is told the agent is busy.
func TestAgentBusy(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	p := quickPlan(t, target(t), "")
	first, err := connect(t, p, token, addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connect(t, p, token, addr); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("a second coordinator: %v, want busy", err)
	}
	first.Close()
	again, err := connect(t, p, token, addr)
	if err != nil {
		t.Errorf("after the first closed: %v", err)
	} else {
		again.Close()
	}
}

// An agent's address names it in messages and result.json, a password in
// it redacted.
func TestAgentAddrRedacted(t *testing.T) {
	t.Parallel()
	_, err := connect(t, quickPlan(t, target(t), ""), token, "http://user:hunter2@127.0.0.1:1")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "<redacted>") {
		t.Errorf("connect = %v, want the agent named without its password", err)
	}
}

// health asks an agent's health.
func health(t *testing.T, addr string) Health {
	t.Helper()
	resp, err := http.Get("http://" + addr + pathHealth)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// A coordinator holds its agent by heartbeats, through a step two leases
// long and after it; one that stops renewing (it died) loses the agent a
// lease after its last heartbeat, and a coordinator waiting for the agent
// then takes it over.
func TestAgentLease(t *testing.T) {
	t.Parallel()
	// Half a second: heartbeats every 125 ms, each with 250 ms to answer.
	const lease = 500 * time.Millisecond
	addr := agent(t, &Server{Lease: lease})
	p := quickPlan(t, target(t), "")
	first, err := connect(t, p, token, addr)
	if err != nil {
		t.Fatal(err)
	}
	st := run.Level(p, 100)
	st.Warmup, st.Length = 0, 2*lease
	res, _, err := first.Step(context.Background(), st)
	if err != nil || res.Sent < 80 || res.Sent > 120 {
		t.Fatalf("a step of 100/s for %v: sent %d, %v; want it run to its end (100), held by the heartbeats", st.Length, res.Sent, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Connect(ctx, Options{Addrs: []string{addr}, Token: token, Version: "test", Wait: lease}, p); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("still busy after %v", lease)) {
		t.Errorf("a second coordinator while the first renews its lease: %v, want still busy after its wait", err)
	}
	if h := health(t, addr); !h.Busy || h.LeaseS != lease.Seconds() || h.LeaseLeftS <= 0 || h.LeaseLeftS > lease.Seconds() {
		t.Fatalf("health %+v a lease after the step; want busy, held by the heartbeats, with at most %v left", h, lease)
	}

	// The first coordinator dies: its heartbeats stop, its session stays.
	first.stopBeats()
	first.beats.Wait()
	died := time.Now()
	second, err := Connect(context.Background(), Options{Addrs: []string{addr}, Token: token, Version: "test", Wait: 10 * time.Second}, p)
	if err != nil {
		t.Fatalf("a coordinator after the first stopped renewing: %v, want it to take the agent over", err)
	}
	defer second.Close()
	// The lease from the last heartbeat (at most a quarter of it before),
	// and the health checks' 500 ms between two looks.
	if waited := time.Since(died); waited < lease/2 || waited > lease+3*time.Second {
		t.Errorf("the second coordinator had the agent %v after the first stopped renewing, want about the lease, %v", waited, lease)
	}
	if _, _, err := first.Step(context.Background(), st); err == nil || !strings.Contains(err.Error(), "no such session") {
		t.Errorf("the first coordinator's step after its lease ended: %v, want its session gone", err)
	}
}

// A coordinator whose wait ends during a look at a busy agent's health
// says the agent is still busy, as the look before said: it said the
// agent gave no answer (a wait of a multiple of the 500 ms between looks
// ends as a look starts).
func TestAgentStillBusyWhenTheWaitCutsALook(t *testing.T) {
	t.Parallel()
	looks := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		looks++
		first := looks == 1
		mu.Unlock()
		if !first {
			<-r.Context().Done() // the next look outlasts the wait
			return
		}
		json.NewEncoder(w).Encode(Health{API: API, Version: "test", Busy: true, LeaseS: 1, LeaseLeftS: 1})
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	const wait = 700 * time.Millisecond // a look at 0 and at 500 ms, cut at 700
	_, err := Connect(context.Background(), Options{Addrs: []string{addr}, Token: token, Version: "test", Wait: wait}, quickPlan(t, target(t), ""))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("still busy after %v", wait)) || !strings.Contains(err.Error(), "another coordinator's run") {
		t.Errorf("Connect to an agent busy at the last look: %v, want still busy after the wait", err)
	}
}

// A plan bomb sent to an agent is refused at once, and the agent goes on
// serving: a merge-key bomb under data: (30 levels, 1.2 KB, which a raw
// YAML unmarshal expanded without end while the agent held its lock) and
// lists nested 40,000 deep (80 KB, which ran the parser out of memory).
func TestAgentRefusesPlanBombs(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	c := &Coordinator{o: Options{Token: token}, client: http.DefaultClient, agents: []*peer{{addr: addr, url: "http://" + addr}}}
	var merge strings.Builder
	merge.WriteString("vars:\n  a0: &a0 {k: v}\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&merge, "  a%d: &a%d {<<: [*a%d, *a%d], x%d: 1}\n", i, i, i-1, i-1, i)
	}
	merge.WriteString("data: {users: u.csv, <<: *a30}\ntarget: http://127.0.0.1:1\nscenarios: [{request: {url: /}}]\n")
	deep := "target: http://127.0.0.1:1\nscenarios: [{request: {url: /, json: " + strings.Repeat("[", 40000) + strings.Repeat("]", 40000) + "}}]\n"
	for name, text := range map[string]string{"merge-key bomb": merge.String(), "deep lists": deep} {
		o := Open{Plan: text, PlanFile: "plan.yaml"}
		o.Segment.N = 1
		start := time.Now()
		err := c.call(context.Background(), c.agents[0], http.MethodPost, pathSession, o, &Opened{})
		if took := time.Since(start); err == nil || took > 5*time.Second {
			t.Errorf("%s: %v after %v, want refused at once", name, err, took)
		}
		t.Logf("%s: refused in %v: %.200v", name, time.Since(start), err)
	}
	if h := health(t, addr); h.Busy {
		t.Errorf("health after the bombs %+v: want the agent free", h)
	}
}

// The health check answers at once while a session opens, however long
// the agent's check of the target takes (it held the agent's lock: a
// slow target kept the health check waiting as long), and says busy.
func TestAgentHealthWhileOpening(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	asked, release := make(chan struct{}, 1), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(slow.Close)
	p := quickPlan(t, slow.URL, "")
	opened := make(chan error, 1)
	go func() {
		c, err := connect(t, p, token, addr)
		if err == nil {
			c.Close()
		}
		opened <- err
	}()
	var once sync.Once
	done := func() {
		once.Do(func() { close(release) })
		if err := <-opened; err != nil {
			t.Errorf("the session, once the target answered: %v", err)
		}
	}
	defer done()
	select {
	case <-asked: // the agent checks the target: the session is opening
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not check the target")
	}
	start := time.Now()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + pathHealth)
	took := time.Since(start)
	if err != nil || took > 2*time.Second {
		t.Fatalf("health while a session opens: %v after %v, want an answer at once", err, took)
	}
	t.Logf("health while a session opens: answered in %v", took)
	var h Health
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if !h.Busy {
		t.Errorf("health while a session opens = %+v, want busy", h)
	}
	if _, err := connect(t, quickPlan(t, target(t), ""), token, addr); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("a second coordinator while the first one's session opens: %v, want busy", err)
	}
}

// A step asks for what a plan may: at most plan.MaxRate a second (a
// ramp's both ends too) and plan.MaxVUs users, no negative rate, a
// length of plan.MinStep or more, and an id. Anything else is refused at
// once (a rate of 1e300 or 10^8 users ran the agent out of memory), and
// the session goes on.
func TestAgentRefusesStepsBeyondAPlan(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	c, err := connect(t, quickPlan(t, target(t), ""), token, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Far enough ahead that a step let through waits, rather than runs,
	// until the test's client gives up.
	later := time.Now().Add(50 * time.Second).UnixNano()
	ok := StepRequest{ID: "x", Rate: 10, Length: time.Second, StartUnixNano: later}
	tests := []struct {
		name   string
		change func(*StepRequest)
		want   string
	}{
		{"a rate of 1e300", func(r *StepRequest) { r.Rate = 1e300 }, "want 0 to 10000000/s"},
		{"a ramp to 1e300", func(r *StepRequest) { r.Ramp, r.RampFrom, r.RampTo = true, 10, 1e300 }, "want 0 to 10000000/s"},
		{"a ramp from -1e9", func(r *StepRequest) { r.Ramp, r.RampFrom, r.RampTo = true, -1e9, 10 }, "want 0 to 10000000/s"},
		{"a negative rate", func(r *StepRequest) { r.Rate = -1 }, "want 0 to 10000000/s"},
		{"10^8 users", func(r *StepRequest) { r.Rate, r.VUs = 0, 100_000_000 }, "want 0 to 1000000"},
		{"a step of 1ns", func(r *StepRequest) { r.Length = time.Nanosecond }, "want at least 100ms"},
		{"a negative warm-up", func(r *StepRequest) { r.Warmup = -time.Second }, "no negative warm-up"},
		{"no id", func(r *StepRequest) { r.ID = "" }, "wants an id"},
	}
	a := c.agents[0]
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ok
			tt.change(&req)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			err := c.call(ctx, a, http.MethodPost, pathSession+"/"+a.session+"/step", req, &StepResult{})
			var p *Problem
			if !errors.As(err, &p) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("a step with %s: %v, want refused at once saying %q", tt.name, err, tt.want)
			}
		})
	}
	st := run.Level(quickPlan(t, target(t), ""), 20)
	if res, _, err := c.Step(context.Background(), st); err != nil || res.Sent == 0 {
		t.Errorf("a step after those: sent %d, %v; want it run", res.Sent, err)
	}
}

// A step runs once: the same request sent again (replayed by whoever saw
// it) is refused, 409, and the agent does not load the target again.
func TestAgentRunsAStepOnce(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	addr := agent(t, &Server{})
	c, err := connect(t, quickPlan(t, srv.URL, ""), token, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := c.agents[0]
	req := StepRequest{ID: "7", Rate: 20, Length: 300 * time.Millisecond, StartUnixNano: time.Now().UnixNano()}
	var first StepResult
	if err := c.call(context.Background(), a, http.MethodPost, pathSession+"/"+a.session+"/step", req, &first); err != nil || first.Step.Sent == 0 {
		t.Fatalf("the step: sent %d, %v", first.Step.Sent, err)
	}
	before := hits.Load()
	for range 2 {
		req.StartUnixNano = time.Now().UnixNano()
		var again StepResult
		err := c.call(context.Background(), a, http.MethodPost, pathSession+"/"+a.session+"/step", req, &again)
		var p *Problem
		if !errors.As(err, &p) || !strings.Contains(err.Error(), "already ran a step of that id") {
			t.Errorf("the same step again: sent %d, %v; want refused as a replay", again.Step.Sent, err)
		}
	}
	if after := hits.Load(); after != before {
		t.Errorf("the target got %d more requests after the replays, want none", after-before)
	}
	// The coordinator's own steps each have an id of their own.
	for range 2 {
		if res, _, err := c.Step(context.Background(), run.Level(quickPlan(t, srv.URL, ""), 20)); err != nil || res.Sent == 0 {
			t.Errorf("a coordinator's step: sent %d, %v", res.Sent, err)
		}
	}
}

// A plan whose body is in a file (body_file) is refused before any agent
// is asked: the file is not sent along.
func TestCoordinatorRefusesBodyFiles(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "order.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte("target: "+target(t)+"\nload: {rates: [50], step: 300ms}\nscenarios: [{request: {method: POST, url: /, body_file: order.json}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = connect(t, p, token, addr)
	var bad *failure.InputError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "scenarios[0].request.body_file: a body in a file is not sent to the agents") {
		t.Errorf("Connect(a plan with a body_file) = %v, want it refused as bad input", err)
	}
}
