package run

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The plans of docs/examples run against the built-in target, each with
// short steps (the quick flags a user would give): what each plan is for
// holds.

// examplePath is the path of a plan of docs/examples.
func examplePath(name string) string {
	return filepath.Join("..", "..", "docs", "examples", name)
}

// examplePlan reads a plan of docs/examples with its fixed addresses
// replaced (old → new pairs), applies q's flags named in set, as the
// command line does, and validates it. Its data files are the example's.
func examplePlan(t *testing.T, name string, q plan.Quick, set []string, replace ...string) *plan.Plan {
	t.Helper()
	text, err := os.ReadFile(examplePath(name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(examplePath(name), []byte(strings.NewReplacer(replace...).Replace(string(text))))
	if err == nil {
		err = p.Apply(&q, func(f string) bool { return slices.Contains(set, f) })
	}
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// exampleTarget is the built-in target as the comment of a plan of
// docs/examples starts it (its `go run ./cmd/ceiling demo-target FLAGS &`
// line), on a free port, posting its webhooks to webhook.
func exampleTarget(t *testing.T, name, webhook string) *demo.Server {
	t.Helper()
	text, err := os.ReadFile(examplePath(name))
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
	return startDemo(t, cfg)
}

// startDemo starts the built-in target with cfg until the test ends.
func startDemo(t *testing.T, cfg demo.Config) *demo.Server {
	t.Helper()
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

// runExample runs p on the wall clock and returns its result and what the
// run showed as it went; a run that could not run fails the test.
func runExample(t *testing.T, p *plan.Plan) (*results.Result, *recorder) {
	t.Helper()
	rec := newRecorder(p.Steps())
	res, err := runPlan(t, p, Options{Outputs: []Output{rec}, OnNote: rec.note})
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
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
	// 90 flood messages in 2 s (a tenth of 300/s, then of 600/s) against 60
	// at once and 1 a second: about 28 rejected. Without a warm-up every
	// message sent is counted, so ceiling's count can equal the target's.
	p := examplePlan(t, "flood.yaml", plan.Quick{Target: srv.URL(), Rate: "300,600", Step: "1s", Warmup: "0s"}, []string{"target", "rate", "step", "warmup"},
		"127.0.0.1:9911", fmt.Sprintf("127.0.0.1:%d", port), "drain: 30s", "drain: 5s", "latency: {p50: 50ms, p99: 200ms}", "latency: 1ms")
	res, _ := runExample(t, p)
	text := table(t, res)
	t.Log(text)
	for _, th := range res.Thresholds {
		// The latency terms are this machine's (a shared one, under -race,
		// at 600/s), and at 1 s steps messages in flight at a step's end
		// are not yet delivered: the sites' errors are the plan's point.
		if !th.OK && th.Expr == "sites.errors<1%" {
			t.Errorf("threshold %s failed (worst %v)\n%s", th.Expr, th.Value, text)
		}
	}
	if len(res.Invalid) != 0 {
		t.Errorf("invalid findings %q; want none (two websocket scenarios' acks are alike by design)", res.Invalid)
	}
	flood, sites := floodBreakdowns(t, res)
	rejected := targetStats(t, srv)["flood_rejected"]
	if flood.Limited == 0 || flood.Limited != rejected || flood.LatencyMS.P99 > 4000 {
		t.Errorf("flood: %d limited of %d (p99 %v ms), the target rejected %d; want the brake's rejections, all of them, limited quickly",
			flood.Limited, flood.Completed, flood.LatencyMS.P99, rejected)
	}
	if sites.Completed == 0 || sites.Failed != 0 || sites.Limited != 0 {
		t.Errorf("sites: %d completed, %d failed, %d limited; want the ordinary sites unharmed", sites.Completed, sites.Failed, sites.Limited)
	}
	checkFloodDelivery(t, res.Delivery, sites.OK+flood.OK)
	if !strings.Contains(text, "delivery p50/p99") || !strings.Contains(text, "the backlog cleared") {
		t.Errorf("the table lacks the delivery latency or the drain sentence:\n%s", text)
	}
}

// floodBreakdowns sums the flood scenario's breakdowns over the steps of
// res, and the other sites', checking that no frame of any waited for an
// ack that never came and that each step has what was delivered by its
// end.
func floodBreakdowns(t *testing.T, res *results.Result) (flood, sites results.Breakdown) {
	t.Helper()
	for i, s := range res.Steps {
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
	return flood, sites
}

// checkFloodDelivery checks that every one of the acked messages was
// expected at the sink and delivered there, after a complete drain, with
// its latency measured.
func checkFloodDelivery(t *testing.T, d *results.Delivery, acked int64) {
	t.Helper()
	if d == nil || d.Expected == 0 || d.Delivered != d.Expected || d.Lost != 0 || d.Undelivered != 0 || d.DrainComplete == nil || !*d.DrainComplete {
		t.Fatalf("delivery = %+v; want every accepted message delivered after a complete drain", d)
	}
	if d.Expected != acked {
		t.Errorf("%d messages expected at the sink, want the %d acked (the limited ones were never saved)", d.Expected, acked)
	}
	if d.LatencyMS.P50 <= 0 {
		t.Errorf("send → delivery latency = %+v, want measured", d.LatencyMS)
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
	p := examplePlan(t, "slack-delivery.yaml", plan.Quick{Target: srv.URL(), Rate: "30,60", Step: "1s", Warmup: "200ms"}, []string{"target", "rate", "step", "warmup"},
		"127.0.0.1:9911", fmt.Sprintf("127.0.0.1:%d", port), "drain: 60s", "drain: 5s")
	res, _ := runExample(t, p)
	var ok int64
	for i, s := range res.Steps {
		if s.Completed == 0 || s.Failed != 0 || s.Limited != 0 || s.Verdict == results.Invalid {
			t.Errorf("step %d: %d completed, %d failed %v, %d limited, %s; want every message saved", i+1, s.Completed, s.Failed, s.Errors, s.Limited, s.Verdict)
		}
		ok += s.OK
	}
	d := res.Delivery
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
	t.Parallel()
	srv := startDemo(t, demo.Config{SendLimit: 20})
	p := examplePlan(t, "gateway.yaml", plan.Quick{Target: srv.URL(), VUs: "4,8,8", Step: "500ms", Warmup: "1100ms", Think: "20ms"}, []string{"target", "vus", "step", "warmup", "think"})
	res, _ := runExample(t, p)
	text := table(t, res)
	t.Log(text)
	if len(res.Thresholds) != 5 {
		t.Errorf("thresholds %+v, want the plan's 5 judged", res.Thresholds)
	}
	for _, th := range res.Thresholds {
		if th.Expr == "login.p99<2s" && (!th.OK || th.Value <= 0) {
			t.Errorf("threshold %+v, want it held on the logins the first two steps made", th)
		}
	}
	for _, w := range res.Invalid {
		if strings.Contains(w, "login") {
			t.Errorf("invalid: %q, want no finding about the logins", w)
		}
	}
	if len(res.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(res.Steps))
	}
	if limited := checkGatewaySteps(t, res.Steps); limited == 0 {
		t.Errorf("no limited answer: the send limit of 20/s should have answered 429s")
	}
	if n := strings.Count(text, "↳ login"); n != 3 || !strings.Contains(text, "no new login: its 8 users logged in during an earlier step") {
		t.Errorf("%d login rows in the table, want 3, the last saying its users logged in earlier:\n%s", n, text)
	}
}

// checkGatewaySteps checks the logins of the gateway's three steps (4 new
// clients, 4 more, none) and that none failed or was late, and returns
// how many answers were limited.
func checkGatewaySteps(t *testing.T, steps []results.Step) (limited int64) {
	t.Helper()
	for i, s := range steps {
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
	return limited
}

// docs/examples/idle-sockets.yaml against the built-in target: an idle
// soak's steps are judged on the sockets they held, which the table shows.
// They send nothing: no achieved rate (0, not the 1/s of arrivals that ran
// nothing), no latency and no error share, "-" in the table and in the
// live line, not "1/s", "0 ms" and "0%".
func TestExampleIdleSockets(t *testing.T) {
	t.Parallel()
	srv := startDemo(t, demo.Config{})
	p := examplePlan(t, "idle-sockets.yaml", plan.Quick{Target: srv.URL(), Step: "500ms"}, []string{"target", "step"}, "connections: 2000", "connections: 50")
	res, rec := runExample(t, p)
	text := table(t, res)
	if !res.Passed {
		t.Errorf("the run did not pass: %+v", res.Outcome)
	}
	s := res.Steps[0]
	if s.Verdict != results.Healthy || s.WebSocket == nil || s.WebSocket.Open != 50 || !strings.Contains(text, "50/50") {
		t.Errorf("verdict %s (%s), sockets %+v; want HEALTHY with 50/50 held\n%s", s.Verdict, s.VerdictReason, s.WebSocket, text)
	}
	if s.Sent != 0 || s.Completed != 0 || s.AchievedRate != 0 || s.LatencyMS.Max != 0 {
		t.Errorf("sent %d, completed %d, achieved %v/s, max %v ms; want nothing sent, no rate, no latency", s.Sent, s.Completed, s.AchievedRate, s.LatencyMS.Max)
	}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[0] == "1" {
			if got := strings.Join(f[2:9], " "); got != "- - - - - - -" {
				t.Errorf("step 1's achieved, p50, p95, p99, max, errors, limited = %q, want \"-\" each:\n%s", got, text)
			}
		}
	}
	if live := rec.shown(); !strings.Contains(live, "achieved -  p50 -  p99 -  errors -") {
		t.Errorf("the step's progress line does not show \"-\" for its rate and latency:\n%s", live)
	}
}

// The per-endpoint table: docs/examples/login-pages.yaml against the
// built-in target, each page alone at each level (--each), repeated 3
// times: the Markdown has the per-endpoint table, medians with the
// throughput's CoV.
func TestExampleLoginPagesEach(t *testing.T) {
	long(t)
	t.Parallel()
	srv := startDemo(t, demo.Config{})
	p := examplePlan(t, "login-pages.yaml", plan.Quick{Target: srv.URL(), VUs: "2,4", Step: "300ms", Warmup: "100ms", Think: "5ms", Each: true, Repeat: 3},
		[]string{"target", "vus", "step", "warmup", "think", "each", "repeat"})
	res, _ := runExample(t, p)
	if !res.Passed {
		t.Errorf("the run did not pass: %+v", res.Outcome)
	}
	if len(res.Steps) != 6 {
		t.Fatalf("%d steps, want 3 pages × 2 levels", len(res.Steps))
	}
	for i, s := range res.Steps {
		want := []string{"landing", "dashboard", "billing"}[i/2]
		if s.Scenario != want || len(s.Scenarios) != 1 || s.Scenarios[0].Name != want || s.Repeat == nil || s.Repeat.N != 3 {
			t.Errorf("step %d: scenario %q with %d scenarios, repeat %+v; want %s alone, 3 repeats", i+1, s.Scenario, len(s.Scenarios), s.Repeat, want)
		}
	}
	var md strings.Builder
	if err := report.Markdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Per endpoint, each alone", "| Endpoint | Conc | Req/s | P50 | P95 | P99 | Success | AvgBody | CoV% |", "| dashboard | 4 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if len(res.Invalid) != 0 {
		t.Errorf("invalid findings %q; the pages differ", res.Invalid)
	}
}

// Two pages that, each alone, answer with the same body at every level
// (the login page a rejected session is redirected to) make the run
// INVALID, as the same-size guard does for a mix.
func TestEachSameBodiesInvalid(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Body: "<!doctype html><title>Log in</title><form method=post><input name=email><input name=password type=password></form>"})
	p := parsePlan(t, "target: %s\nload: {vus: [2, 3], step: 200ms, warmup: 0s, think: 5ms, each: true}\nscenarios:\n  - {name: dashboard, request: {url: /dashboard}}\n  - {name: billing, request: {url: /billing}}\n", srv.URL)
	res, _ := runExample(t, p)
	if text := table(t, res); res.Passed || !strings.Contains(text, "INVALID step 1: scenarios dashboard and billing, each run alone, return bodies of the same average size at every level") {
		t.Errorf("passed %v, want not, and an INVALID line for the same bodies:\n%s", res.Passed, text)
	}
	for _, s := range res.Steps {
		if s.Verdict != results.Invalid {
			t.Errorf("step %d (%s): verdict %s, want INVALID", s.Index+1, s.Scenario, s.Verdict)
		}
	}
}
