package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// tokenFile writes an agents' token for a test.
func tokenFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("test-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startAgent starts this test binary as `ceiling agent` on a free
// loopback port, as a process of its own, and returns its address and
// process; the test's end kills it (by its PID) if it still runs.
func startAgent(t *testing.T, token string, args ...string) (string, *os.Process) {
	addr, cmd := startAgentCmd(t, token, args...)
	return addr, cmd.Process
}

// startAgentCmd is startAgent, with the command (to wait for its exit).
func startAgentCmd(t *testing.T, token string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"agent", "--listen", "127.0.0.1:0", "--token-file", token}, args...)...)
	cmd.Env = append(os.Environ(), asCeiling+"=1")
	testkit.Group(t, cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`on https?://(127\.0\.0\.1:\d+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return a, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not say where it listens")
	}
	return "", nil
}

// Three agents, each its own process, at 600/s in all against a 20 ms
// endpoint: exactly the arrivals of one process, and the same percentiles
// within noise, merged from their histograms.
func TestAgentsMatchOneProcess(t *testing.T) {
	long(t)
	token := tokenFile(t)
	var addrs []string
	for range 3 {
		a, _ := startAgent(t, token)
		addrs = append(addrs, a)
	}
	url := delayServer(t, 20*time.Millisecond).URL + "/api"
	dir := t.TempDir()
	args := []string{"run", "--url", url, "--rate", "600", "--step", "1s", "--warmup", "300ms", "--quiet"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if code, stdout, stderr := ceiling(t, ctx, append(args, "--out", filepath.Join(dir, "one.json"))...); code != ExitOK {
		t.Fatalf("one process: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := ceiling(t, ctx, append(args, "--out", filepath.Join(dir, "three.json"), "--agents", strings.Join(addrs, ","), "--token-file", token)...)
	t.Log(stdout)
	if code != ExitOK {
		t.Fatalf("three agents: exit %d\n%s\n%s", code, stdout, stderr)
	}
	one, three := readResult(t, filepath.Join(dir, "one.json")), readResult(t, filepath.Join(dir, "three.json"))
	a, b := one.Steps[0], three.Steps[0]
	if a.GeneratorLimited || b.GeneratorLimited {
		t.Skipf("this machine could not hold 600/s (one: %v, three: %v): nothing to compare", a.VerdictReason, b.VerdictReason)
	}
	t.Logf("one process: sent %d, p50 %.2f ms, p99 %.2f ms; three agents: sent %d, p50 %.2f ms, p99 %.2f ms", a.Sent, a.LatencyMS.P50, a.LatencyMS.P99, b.Sent, b.LatencyMS.P50, b.LatencyMS.P99)
	// Every arrival is accounted for: sent, or (the last ones of a window
	// a busy machine reached too late) said not sent.
	if a.Sent+a.NotSent != 600 || b.Sent+b.NotSent != 600 || b.TargetRate != 600 || a.NotSent > 6 || b.NotSent > 6 {
		t.Errorf("arrivals: one process %d sent + %d not, three agents %d + %d (target %v); want 600 each, exactly, nearly all sent",
			a.Sent, a.NotSent, b.Sent, b.NotSent, b.TargetRate)
	}
	if math.Abs(a.LatencyMS.P50-b.LatencyMS.P50) > 3 || b.LatencyMS.P99 > 2*a.LatencyMS.P99+10 || a.LatencyMS.P99 > 2*b.LatencyMS.P99+10 {
		t.Errorf("p50 %.1f vs %.1f ms, p99 %.1f vs %.1f ms: want the same within noise", a.LatencyMS.P50, b.LatencyMS.P50, a.LatencyMS.P99, b.LatencyMS.P99)
	}
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
	if h, err := metricsHist(b.Histogram); err != nil || h != b.Completed {
		t.Errorf("the merged histogram holds %d samples (%v), the step completed %d", h, err, b.Completed)
	}
	if !strings.Contains(stdout, "agents") {
		t.Errorf("the table does not show the agents:\n%s", stdout)
	}
}

// An agent killed during a step makes that step INVALID ("agent ADDR lost
// after N s"), never a smaller rate passed off as the whole: the step
// keeps its planned 100/s, lists the lost agent's share (segment 2/2,
// 50/s) and warns; the run stops with exit 3, its finished steps kept,
// and the table is printed all the same.
func TestAgentLost(t *testing.T) {
	long(t)
	token := tokenFile(t)
	a1, _ := startAgent(t, token)
	a2, p2 := startAgent(t, token)
	url := delayServer(t, 5*time.Millisecond).URL + "/"
	out := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		// Kill the second agent (SIGKILL) in the second step's counted
		// window: once result.json holds the first step, the second starts
		// half a second later, with 200 ms of warm-up, then 2 s counted;
		// 1.5 s later is a second into the step.
		for ctx.Err() == nil {
			if r, err := results.Read(out); err == nil && len(r.Steps) == 1 {
				time.Sleep(1500 * time.Millisecond)
				p2.Kill()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	code, stdout, stderr := ceiling(t, ctx, "run", "--url", url, "--rate", "50,100,100", "--step", "2s", "--warmup", "200ms",
		"--agents", a1+","+a2, "--token-file", token, "--out", out, "--quiet")
	t.Log(stdout, stderr)
	if code != ExitCannotRun {
		t.Fatalf("exit %d, want %d (an agent lost)", code, ExitCannotRun)
	}
	r := readResult(t, out)
	if len(r.Steps) != 2 || r.Steps[0].Verdict != results.Healthy || r.Steps[1].Verdict != results.Invalid ||
		!strings.Contains(r.Steps[1].VerdictReason, "agent "+a2+" lost after") || r.Passed || r.Unfinished {
		t.Fatalf("steps %d: %+v; want the first kept, the second INVALID naming the lost agent, the run not passed", len(r.Steps), verdicts(r))
	}
	s := r.Steps[1]
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
		t.Errorf("lost after %.1f s; want within the step (the agent was killed about 1 s after its start, of 2.7 s)", after)
	}
	got.AfterS = 0
	if got != want {
		t.Errorf("lost_parts[0] = %+v, want %+v", got, want)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "50.0% of the load (50/s of the step's 100/s)") }) {
		t.Errorf("warnings %q; want one saying which share of the load was lost", s.Warnings)
	}
	row := regexp.MustCompile(`(?m)^2 +100/s +[0-9.]+/s .* INVALID \(agent ` + regexp.QuoteMeta(a2) + ` lost after`)
	if !row.MatchString(stdout) || !strings.Contains(stdout, a2+" LOST after") {
		t.Errorf("stdout does not show the table of the run, with the lost step at its planned 100/s, INVALID, and the lost agent:\n%s", stdout)
	}
	if !strings.Contains(stderr, "lost") {
		t.Errorf("stderr does not say the agent was lost: %s", stderr)
	}
}

// agentHealth asks an agent's health check (no token needed).
func agentHealth(t *testing.T, addr string) (busy bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Busy bool `json:"busy"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h.Busy
}

// A coordinator holds its agent by heartbeats, during a long step too;
// killed (SIGKILL), it stops renewing, and the agent is free a lease
// later: a second coordinator waiting for it takes it over then, not
// minutes later.
func TestAgentTakenOverAfterCoordinatorKilled(t *testing.T) {
	long(t)
	const lease = 2 * time.Second
	token := tokenFile(t)
	addr, _ := startAgent(t, token, "--lease", lease.String())
	url := delayServer(t, 0).URL + "/"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	first := exec.Command(exe, "run", "--url", url, "--rate", "20", "--step", "60s", "--warmup", "0s",
		"--agents", addr, "--token-file", token, "--out", filepath.Join(t.TempDir(), "first.json"), "--quiet")
	first.Env = append(os.Environ(), asCeiling+"=1")
	testkit.Group(t, first)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Process.Kill(); first.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for !agentHealth(t, addr) {
		if time.Now().After(deadline) {
			t.Fatal("the first coordinator did not open its session on the agent within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Held past the lease by the heartbeats, in the middle of its step.
	time.Sleep(lease + lease/2)
	if !agentHealth(t, addr) {
		t.Fatalf("the agent is free %v into a live coordinator's 60 s step, want it held by the heartbeats", lease+lease/2)
	}
	first.Process.Kill()
	first.Wait()
	killed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "second.json")
	code, stdout, stderr := ceiling(t, ctx, "run", "--url", url, "--rate", "20", "--step", "300ms", "--warmup", "0s",
		"--agents", addr, "--token-file", token, "--agents-timeout", "20s", "--out", out, "--quiet")
	took := time.Since(killed)
	if code != ExitOK {
		t.Fatalf("a second coordinator after the first was killed: exit %d after %v\n%s\n%s", code, took, stdout, stderr)
	}
	// The lease from the last heartbeat, a look at the health every
	// 500 ms, then the run's own second or so.
	t.Logf("the second coordinator's run ended %v after the first was killed (lease %v)", took, lease)
	if took > lease+8*time.Second {
		t.Errorf("the second coordinator's run ended %v after the first was killed, want within about the lease (%v) and its own run", took, lease)
	}
	if r := readResult(t, out); len(r.Steps) != 1 || r.Steps[0].Sent == 0 {
		t.Errorf("the second run: %+v, want its one step run on the agent", verdicts(r))
	}
}

func verdicts(r *results.Result) []string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.Verdict+": "+s.VerdictReason)
	}
	return out
}

