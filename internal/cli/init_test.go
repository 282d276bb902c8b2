package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/demo"
)

// initTarget starts the built-in target on a free loopback port and
// returns its host:port.
func initTarget(t *testing.T) string {
	t.Helper()
	srv, err := demo.Start(demo.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return strings.TrimPrefix(srv.URL(), "http://")
}

// initExample copies a source of docs/examples into dir, the built-in
// target's address made addr.
func initExample(t *testing.T, name, dir, addr string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "127.0.0.1:8080", addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// roundTrip drafts a plan with init's arguments, validates it and runs it
// with runArgs against the built-in target; every scenario (and every
// login) must have been answered as expected: 2xx, or the recorded
// redirect of a login.
func roundTrip(t *testing.T, initArgs []string, runArgs ...string) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.yaml")
	code, stdout, stderr := ceiling(t, ctx, append(append([]string{"init"}, initArgs...), "--out", planFile)...)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "wrote "+planFile) || !strings.Contains(stderr, "next: ceiling validate "+planFile) {
		t.Errorf("init's notes: %s", stderr)
	}
	text, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := ceiling(t, ctx, "validate", planFile); code != ExitOK {
		t.Fatalf("validate: exit %d\n%s%s\n%s", code, stdout, stderr, text)
	}
	result := filepath.Join(dir, "result.json")
	args := append([]string{"run", planFile, "--step", "1s", "--warmup", "200ms", "--quiet", "--out", result}, runArgs...)
	if code, stdout, stderr := ceiling(t, ctx, args...); code != ExitOK {
		t.Fatalf("run: exit %d\n%s%s\n%s", code, stdout, stderr, text)
	}
	r := readResult(t, result)
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
	return string(text)
}

// A curl line (several, with a literal credential, one read from the
// environment, a JSON body from a file and a fixed idempotency key) →
// init → validate → run against the built-in target: every scenario 2xx,
// and the plan holds no credential.
func TestInitCurlRoundTrip(t *testing.T) {
	addr := initTarget(t)
	token := demoToken(t, addr)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"to": "+15550001", "text": "hello"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEMO_TOKEN", token)
	t.Setenv("CEILING_AUTHORIZATION", token) // what init will name for the literal one
	t.Chdir(dir)                             // an inline --curl's @file is read from the working directory
	text := roundTrip(t, []string{
		"--curl", "curl http://" + addr + "/health",
		"--curl", `curl -s "http://` + addr + `/api/messages" -H "Authorization: Bearer $DEMO_TOKEN" -H 'Accept: application/json'`,
		"--curl", "curl -X POST http://" + addr + "/api/messages -H 'Authorization: Bearer " + token + "' \\\n  -H 'Idempotency-Key: 6f1c2a9e' -H 'Content-Type: application/json' -d @body.json",
		"--curl", "curl 'http://" + addr + "/api/sites/s-1/messages?limit=5' --compressed",
	}, "--rate", "60")
	if strings.Contains(text, token) {
		t.Errorf("the plan holds the token:\n%s", text)
	}
	for _, want := range []string{`Bearer {{env "DEMO_TOKEN"}}`, `Bearer {{env "CEILING_AUTHORIZATION"}}`, `Idempotency-Key: '{{uuid}}'`, `body: '{"to": "+15550001", "text": "hello"}'`} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
}

// demoToken logs in to the built-in target's API.
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

