package draft

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
	"time"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// Drafts run: each source of the built-in target's API (curl lines, the
// shipped HAR recording, the shipped OpenAPI document) drafted, written,
// validated and run against the target, in this process, as `ceiling
// init`, `validate` and `run` do one after the other.

// demoTarget starts the built-in target on a free loopback port and
// returns its host:port.
func demoTarget(t *testing.T) string {
	t.Helper()
	srv, err := demo.Start(demo.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return strings.TrimPrefix(srv.URL(), "http://")
}

// example copies a source of docs/examples into a folder of the test's,
// the built-in target's address made addr.
func example(t *testing.T, name, addr string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "127.0.0.1:8080", addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// roundTrip drafts a plan with f and writes it with its bodies, as init
// does; loads and checks it, as validate does; and runs it with the quick
// flags of q (a step of 1 s after 200 ms of warm-up, unless q says) against
// the built-in target: the run passes, and every scenario (and every
// login) was answered as expected, 2xx or the recorded redirect of a
// login. It returns the plan.
func roundTrip(t *testing.T, f Flags, q plan.Quick) string {
	t.Helper()
	dir := t.TempDir()
	f.File = filepath.Join(dir, "plan.yaml")
	d, err := f.Draft(context.Background())
	if err != nil {
		t.Fatalf("draft: %v", err)
	}
	for _, file := range append(d.Files, File{Name: f.File, Data: d.YAML}) {
		if err := os.WriteFile(file.Name, file.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := string(d.YAML)
	p, err := plan.LoadFile(f.File)
	if err == nil {
		_, err = run.Terms(p)
	}
	if err != nil {
		t.Fatalf("the plan does not validate: %v\n%s", err, text)
	}
	if q.Step == "" {
		q.Step = "1s"
	}
	if q.Warmup == "" {
		q.Warmup = "200ms"
	}
	given := map[string]string{"rate": q.Rate, "vus": q.VUs, "step": q.Step, "warmup": q.Warmup, "think": q.Think}
	if err := p.Apply(&q, func(name string) bool { return given[name] != "" }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := run.Open(ctx, p, run.Options{Out: filepath.Join(dir, "result.json")})
	if err != nil {
		t.Fatalf("open the run: %v\n%s", err, text)
	}
	defer s.Close()
	r, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("the run: %v\n%s", err, text)
	}
	machineOnly(t, r, text)
	seen := map[string]int64{}
	for _, st := range r.Steps {
		for _, sc := range st.Scenarios {
			seen[sc.Name] += sc.Completed
			if sc.Failed > 0 || sc.Limited > 0 || sc.OK != sc.Completed {
				t.Errorf("step %d, %s: %d completed, %d ok, %d failed %v, %d limited: want every one answered as expected",
					st.Index+1, sc.Name, sc.Completed, sc.OK, sc.Failed, sc.Errors, sc.Limited)
			}
		}
		if l := st.Logins; l != nil && l.Failed > 0 {
			t.Errorf("step %d: %d logins failed %v", st.Index+1, l.Failed, l.ByClass)
		}
	}
	for name, n := range seen {
		if n == 0 {
			t.Errorf("%s: no exchange completed in the run", name)
		}
	}
	if t.Failed() {
		t.Logf("the plan:\n%s", text)
	}
	return text
}

// demoToken logs in to the built-in target's API.
// machineOnly fails the test when the run did not pass for a reason of
// the plan's. The plan's part is that what was sent was answered as
// expected (roundTrip checks each scenario); a step whose every exchange
// was, judged on its latency or its generator alone, measured the machine:
// the generator could not hold the rate with three packages' tests beside
// it (23 of 100 arrivals not sent), the in-process target under CI's race
// detector answered at p95 673 ms (OVERLOADED past 500 ms). Those are
// logged; any other verdict fails.
func machineOnly(t *testing.T, r *results.Result, text string) {
	t.Helper()
	if r.Passed {
		return
	}
	var why []string
	machine := len(r.Steps) > 0
	for _, st := range r.Steps {
		why = append(why, fmt.Sprintf("step %d: %s (%s), warnings %q", st.Index+1, st.Verdict, st.VerdictReason, st.Warnings))
		switch st.Verdict {
		case results.Healthy, results.GeneratorLimited, results.Stressed, results.Overloaded:
			machine = machine && st.Failed == 0 && st.Completed > 0
		default:
			machine = false
		}
	}
	if !machine {
		t.Fatalf("the run did not pass: %s\n%s\n%s", r.Outcome.Summary(), strings.Join(why, "\n"), text)
	}
	t.Logf("the run measured this machine, not the plan: %s", strings.Join(why, "; "))
}

func demoToken(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/api/login", "application/json", strings.NewReader(`{"email":"ana@example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Token == "" {
		t.Fatalf("login: %v %q", err, v.Token)
	}
	return v.Token
}

// Curl lines (one with a literal credential, one reading it from the
// environment, a JSON body from a file and a fixed idempotency key):
// every scenario answered 2xx, and the plan holds no credential.
func TestCurlRoundTrip(t *testing.T) {
	addr := demoTarget(t)
	token := demoToken(t, addr)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"to": "+15550001", "text": "hello"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEMO_TOKEN", token)
	t.Setenv("CEILING_AUTHORIZATION", token) // what the draft names for the literal one
	t.Chdir(dir)                             // a curl line's @file is read from the working directory
	text := roundTrip(t, Flags{Curl: []string{
		"curl http://" + addr + "/health",
		`curl -s "http://` + addr + `/api/messages" -H "Authorization: Bearer $DEMO_TOKEN" -H 'Accept: application/json'`,
		"curl -X POST http://" + addr + "/api/messages -H 'Authorization: Bearer " + token + "' \\\n  -H 'Idempotency-Key: 6f1c2a9e' -H 'Content-Type: application/json' -d @body.json",
		"curl 'http://" + addr + "/api/sites/s-1/messages?limit=5' --compressed",
	}}, plan.Quick{Rate: "60"})
	if strings.Contains(text, token) {
		t.Errorf("the plan holds the token:\n%s", text)
	}
	for _, want := range []string{`Bearer {{env "DEMO_TOKEN"}}`, `Bearer {{env "CEILING_AUTHORIZATION"}}`, `Idempotency-Key: '{{uuid}}'`, `body: '{"to": "+15550001", "text": "hello"}'`} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
}

// The shipped HAR recording (a browser session against the built-in
// target), as a weighted mix and as a flow: the login form's cookie and
// the API's bearer token are extracted, never copied, and every scenario
// is answered; its favicon, static and answered 404, is left out either
// way, for one reason or the other.
func TestHARRoundTrip(t *testing.T) {
	t.Parallel()
	addr := demoTarget(t)
	har := example(t, "demo-session.har", addr)
	data, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	recorded := regexp.MustCompile(`"value": "session=([0-9a-f]+)"`).FindSubmatch(data)
	if recorded == nil {
		t.Fatal("the recording has no session cookie")
	}
	t.Run("mix", func(t *testing.T) {
		t.Parallel()
		text := roundTrip(t, Flags{HAR: har}, plan.Quick{VUs: "10", Think: "100ms", Step: "2s"})
		for _, want := range []string{"extract: {session: {cookie: session}}", "extract: {token: {json: token}}", "Bearer {{.token}}", "weight: 2", "{{pick "} {
			if !strings.Contains(text, want) {
				t.Errorf("the plan lacks %q", want)
			}
		}
		if strings.Contains(text, string(recorded[1])) {
			t.Error("the plan holds the recorded session cookie")
		}
	})
	t.Run("flow", func(t *testing.T) {
		t.Parallel()
		text := roundTrip(t, Flags{HAR: har, Options: Options{Flow: true}}, plan.Quick{VUs: "3", Think: "100ms"})
		if !strings.Contains(text, "steps:") || strings.Contains(text, "login:") {
			t.Errorf("want one flow, not a login:\n%s", text)
		}
	})
	t.Run("keep-static", func(t *testing.T) {
		for keep, want := range map[bool]string{false: "1 static asset (--keep-static keeps them)", true: "1 request answered 4xx or 5xx"} {
			d, err := (&Flags{HAR: har, Options: Options{KeepStatic: keep}}).Draft(context.Background())
			if err != nil || strings.Contains(string(d.YAML), "/favicon.ico") || !strings.Contains(strings.Join(d.Notes, "\n"), want) {
				t.Errorf("keep-static %v: %v, notes %q; want the favicon left out: %q", keep, err, d.Notes, want)
			}
		}
	})
}

// The shipped OpenAPI document of the built-in target, with its login and
// its unsafe operations: every operation is answered 2xx.
func TestOpenAPIRoundTrip(t *testing.T) {
	t.Parallel()
	addr := demoTarget(t)
	doc := example(t, "demo-api.openapi.yaml", addr)
	text := roundTrip(t, Flags{OpenAPI: doc, Options: Options{Login: "login", Unsafe: true}}, plan.Quick{Rate: "100"})
	for _, want := range []string{"login:", "name: sendMessage", "Idempotency-Key: '{{uuid}}'", "url: /api/instances/7/status", "expect: {status: [202]}"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q", want)
		}
	}
}