// An agent refuses a coordinator with the wrong token, and a plan that
// would run a command on its machine.
func TestAgentsRefuse(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	addr, _ := startAgent(t, token)
	url := delayServer(t, 0).URL + "/"
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("another-token-0123456789"), 0o600)
	code, _, stderr := ceiling(t, context.Background(), "run", "--url", url, "--rate", "10", "--step", "300ms",
		"--agents", addr, "--token-file", wrong, "--out", filepath.Join(t.TempDir(), "r.json"), "--quiet")
	if code != ExitBadInput || !strings.Contains(stderr, "valid bearer token") {
		t.Errorf("a wrong token: exit %d, %q; want refused (exit 2)", code, stderr)
	}
	// A plan whose monitor.command the coordinator would run: the
	// coordinator strips it, so ask the agent directly through a run that
	// cannot strip it: the agent's own refusal is tested in package agent.
	plan := writePlan(t, "target: "+url+"\nload: {rates: [10], step: 300ms}\nsinks: [{name: hook, listen: 127.0.0.1:0}]\nscenarios: [{request: {url: /}}]\n")
	code, _, stderr = ceiling(t, context.Background(), "run", plan, "--agents", addr, "--token-file", token, "--out", filepath.Join(t.TempDir(), "r.json"), "--quiet")
	if code != ExitBadInput || !strings.Contains(stderr, "sinks") {
		t.Errorf("a plan with sinks: exit %d, %q; want refused (exit 2)", code, stderr)
	}
}