// The shipped HAR recording (a browser session against the built-in
// target) → init, as a weighted mix and as a flow → validate → run: the
// login form's cookie and the API's bearer token are extracted, never
// copied, and every scenario is answered.
func TestInitHARRoundTrip(t *testing.T) {
	t.Parallel()
	addr := initTarget(t)
	har := initExample(t, "demo-session.har", t.TempDir(), addr)
	recorded := regexp.MustCompile(`"value": "session=([0-9a-f]+)"`).FindStringSubmatch(mustRead(t, har))
	if recorded == nil {
		t.Fatal("the recording has no session cookie")
	}
	t.Run("mix", func(t *testing.T) {
		text := roundTrip(t, []string{"--har", har}, "--vus", "10", "--think", "100ms", "--step", "2s")
		for _, want := range []string{"extract: {session: {cookie: session}}", "extract: {token: {json: token}}", "Bearer {{.token}}", "weight: 2", "{{pick "} {
			if !strings.Contains(text, want) {
				t.Errorf("the plan lacks %q", want)
			}
		}
		if strings.Contains(text, recorded[1]) {
			t.Error("the plan holds the recorded session cookie")
		}
	})
	t.Run("flow", func(t *testing.T) {
		text := roundTrip(t, []string{"--har", har, "--flow"}, "--vus", "3", "--think", "100ms")
		if !strings.Contains(text, "steps:") || strings.Contains(text, "login:") {
			t.Errorf("want one flow, not a login:\n%s", text)
		}
	})
	t.Run("keep-static", func(t *testing.T) {
		// The favicon is static, and was answered 404: left out either way,
		// for one reason or the other.
		ctx := context.Background()
		for args, want := range map[string]string{"": "1 static asset (--keep-static keeps them)", "--keep-static": "1 request answered 4xx or 5xx"} {
			code, out, stderr := ceiling(t, ctx, strings.Fields("init --har "+har+" "+args)...)
			if code != ExitOK || strings.Contains(out, "/favicon.ico") || !strings.Contains(stderr, want) {
				t.Errorf("init %s: exit %d, want the favicon left out: %q\n%s", args, code, want, stderr)
			}
		}
	})
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The shipped OpenAPI document of the built-in target → init with its
// login and its unsafe operations → validate → run: every operation is
// answered 2xx.
func TestInitOpenAPIRoundTrip(t *testing.T) {
	t.Parallel()
	addr := initTarget(t)
	doc := initExample(t, "demo-api.openapi.yaml", t.TempDir(), addr)
	text := roundTrip(t, []string{"--openapi", doc, "--login", "login", "--unsafe"}, "--rate", "100")
	for _, want := range []string{"login:", "name: sendMessage", "Idempotency-Key: '{{uuid}}'", "url: /api/instances/7/status", "expect: {status: [202]}"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q", want)
		}
	}
}

// A document without the values a plan needs: init writes TODO stubs and
// names the variables to set, and validate names each TODO with the
// file:line:col where it is.
func TestInitOpenAPITODOs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	doc := filepath.Join(dir, "api.json")
	if err := os.WriteFile(doc, []byte(`{
  "openapi": "3.0.3",
  "info": {"title": "orders", "version": "2"},
  "servers": [{"url": "https://api.example.test/v2"}],
  "paths": {
    "/orders/{orderId}": {"get": {"parameters": [{"name": "orderId", "in": "path", "required": true, "schema": {"type": "integer"}}],
      "security": [{"key": []}], "responses": {"200": {"description": "ok"}}}},
    "/search": {"get": {"parameters": [{"name": "q", "in": "query", "required": true, "schema": {"type": "string"}}], "responses": {"200": {"description": "ok"}}}}
  },
  "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.yaml")
	code, _, stderr := ceiling(t, ctx, "init", "--openapi", doc, "--out", planFile)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"CEILING_X_API_KEY: the API key of key (header X-Api-Key)", "2 values to fill in ({{TODO}}): ceiling validate " + planFile + " lists them"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("init's notes lack %q:\n%s", want, stderr)
		}
	}
	os.Unsetenv("CEILING_X_API_KEY")
	code, _, stderr = ceiling(t, ctx, "validate", planFile)
	if code != ExitBadInput {
		t.Fatalf("validate: exit %d, want %d\n%s", code, ExitBadInput, stderr)
	}
	lines := strings.Split(mustRead(t, planFile), "\n")
	re := regexp.MustCompile(`(?m)^ceiling: ` + regexp.QuoteMeta(planFile) + `:(\d+):(\d+): (\S+): (.*)$|^` + regexp.QuoteMeta(planFile) + `:(\d+):(\d+): (\S+): (.*)$`)
	found := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(stderr, -1) {
		line, col, path, msg := m[1], m[2], m[3], m[4]
		if line == "" {
			line, col, path, msg = m[5], m[6], m[7], m[8]
		}
		n, _ := strconv.Atoi(line)
		c, _ := strconv.Atoi(col)
		if n < 1 || n > len(lines) || c < 1 || c > len(lines[n-1]) {
			t.Errorf("%s:%s: not a place in the plan", line, col)
			continue
		}
		at := lines[n-1][c-1:]
		switch {
		case strings.HasPrefix(msg, "TODO: path parameter orderId (integer)"), strings.HasPrefix(msg, "TODO: query parameter q (string)"):
			if !strings.Contains(at, `{{TODO "`+strings.TrimPrefix(strings.SplitN(msg, ":", 3)[1], " ")) {
				t.Errorf("%s:%s (%s) points at %q, not at its TODO", line, col, path, at)
			}
			found[strings.SplitN(msg, ":", 3)[1]] = true
		case strings.Contains(msg, "environment variable CEILING_X_API_KEY is not set"):
			found["env"] = true
		}
	}
	if len(found) != 3 {
		t.Errorf("validate names %v, want both TODOs and the unset variable:\n%s", found, stderr)
	}
	// Set, the variable is no problem, and the TODOs still are.
	t.Setenv("CEILING_X_API_KEY", "k")
	if code, _, stderr := ceiling(t, ctx, "validate", planFile); code != ExitBadInput || strings.Contains(stderr, "CEILING_X_API_KEY") || strings.Count(stderr, "TODO:") != 2 {
		t.Errorf("validate with the key set: exit %d\n%s", code, stderr)
	}
}

