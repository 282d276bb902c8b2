package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Drafts of every source, run against the built-in target, are tested in
// package draft; here, what the command writes and says.

// ceiling init writes the plan it drafted, says on stderr what it holds,
// which variables to set and what to do next, and nothing on stdout; the
// plan holds no credential, and validates once they are set.
func TestInit(t *testing.T) {
	ctx := context.Background()
	planFile := filepath.Join(t.TempDir(), "plan.yaml")
	code, stdout, stderr := ceiling(t, ctx, "init", "--curl", "curl http://127.0.0.1:9/health",
		"--curl", "curl -X POST http://127.0.0.1:9/api/messages -H 'Authorization: Bearer s3cret-0123456789' -d '{}'", "--out", planFile)
	if code != ExitOK || stdout != "" {
		t.Fatalf("init: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"wrote " + planFile + ": 2 scenarios\n", "set before validate and run (the plan reads them; it holds no secret):\n  CEILING_AUTHORIZATION: ",
		"next: ceiling validate " + planFile + " && ceiling run " + planFile + "\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("init's notes lack %q:\n%s", want, stderr)
		}
	}
	if text := mustRead(t, planFile); strings.Contains(text, "s3cret") {
		t.Errorf("the plan holds the credential:\n%s", text)
	}
	t.Setenv("CEILING_AUTHORIZATION", "s3cret-0123456789")
	if code, stdout, stderr := ceiling(t, ctx, "validate", planFile); code != ExitOK || !strings.Contains(stdout, "ok: ") {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
	// Where each TODO is (file:line:col) is plan's to say.
	os.Unsetenv("CEILING_X_API_KEY")
	code, _, stderr = ceiling(t, ctx, "validate", planFile)
	if code != ExitBadInput || strings.Count(stderr, planFile+":") < 3 || !strings.Contains(stderr, "TODO: path parameter orderId (integer)") ||
		!strings.Contains(stderr, "TODO: query parameter q (string)") || !strings.Contains(stderr, "environment variable CEILING_X_API_KEY is not set") {
		t.Errorf("validate: exit %d, want %d naming both TODOs and the unset variable, each where it is\n%s", code, ExitBadInput, stderr)
	}
	// Set, the variable is no problem, and the TODOs still are.
	t.Setenv("CEILING_X_API_KEY", "k")
	if code, _, stderr := ceiling(t, ctx, "validate", planFile); code != ExitBadInput || strings.Contains(stderr, "CEILING_X_API_KEY") || strings.Count(stderr, "TODO:") != 2 {
		t.Errorf("validate with the key set: exit %d\n%s", code, stderr)
	}
}

// Bad input is exit 2 with a message that says where. (What a curl line,
// a HAR file or an OpenAPI document may hold is draft's to say.)
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
		{[]string{"init", "--curl", "curl http://127.0.0.1:9/ -H 'X: $(id)'"}, ""},
		{[]string{"init", "--curl", `curl "http://127.0.0.1:9/$(id)"`}, "--curl 1:1:6: a command substitution"},
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