// metricsHist counts the samples of an encoded histogram.
func metricsHist(enc string) (int64, error) {
	h, err := metrics.Decode(enc)
	if err != nil {
		return 0, err
	}
	return h.TotalCount(), nil
}

// find through two agents finds the edge one process finds, on a target
// of known capacity (200 requests a second, 503 past it).
func TestAgentsFind(t *testing.T) {
	long(t)
	token := tokenFile(t)
	a1, _ := startAgent(t, token)
	a2, _ := startAgent(t, token)
	url := capacityServer(t, 200).URL + "/"
	dir := t.TempDir()
	args := []string{"find", "--url", url, "--start", "50", "--max", "800", "--precision", "10%", "--slo", "errors<1%", "--step", "600ms", "--warmup", "200ms", "--quiet"}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	edges := map[string]float64{}
	for name, extra := range map[string][]string{"one": nil, "two agents": {"--agents", a1 + "," + a2, "--token-file", token}} {
		out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		code, stdout, stderr := ceiling(t, ctx, append(append(args, "--out", out), extra...)...)
		r := readResult(t, out)
		for _, s := range r.Steps {
			// A busy machine (the race detector, a neighbour) can make the
			// generator late: the search then stops, rightly, at no edge.
			if s.GeneratorLimited {
				t.Skipf("%s: step %d generator-limited on this machine: %s", name, s.Index+1, s.VerdictReason)
			}
		}
		if code != ExitOK || r.Edge == nil {
			t.Fatalf("%s: exit %d, edge %v\n%s\n%s", name, code, r.Edge, stdout, stderr)
		}
		edges[name] = r.Edge.Rate
		t.Logf("%s: %s", name, r.Search.Answer)
	}
	one, two := edges["one"], edges["two agents"]
	if one < 120 || one > 260 || math.Abs(one-two)/one > 0.2 {
		t.Errorf("edges: one process %.0f/s, two agents %.0f/s; want both near the target's 200/s and within the search's precision of each other", one, two)
	}
}