// Bad input is exit 2 with a message that says where.
func TestInitBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.har")
	os.WriteFile(broken, []byte("{\"log\": {\"entries\": [\n  {\"request\": }\n]}}"), 0o644)
	exists := filepath.Join(dir, "exists.yaml")
	os.WriteFile(exists, []byte("x"), 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"init"}, "say what to draft the plan from"},
		{[]string{"init", "--har", broken, "--openapi", broken}, "--har and --openapi: one source at a time"},
		{[]string{"init", "--curl", "curl --frobnicate http://127.0.0.1:9/"}, "--curl 1:1:1: curl option --frobnicate: not one ceiling init knows"},
		{[]string{"init", "--curl", "curl http://127.0.0.1:9/ -H 'X: $(id)'"}, ""},
		{[]string{"init", "--curl", `curl "http://127.0.0.1:9/$(id)"`}, "--curl 1:1:6: a command substitution"},
		{[]string{"init", "--curl", "wget http://127.0.0.1:9/"}, `"wget" is not curl`},
		{[]string{"init", "--curl", "curl 'http://127.0.0.1:9/"}, "--curl 1:1:6: reached EOF without closing quote"},
		{[]string{"init", "--har", broken}, broken + ": 2:15: invalid character '}'"},
		{[]string{"init", "--openapi", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"init", "--curl", "curl http://127.0.0.1:9/", "--flow"}, "--flow and --keep-static: only with --har"},
		{[]string{"init", "--curl", "curl http://127.0.0.1:9/", "--out", exists}, exists + " exists"},
		{[]string{"init", "--curl", "curl http://127.0.0.1:9/", "--target", "ftp://x"}, "--target \"ftp://x\""},
	} {
		code, _, stderr := ceiling(t, ctx, tt.args...)
		if tt.want == "" {
			if code != ExitOK {
				t.Errorf("%q: exit %d\n%s", tt.args, code, stderr)
			}
			continue
		}
		if code != ExitBadInput || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// Without --out, the plan is the only thing on standard output.
func TestInitStdout(t *testing.T) {
	t.Parallel()
	code, out, stderr := ceiling(t, context.Background(), "init", "--curl", "curl https://api.example.test/v1/items?page=2")
	if code != ExitOK || !strings.HasPrefix(out, "# A plan drafted by ceiling init") || !strings.Contains(out, "url: '/v1/items?page=2'") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "drafted 1 scenario") || strings.Contains(out, "next:") {
		t.Errorf("the notes go to stderr only: %s", stderr)
	}
}

// A body too large for the plan is written next to it (body_file), and
// the plan validates with it there; a second init does not write over it
// without --force.
func TestInitLargeBodyBesideThePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	body := `{"lines":[` + strings.Repeat(`{"sku":"A-1","qty":2},`, 5000) + `{"sku":"B-2"}]}`
	os.WriteFile(filepath.Join(dir, "order.json"), []byte(body), 0o644)
	os.WriteFile(filepath.Join(dir, "calls.sh"), []byte("curl http://127.0.0.1:9/orders -H 'Content-Type: application/json' --data-binary @order.json\n"), 0o644)
	out := filepath.Join(dir, "plan.yaml")
	code, _, stderr := ceiling(t, ctx, "init", "--curl", "@"+filepath.Join(dir, "calls.sh"), "--out", out)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "plan.body-1.json"))
	if err != nil || string(got) != body || !strings.Contains(stderr, "plan.body-1.json") {
		t.Fatalf("the body's file: %v, %d bytes of %d\n%s", err, len(got), len(body), stderr)
	}
	if code, stdout, stderr := ceiling(t, ctx, "validate", out); code != ExitOK {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	os.Remove(out)
	if code, _, stderr := ceiling(t, ctx, "init", "--curl", "@"+filepath.Join(dir, "calls.sh"), "--out", out); code != ExitBadInput || !strings.Contains(stderr, "plan.body-1.json exists") {
		t.Errorf("init over the body's file: exit %d, %s", code, stderr)
	}
}
