package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// examplePlan reads a plan of docs/examples with its fixed addresses
// replaced (old → new pairs), written into a temporary folder.
func examplePlan(t *testing.T, name string, replace ...string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return planFile(t, strings.NewReplacer(replace...).Replace(string(text)))
}

// exampleTarget is the built-in target as the comment of a plan of
// docs/examples starts it (its `go run ./cmd/ceiling demo-target FLAGS &`
// line), on a free port, posting its webhooks to webhook.
func exampleTarget(t *testing.T, name, webhook string) *demo.Server {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#\s+go run \./cmd/ceiling demo-target(.*?)\s*&\s*$`).FindStringSubmatch(string(text))
	if m == nil {
		t.Fatalf("%s: no `go run ./cmd/ceiling demo-target ... &` line says how to start the target", name)
	}
	var f demo.Flags
	fs := pflag.NewFlagSet("demo-target", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(strings.Fields(m[1])); err != nil {
		t.Fatalf("%s: demo-target%s: %v", name, m[1], err)
	}
	cfg, err := f.Config(fs.Changed)
	if err != nil {
		t.Fatalf("%s: demo-target%s: %v", name, m[1], err)
	}
	cfg.Addr, cfg.Webhook = "", webhook
	srv, err := demo.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// targetStats reads the built-in target's /stats.
func targetStats(t *testing.T, srv *demo.Server) map[string]int64 {
	t.Helper()
	resp, err := http.Get(srv.URL() + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st map[string]int64
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// docs/examples/flood.yaml against the built-in target started with the
// brake its comment gives (60 at once, then 1 a second, per site), with
// short steps at rates that run the flooding site past it, and a quick
// sink: the brake trips on the flooding site alone, its rejections are
// limited with their own latency and are exactly the rejections the target
// counted, the ordinary sites are unharmed, and every saved message reaches
// the sink. (With the target's default brake the example's flood was never
// rejected at all.)
func TestExampleFlood(t *testing.T) {
	t.Parallel()
	port := testkit.FreePort(t)
	srv := exampleTarget(t, "flood.yaml", fmt.Sprintf("http://127.0.0.1:%d/slack", port))
	plan := examplePlan(t, "flood.yaml", "127.0.0.1:9911", fmt.Sprintf("127.0.0.1:%d", port), "drain: 30s", "drain: 5s",
		"latency: {p50: 50ms, p99: 200ms}", "latency: 1ms")
	out := filepath.Join(t.TempDir(), "r.json")
	// 90 flood messages in 2 s (a tenth of 300/s, then of 600/s) against 60
	// at once and 1 a second: about 28 rejected. Without a warm-up every
	// message sent is counted, so ceiling's count can equal the target's.
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--target", srv.URL(), "--rate", "300,600", "--step", "1s", "--warmup", "0s", "--out", out)
	t.Log(stdout)
	r := readResult(t, out)
	if code != ExitOK && code != ExitThreshold {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, th := range r.Thresholds {
		// The latency terms are this machine's (a shared one, under -race,
		// at 600/s), and at 1 s steps messages in flight at a step's end
		// are not yet delivered: the sites' errors are the plan's point.
		if !th.OK && th.Expr == "sites.errors<1%" {
			t.Errorf("threshold %s failed (worst %v)\n%s", th.Expr, th.Value, stdout)
		}
	}
	if len(r.Invalid) != 0 {
		t.Errorf("invalid findings %q; want none (two websocket scenarios' acks are alike by design)", r.Invalid)
	}
	var flood, sites results.Breakdown
	for i, s := range r.Steps {
		for _, b := range s.Scenarios {
			sum := &sites
			if b.Name == "flood" {
				sum = &flood
			}
			sum.Completed, sum.OK, sum.Failed, sum.Limited = sum.Completed+b.Completed, sum.OK+b.OK, sum.Failed+b.Failed, sum.Limited+b.Limited
			sum.LatencyMS.P99 = max(sum.LatencyMS.P99, b.LatencyMS.P99)
			if b.Errors["ws_no_ack"] != 0 {
				t.Errorf("step %d: %s: %d ws_no_ack; want the brake's answers limited", i+1, b.Name, b.Errors["ws_no_ack"])
			}
		}
		if d := s.Delivery; d == nil || d.AtStepEnd == nil {
			t.Errorf("step %d: delivery %+v, want what had arrived by its end", i+1, d)
		}
	}
	rejected := targetStats(t, srv)["flood_rejected"]
	if flood.Limited == 0 || flood.Limited != rejected || flood.LatencyMS.P99 > 4000 {
		t.Errorf("flood: %d limited of %d (p99 %v ms), the target rejected %d; want the brake's rejections, all of them, limited quickly",
			flood.Limited, flood.Completed, flood.LatencyMS.P99, rejected)
	}
	if sites.Completed == 0 || sites.Failed != 0 || sites.Limited != 0 {
		t.Errorf("sites: %d completed, %d failed, %d limited; want the ordinary sites unharmed", sites.Completed, sites.Failed, sites.Limited)
	}
	d := r.Delivery
	if d == nil || d.Expected == 0 || d.Delivered != d.Expected || d.Lost != 0 || d.Undelivered != 0 || d.DrainComplete == nil || !*d.DrainComplete {
		t.Errorf("delivery = %+v; want every accepted message delivered after a complete drain", d)
	}
	if d != nil && d.Expected != sites.OK+flood.OK {
		t.Errorf("%d messages expected at the sink, want the %d acked (the limited ones were never saved)", d.Expected, sites.OK+flood.OK)
	}
	if d != nil && d.LatencyMS.P50 <= 0 {
		t.Errorf("send → delivery latency = %+v, want measured", d.LatencyMS)
	}
	if !strings.Contains(stdout, "delivery p50/p99") || !strings.Contains(stdout, "the backlog cleared") {
		t.Errorf("the table lacks the delivery latency or the drain sentence:\n%s", stdout)
	}
}

// docs/examples/slack-delivery.yaml against the built-in target started as
// its comment says, posting each saved message to the plan's sink, with
// short steps: every request is saved (none refused: the plan's URL and
// body are the target's), each acked message is expected at the sink and
// arrives there, and the figures agree with what the target posted.
func TestExampleSlackDelivery(t *testing.T) {
	t.Parallel()
	port := testkit.FreePort(t)
	srv := exampleTarget(t, "slack-delivery.yaml", fmt.Sprintf("http://127.0.0.1:%d/", port))
	plan := examplePlan(t, "slack-delivery.yaml", "127.0.0.1:9911", fmt.Sprintf("127.0.0.1:%d", port), "drain: 60s", "drain: 5s")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--target", srv.URL(), "--rate", "30,60", "--step", "1s", "--warmup", "200ms", "--out", out)
	t.Log(stdout)
	if code != ExitOK && code != ExitThreshold {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	var ok int64
	for i, s := range r.Steps {
		if s.Completed == 0 || s.Failed != 0 || s.Limited != 0 || s.Verdict == results.Invalid {
			t.Errorf("step %d: %d completed, %d failed %v, %d limited, %s; want every message saved", i+1, s.Completed, s.Failed, s.Errors, s.Limited, s.Verdict)
		}
		ok += s.OK
	}
	d := r.Delivery
	if d == nil || d.Expected < ok || d.Delivered != d.Expected || d.Lost != 0 || d.Undelivered != 0 || d.Duplicates != 0 {
		t.Fatalf("delivery = %+v; want each of the %d acked messages (and the warm-ups') delivered once", d, ok)
	}
	if posted := targetStats(t, srv)["webhook_ok"]; posted < d.Delivered {
		t.Errorf("the target posted %d messages, the sink counted %d delivered", posted, d.Delivered)
	}
}

// docs/examples/gateway.yaml against the built-in target, with short
// steps and a low send limit: logins are measured apart (one per client,
// none in the step's figures or scenarios), the rate limit's 429s are
// limited, not failed, and the closed model's thresholds (throughput>=,
// per scenario, login) are judged. The warm-up is longer than a second,
// as the plan's own: the clients log in during it, and those logins are
// their step's; the third step adds no client, so it makes no login, says
// so, and is not judged by login.p99 (nor INVALID for it).
func TestExampleGateway(t *testing.T) {
	long(t)
	srv, err := demo.Start(demo.Config{SendLimit: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	plan := examplePlan(t, "gateway.yaml", "users: users.csv", "users: "+filepath.Join(wd(t), "..", "..", "docs", "examples", "users.csv"))
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--target", srv.URL(), "--vus", "4,8,8", "--step", "500ms", "--warmup", "1100ms", "--think", "20ms", "--out", out)
	t.Log(stdout)
	if code != ExitOK && code != ExitThreshold {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if len(r.Thresholds) != 5 {
		t.Errorf("thresholds %+v, want the plan's 5 judged", r.Thresholds)
	}
	for _, th := range r.Thresholds {
		if th.Expr == "login.p99<2s" && (!th.OK || th.Value <= 0) {
			t.Errorf("threshold %+v, want it held on the logins the first two steps made", th)
		}
	}
	for _, w := range r.Invalid {
		if strings.Contains(w, "login") {
			t.Errorf("invalid: %q, want no finding about the logins", w)
		}
	}
	if len(r.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(r.Steps))
	}
	limited := int64(0)
	for i, s := range r.Steps {
		if s.Logins == nil || s.Logins.Failed != 0 {
			t.Errorf("step %d: logins %+v, want the clients' logins counted apart", i+1, s.Logins)
			continue
		}
		if want := []int64{4, 4, 0}[i]; s.Logins.OK != want || s.Logins.LoggedInEarlier != []int64{0, 4, 8}[i] {
			t.Errorf("step %d: logins %+v, want %d made in its warm-up (its new clients), the others logged in earlier", i+1, *s.Logins, want)
		}
		for _, b := range s.Scenarios {
			if b.Name == "login" {
				t.Errorf("step %d: a login scenario in the step's breakdown", i+1)
			}
		}
		if s.Failed != 0 || s.Late != 0 {
			t.Errorf("step %d: failed %d %v, late %d; want none (429s are limited; the closed model is never late)", i+1, s.Failed, s.Errors, s.Late)
		}
		limited += s.Limited
	}
	if limited == 0 {
		t.Errorf("no limited answer: the send limit of 20/s should have answered 429s")
	}
	if n := strings.Count(stdout, "↳ login"); n != 3 || !strings.Contains(stdout, "no new login: its 8 users logged in during an earlier step") {
		t.Errorf("%d login rows in the table, want 3, the last saying its users logged in earlier:\n%s", n, stdout)
	}
}

func wd(t *testing.T) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// docs/examples/idle-sockets.yaml against the built-in target: an idle
// soak's steps are judged on the sockets they held, which the table shows.
// They send nothing: no achieved rate (0, not the 1/s of arrivals that ran
// nothing), no latency and no error share, "-" in the table, not "1/s",
// "0 ms" and "0%".
func TestExampleIdleSockets(t *testing.T) {
	srv, err := demo.Start(demo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	plan := examplePlan(t, "idle-sockets.yaml", "connections: 2000", "connections: 50")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--target", srv.URL(), "--step", "500ms", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readResult(t, out).Steps[0]
	if s.Verdict != "HEALTHY" || s.WebSocket == nil || s.WebSocket.Open != 50 || !strings.Contains(stdout, "50/50") {
		t.Errorf("verdict %s (%s), sockets %+v; want HEALTHY with 50/50 held\n%s", s.Verdict, s.VerdictReason, s.WebSocket, stdout)
	}
	if s.Sent != 0 || s.Completed != 0 || s.AchievedRate != 0 || s.LatencyMS.Max != 0 {
		t.Errorf("sent %d, completed %d, achieved %v/s, max %v ms; want nothing sent, no rate, no latency", s.Sent, s.Completed, s.AchievedRate, s.LatencyMS.Max)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[0] == "1" {
			if got := strings.Join(f[2:9], " "); got != "- - - - - - -" {
				t.Errorf("step 1's achieved, p50, p95, p99, max, errors, limited = %q, want \"-\" each:\n%s", got, stdout)
			}
		}
	}
	if !strings.Contains(stderr, "achieved -  p50 -  p99 -  errors -") {
		t.Errorf("the step's progress line does not show \"-\" for its rate and latency:\n%s", stderr)
	}
}

// The per-endpoint table: docs/examples/login-pages.yaml against the built-in
// target with --each (each page alone at each level) and --repeat 3: the
// Markdown has the per-endpoint table, medians with the throughput's CoV.
func TestExampleLoginPagesEach(t *testing.T) {
	long(t)
	srv, err := demo.Start(demo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	plan := examplePlan(t, "login-pages.yaml", "users: users.csv", "users: "+filepath.Join(wd(t), "..", "..", "docs", "examples", "users.csv"))
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", plan, "--target", srv.URL(), "--vus", "2,4", "--step", "300ms", "--warmup", "100ms",
		"--think", "5ms", "--each", "--repeat", "3", "--md", "--out", out)
	t.Log(stdout)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if len(r.Steps) != 6 {
		t.Fatalf("%d steps, want 3 pages × 2 levels", len(r.Steps))
	}
	for i, s := range r.Steps {
		want := []string{"landing", "dashboard", "billing"}[i/2]
		if s.Scenario != want || len(s.Scenarios) != 1 || s.Scenarios[0].Name != want || s.Repeat == nil || s.Repeat.N != 3 {
			t.Errorf("step %d: scenario %q with %d scenarios, repeat %+v; want %s alone, 3 repeats", i+1, s.Scenario, len(s.Scenarios), s.Repeat, want)
		}
	}
	for _, want := range []string{"### Per endpoint, each alone", "| Endpoint | Conc | Req/s | P50 | P95 | P99 | Success | AvgBody | CoV% |", "| dashboard | 4 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if len(r.Invalid) != 0 {
		t.Errorf("invalid findings %q; the pages differ", r.Invalid)
	}
}

// Two pages that, each alone, answer with the same body at every level
// (the login page a rejected session is redirected to) make the run
// INVALID, as the same-size guard does for a mix.
func TestEachSameBodiesInvalid(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Body: "<!doctype html><title>Log in</title><form method=post><input name=email><input name=password type=password></form>"})
	plan := planFile(t, "target: "+srv.URL+"\nload: {vus: [2, 3], step: 200ms, warmup: 0s, think: 5ms}\nscenarios:\n  - {name: dashboard, request: {url: /dashboard}}\n  - {name: billing, request: {url: /billing}}\n")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, _ := ceiling(t, context.Background(), "run", plan, "--each", "--out", out, "--quiet")
	if !strings.Contains(stdout, "INVALID step 1: scenarios dashboard and billing, each run alone, return bodies of the same average size at every level") || code != ExitThreshold {
		t.Errorf("exit %d, want 1, and an INVALID line for the same bodies:\n%s", code, stdout)
	}
	for _, s := range readResult(t, out).Steps {
		if s.Verdict != results.Invalid {
			t.Errorf("step %d (%s): verdict %s, want INVALID", s.Index+1, s.Scenario, s.Verdict)
		}
	}
}