// run --segment i/N on two machines (here, two processes at once), then
// merge: the segments' arrivals add up to the whole's, and the merge
// refuses inputs that are not every segment of one plan.
func TestSegmentsMerge(t *testing.T) {
	long(t)
	url := delayServer(t, 10*time.Millisecond).URL + "/"
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i <= 2; i++ {
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, exe, "run", "--url", url, "--rate", "100,200", "--step", "1s", "--warmup", "200ms",
				"--segment", fmt.Sprintf("%d/2", i), "--out", filepath.Join(dir, fmt.Sprintf("s%d.json", i)), "--quiet")
			cmd.Env = append(os.Environ(), asCeiling+"=1")
			testkit.Group(t, cmd)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("segment %d/2: %v\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	s1, s2, merged := filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2.json"), filepath.Join(dir, "merged.json")
	code, stdout, stderr := ceiling(t, ctx, "merge", s1, s2, "--out", merged, "--quiet")
	t.Log(stdout)
	if code != ExitOK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, merged)
	// Every arrival of the window is accounted: sent, or (on a starved
	// machine, said) left unsent at the window's end.
	if len(r.Steps) != 2 || r.Steps[0].Sent+r.Steps[0].NotSent != 100 || r.Steps[1].Sent+r.Steps[1].NotSent != 200 ||
		r.Steps[1].TargetRate != 200 || r.Steps[0].Verdict == "" {
		t.Errorf("merged steps %+v; want 100 and 200 arrivals, judged", verdicts(r))
	}
	if code, _, stderr := ceiling(t, ctx, "merge", s1, "--out", merged, "--quiet"); code != ExitBadInput || !strings.Contains(stderr, "segment 2/2 is missing") {
		t.Errorf("one segment of two: exit %d, %q; want refused", code, stderr)
	}
	if code, _, stderr := ceiling(t, ctx, "merge", s1, s1, "--out", merged, "--quiet"); code != ExitBadInput || !strings.Contains(stderr, "given twice") {
		t.Errorf("a segment twice: exit %d, %q; want refused", code, stderr)
	}
	other := filepath.Join(dir, "other.json")
	if code, stdout, stderr := ceiling(t, ctx, "run", "--url", url, "--rate", "100", "--step", "300ms", "--segment", "2/2", "--out", other, "--quiet"); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := ceiling(t, ctx, "merge", s1, other, "--out", merged, "--quiet"); code != ExitBadInput || !strings.Contains(stderr, "another plan") {
		t.Errorf("segments of two plans: exit %d, %q; want refused", code, stderr)
	}
}

// The closed model's users are split over the agents as evenly as they
// go, and add up to the step's.
func TestAgentsClosedModel(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	a1, _ := startAgent(t, token)
	a2, _ := startAgent(t, token)
	url := delayServer(t, 5*time.Millisecond).URL + "/"
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", url, "--vus", "3", "--step", "500ms", "--warmup", "100ms",
		"--agents", a1+","+a2, "--token-file", token, "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readResult(t, out).Steps[0]
	if s.Model != "closed" || s.VUs != 3 || len(s.Parts) != 2 || s.Parts[0].VUs != 2 || s.Parts[1].VUs != 1 || s.Completed == 0 {
		t.Errorf("step %s, %d users, parts %+v; want 3 users split 2 and 1", s.Model, s.VUs, s.Parts)
	}
	code, _, stderr = ceiling(t, context.Background(), "run", "--url", url, "--vus", "1", "--step", "300ms",
		"--agents", a1+","+a2, "--token-file", token, "--out", out, "--quiet")
	if code != ExitBadInput || !strings.Contains(stderr, "2 agents for 1 users") {
		t.Errorf("1 user on 2 agents: exit %d, %q; want refused", code, stderr)
	}
}

