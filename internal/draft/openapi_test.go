package draft

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demoAPI = "../../docs/examples/demo-api.openapi.yaml"

// The shipped document of the built-in target's API: safe operations by
// default, with a bearer token from the environment; with --login and
// --unsafe, the login's token for every operation, and the sends.
func TestOpenAPIDemo(t *testing.T) {
	d, err := FromOpenAPI(context.Background(), demoAPI, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := parsed(t, d)
	var names []string
	for _, sc := range p.Scenarios {
		names = append(names, sc.Name)
	}
	if got := strings.Join(names, ","); got != "health,listMessages,instanceStatus,siteMessages" {
		t.Errorf("scenarios %s, want the GETs in document order", got)
	}
	if len(d.Env) != 1 || d.Env[0].Name != "CEILING_BEARER_AUTH" {
		t.Errorf("Env = %+v", d.Env)
	}
	if len(d.Notes) != 2 || !strings.Contains(d.Notes[0], "login, sendMessage, postSiteMessage") || !strings.Contains(d.Notes[1], "--login login") {
		t.Errorf("notes = %q", d.Notes)
	}

	d, err = FromOpenAPI(context.Background(), demoAPI, Options{Login: "POST /api/login", Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	p = parsed(t, d)
	y := string(d.YAML)
	if len(d.Env) != 0 || len(p.Login) != 1 || p.Login[0].Extract["token"].JSON != "token" || len(p.Scenarios) != 6 {
		t.Errorf("want the login extracting its token, 6 scenarios and no variable:\n%s", y)
	}
	for _, want := range []string{"url: /api/instances/7/status", "url: '/api/sites/s-1/messages?limit=50'", "Idempotency-Key: '{{uuid}}'",
		"X-Project: p1", "expect: {status: [202]}", "Authorization: 'Bearer {{.token}}'", "email: ana@example.com"} {
		if !strings.Contains(y, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
}

func writeDoc(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An OpenAPI 3.0 document in JSON, with what a draft must build from
// schemas: references to a local file, allOf and oneOf, required fields
// without examples (TODO stubs), secret fields, a form body, an API key
// in the query and HTTP Basic, a server with variables.
func TestOpenAPISchemas(t *testing.T) {
	dir := t.TempDir()
	writeDoc(t, dir, "schemas.json", `{"Item": {"type": "object", "required": ["sku", "qty"],
	  "properties": {"sku": {"type": "string", "example": "A-1"}, "qty": {"type": "integer"}, "note": {"type": "string"}}}}`)
	doc := writeDoc(t, dir, "api.json", `{
  "openapi": "3.0.3",
  "info": {"title": "shop", "version": "2.1"},
  "servers": [{"url": "https://{region}.shop.example.test/v2", "variables": {"region": {"default": "eu"}}}],
  "security": [{"basic": []}],
  "paths": {
    "/orders": {
      "post": {"operationId": "createOrder",
        "parameters": [{"name": "api_key", "in": "query", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"content": {"application/json": {"schema": {"allOf": [
          {"type": "object", "required": ["items", "customer"], "properties": {
            "items": {"type": "array", "items": {"$ref": "schemas.json#/Item"}},
            "customer": {"oneOf": [{"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "format": "uuid"}}}, {"type": "string"}]}}},
          {"type": "object", "required": ["password"], "properties": {"password": {"type": "string"}, "gift": {"type": "boolean", "default": false}}}]}}}},
        "responses": {"201": {"description": "made"}, "200": {"description": "existed"}}},
      "get": {"parameters": [{"name": "status", "in": "query", "schema": {"type": "string", "enum": ["open", "closed"]}}, {"name": "page", "in": "query", "schema": {"type": "integer"}}],
        "responses": {"default": {"description": "x"}}}
    },
    "/session": {"put": {"security": [], "requestBody": {"content": {"application/x-www-form-urlencoded": {"example": {"user": "ana", "password": "p"}}}},
      "responses": {"303": {"description": "to the app"}}}}
  },
  "components": {"securitySchemes": {"basic": {"type": "http", "scheme": "basic"}}}
}`)
	d, err := FromOpenAPI(context.Background(), doc, Options{Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	y := string(d.YAML)
	for _, want := range []string{
		"target: https://eu.shop.example.test/v2",
		"name: GET /orders\n", "url: '/orders?status=open'",
		"name: createOrder", `url: '/orders?api_key={{env "CEILING_API_KEY" | urlquery}}'`, `Authorization: 'Basic {{env "CEILING_BASIC"}}'`,
		`- qty: '{{TODO "body qty (integer)"}}'`, "    sku: A-1\n", `id: '{{TODO "body id (string, uuid)"}}'`,
		`password: '{{env "CEILING_PASSWORD"}}'`, "gift: false", "expect: {status: [200, 201]}",
		"name: PUT /session", `body: 'password={{env "CEILING_PASSWORD" | urlquery}}&user=ana'`, "expect: {status: [303]}",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
	if strings.Contains(y, "note:") || strings.Contains(y, "page=") {
		t.Errorf("optional values without examples are left out:\n%s", y)
	}
	if len(d.Env) != 3 {
		t.Errorf("Env = %+v, want one variable per name: CEILING_BASIC, CEILING_API_KEY, CEILING_PASSWORD", d.Env)
	}
	if len(d.TODOs) != 2 {
		t.Errorf("TODOs = %q, want qty and id", d.TODOs)
	}
	if isPlan(t, d.YAML) != nil {
		t.Error("a draft with TODOs validated")
	}
	if t.Failed() {
		t.Logf("%s", y)
	}
}

func TestOpenAPIErrors(t *testing.T) {
	dir := t.TempDir()
	minimal := func(extra string) string {
		return `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, ` + extra + `}`
	}
	for _, tt := range []struct{ name, text, want string }{
		{"no server", minimal(`"paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}`), "no server with an absolute http(s) URL: say where the API is with --target URL"},
		{"swagger", `{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}`, "not an OpenAPI 3 document"},
		{"no paths", minimal(`"servers": [{"url": "http://h.test"}], "paths": {}`), "no operations under paths"},
		{"only unsafe", minimal(`"servers": [{"url": "http://h.test"}], "paths": {"/a": {"delete": {"responses": {"204": {"description": "ok"}}}}}`), "every operation is of an unsafe method"},
		{"a remote reference", minimal(`"servers": [{"url": "http://h.test"}], "paths": {"/a": {"$ref": "http://127.0.0.1:9/x.json"}}`), "reads local files only"},
		{"broken YAML", "openapi: 3.1.0\ninfo: {title: t\n", "b.yaml"},
		{"a reference out of its folder", minimal(`"servers": [{"url": "http://h.test"}], "paths": {"/a": {"$ref": "../../outside.json#/a"}}`), "is outside the document's folder and the working directory"},
		{"a reference to /proc", minimal(`"servers": [{"url": "http://h.test"}], "paths": {"/a": {"$ref": "/proc/self/environ#/a"}}`), "a file of /proc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "a.json"
			if strings.HasPrefix(tt.text, "openapi:") {
				name = "b.yaml"
			}
			_, err := FromOpenAPI(context.Background(), writeDoc(t, dir, name, tt.text), Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FromOpenAPI(context.Background(), ) = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := FromOpenAPI(context.Background(), demoAPI, Options{Login: "nope"}); err == nil || !strings.Contains(err.Error(), "--login nope: no such operation") {
		t.Errorf("--login nope: %v", err)
	}
	if _, err := FromOpenAPI(context.Background(), demoAPI, Options{Login: "health"}); err == nil || !strings.Contains(err.Error(), "no property that holds a token") {
		t.Errorf("--login health: %v", err)
	}
	// A relative server and --target.
	doc := writeDoc(t, dir, "rel.json", minimal(`"servers": [{"url": "/api"}], "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}`))
	d, err := FromOpenAPI(context.Background(), doc, Options{Target: "http://127.0.0.1:9"})
	if err != nil || !strings.Contains(string(d.YAML), "target: http://127.0.0.1:9\n") {
		t.Errorf("--target: %v\n%s", err, d.YAML)
	}
}

// Petstore's operations that list no 2xx answer (updatePetWithForm: 405
// only; deletePet: 400 only) or only a default (createUser, logoutUser)
// are drafted expecting any 2xx, and say it is a guess; a required array
// (photoUrls) gets one item to fill in; an optional array of objects that
// have nothing to draft (tags) is left out, not written [{}].
func TestOpenAPIPetstoreDraftsTrue(t *testing.T) {
	d, err := FromOpenAPI(context.Background(), "testdata/petstore-excerpt.yaml", Options{Unsafe: true, Target: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	isPlan(t, d.YAML)
	y := string(d.YAML)
	// Comments are wrapped: compare them as words.
	words := strings.Join(strings.Fields(strings.ReplaceAll(y, "#", "")), " ")
	for _, want := range []string{
		"- name: updatePetWithForm The document lists no 2xx answer for updatePetWithForm (only 405): any 2xx is expected, a guess",
		"- name: deletePet The document lists no 2xx answer for deletePet (only 400): any 2xx is expected, a guess",
		"- name: createUser The document lists only a default answer for createUser: any 2xx is expected, a guess",
		"- name: logoutUser The document lists only a default answer for logoutUser: any 2xx is expected, a guess",
		`photoUrls: - '{{TODO "body photoUrls[0] (string)"}}'`,
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
	addPet := y[strings.Index(y, "name: addPet"):]
	addPet = addPet[:strings.Index(addPet, "- name:")]
	for _, bad := range []string{"{}", "[]", "tags:"} {
		if strings.Contains(addPet, bad) {
			t.Errorf("addPet's body holds %q:\n%s", bad, addPet)
		}
	}
	notes := strings.Join(d.Notes, "\n")
	if !strings.Contains(notes, "updatePetWithForm, deletePet") && !strings.Contains(notes, "4 operations") {
		t.Errorf("the notes do not say which expectations are guesses: %q", d.Notes)
	}
	if t.Failed() {
		t.Logf("%s", y)
	}
}