// An agent started --once exits 0 when its run is over (a Kubernetes
// Job's pod completes), and --emit-result prints the result between the
// markers ceiling k8s reads back from the coordinator's log.
func TestAgentOnceAndEmit(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	addr, cmd := startAgentCmd(t, token, "--once")
	url := delayServer(t, 0).URL + "/"
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", url, "--rate", "20", "--step", "300ms", "--warmup", "100ms",
		"--agents", addr, "--token-file", token, "--out", filepath.Join(t.TempDir(), "r.json"), "--emit-result", "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, err := results.ReadLog(strings.NewReader(stdout))
	if err != nil || len(r.Steps) != 1 || r.Steps[0].Agents != 1 || !r.Passed {
		t.Errorf("the emitted result: %v; want the run's, with its one agent", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the agent exited with %v, want 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("the agent --once still runs 20 s after its run ended")
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

// An agent over TLS: the coordinator trusts its certificate through
// --agents-ca, and refuses it without.
func TestAgentTLS(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	cert, key := selfSigned(t)
	addr, _ := startAgent(t, token, "--tls-cert", cert, "--tls-key", key)
	url := delayServer(t, 0).URL + "/"
	args := []string{"run", "--url", url, "--rate", "20", "--step", "300ms", "--warmup", "100ms", "--agents", "https://" + addr, "--token-file", token,
		"--agents-timeout", "2s", "--out", filepath.Join(t.TempDir(), "r.json"), "--quiet"}
	if code, stdout, stderr := ceiling(t, context.Background(), append(args, "--agents-ca", cert)...); code != ExitOK {
		t.Fatalf("with --agents-ca: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := ceiling(t, context.Background(), args...); code == ExitOK || !strings.Contains(stderr, "certificate") {
		t.Errorf("without --agents-ca: exit %d, %q; want the unknown certificate refused", code, stderr)
	}
}

// An agent started with --allow-targets refuses a run whose target is
// outside its list (exit 2, naming the host and the list), and runs one
// whose target is in it; a list that does not read is bad input.
func TestAgentAllowTargets(t *testing.T) {
	t.Parallel()
	token := tokenFile(t)
	url := delayServer(t, 0).URL + "/"
	args := func(addr string) []string {
		return []string{"run", "--url", url, "--rate", "10", "--step", "300ms", "--warmup", "100ms",
			"--agents", addr, "--token-file", token, "--agents-timeout", "5s", "--out", filepath.Join(t.TempDir(), "r.json"), "--quiet"}
	}
	elsewhere, _ := startAgent(t, token, "--allow-targets", "10.0.0.0/8,*.svc")
	code, _, stderr := ceiling(t, context.Background(), args(elsewhere)...)
	if code != ExitBadInput || !strings.Contains(stderr, "127.0.0.1 is outside this agent's --allow-targets 10.0.0.0/8,*.svc") {
		t.Errorf("a target outside the agent's list: exit %d, %q; want refused (exit 2)", code, stderr)
	}
	here, _ := startAgent(t, token, "--allow-targets", "127.0.0.1")
	if code, stdout, stderr := ceiling(t, context.Background(), args(here)...); code != ExitOK {
		t.Errorf("a target in the agent's list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = ceiling(t, context.Background(), "agent", "--token-file", token, "--allow-targets", "shop.example:8080")
	if code != ExitBadInput || !strings.Contains(stderr, "a port is not part of it") {
		t.Errorf("--allow-targets shop.example:8080: exit %d, %q; want bad input", code, stderr)
	}
}
