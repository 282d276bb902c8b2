package draft

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// sentBody renders a drafted request's body as the run sends it, with
// the variables the draft reads set to values.
func sentBody(t *testing.T, d *Draft, values map[string]string, step int) string {
	t.Helper()
	for _, v := range d.Env {
		t.Setenv(v.Name, values[v.Name])
	}
	p, err := plan.Parse("plan.yaml", d.YAML)
	if err != nil {
		t.Fatalf("the draft is not a valid plan: %v\n%s", err, d.YAML)
	}
	var r plan.Request
	if sc := p.Scenarios[0]; len(sc.Steps) > 0 {
		r = sc.Steps[step].Request
	} else {
		r = sc.Request
	}
	if r.JSON != nil {
		t.Fatalf("the body is drafted as json: (which the run writes anew, keys sorted), not as the source's bytes:\n%s", d.YAML)
	}
	tmpl, err := plan.ParseTemplate("body", r.Body)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A curl command's JSON body is sent as it was written, byte for byte:
// its keys in their order, its spaces, its numbers as written; only a
// secret's value comes from the environment, where it stood.
func TestCurlJSONBodyKeepsItsBytes(t *testing.T) {
	src := `{"b": 1, "a":{"z":true,"y":[1, 2.50]},  "password":"hunter2", "pin": 1234, "note": "a \"quote\" and {{ braces"}`
	d, err := FromCurl(context.Background(), []Source{{Name: "c", Text: `curl https://h.test/x -H 'Content-Type: application/json' --data-raw '` + src + `'`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d.YAML), "hunter2") {
		t.Errorf("the draft holds the password:\n%s", d.YAML)
	}
	values := map[string]string{"CEILING_PASSWORD": `pw"with\quote`, "CEILING_PIN": "1234"}
	want := `{"b": 1, "a":{"z":true,"y":[1, 2.50]},  "password":"pw\"with\\quote", "pin": 1234, "note": "a \"quote\" and {{ braces"}`
	if got := sentBody(t, d, values, 0); got != want {
		t.Errorf("the body sent:\n%s\nwant the source's bytes:\n%s\n%s", got, want, d.YAML)
	}
}

// --data-urlencode encodes as curl does: a space is %20, not +.
func TestCurlDataURLEncodeAsCurl(t *testing.T) {
	d, err := FromCurl(context.Background(), []Source{{Name: "c", Text: `curl https://h.test/x --data-urlencode 'city=São Paulo' --data-urlencode 'q=a+b&c~d'`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sentBody(t, d, nil, 0), "city=S%C3%A3o%20Paulo&q=a%2Bb%26c~d"; got != want {
		t.Errorf("the body sent: %q, want curl's %q\n%s", got, want, d.YAML)
	}
}

// A recorded JSON body is sent as the browser sent it, a value an
// earlier answer handed out put back in its place.
func TestHARJSONBodyKeepsItsBytes(t *testing.T) {
	const base = "https://app.example.test"
	data := harOf(t,
		entryOf("2026-01-01T10:00:00.000Z", "POST", base+"/api/login", [][2]string{{"Content-Type", "application/json"}}, `{"user":"ana","password":"hunter2x"}`, 200,
			nil, "application/json", `{"token":"tok-8f3a9c1d2e77"}`),
		entryOf("2026-01-01T10:00:01.000Z", "POST", base+"/api/orders", [][2]string{{"Content-Type", "application/json"}},
			`{"sku":"A-1","qty":2,"auth":{"session":"tok-8f3a9c1d2e77"},"id":"x"}`, 201, nil, "application/json", `{}`),
	)
	d, err := FromHAR("h.har", data, Options{Flow: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sentBody(t, d, map[string]string{"CEILING_PASSWORD": "pw"}, 0), `{"user":"ana","password":"pw"}`; got != want {
		t.Errorf("the login's body: %s, want %s\n%s", got, want, d.YAML)
	}
	y := string(d.YAML)
	if !strings.Contains(y, `"session":{{.token | json}}`) {
		t.Errorf("the order's body does not read the token where it stood:\n%s", y)
	}
}

// A recorded URL with user information is kept: its credentials are sent
// as Basic authentication, read from the environment like any secret.
func TestHARURLUserInfo(t *testing.T) {
	data := harOf(t,
		entryOf("2026-01-01T10:00:00.000Z", "GET", "https://bob:S3CRETPW@app.example.test/api/x", nil, "", 200, nil, "application/json", `{}`),
	)
	d, err := FromHAR("h.har", data, Options{})
	if err != nil {
		t.Fatalf("FromHAR(a URL with user information) = %v", err)
	}
	y := string(d.YAML)
	if strings.Contains(y, "S3CRETPW") || strings.Contains(y, "bob") {
		t.Errorf("the draft holds the URL's credentials:\n%s", y)
	}
	if !strings.Contains(y, "target: https://app.example.test\n") || !strings.Contains(y, `Authorization: 'Basic {{env "CEILING_BASIC_AUTH"}}'`) {
		t.Errorf("the draft does not send the URL's credentials from the environment:\n%s", y)
	}
	if len(d.Env) != 1 || !strings.Contains(d.Env[0].What, "base64") {
		t.Errorf("Env = %+v, want the credentials' variable, said how to make it", d.Env)
	}
	for _, n := range d.Notes {
		if strings.Contains(n, "not http") {
			t.Errorf("notes: %q", d.Notes)
		}
	}
}

// Firefox's Alt-Used names the recorded host; a browser sets it, and a
// draft sends no browser-made header (least of all a host it no longer
// loads).
func TestHARDropsAltUsed(t *testing.T) {
	data := harOf(t,
		entryOf("2026-01-01T10:00:00.000Z", "GET", "https://app.example.test/api/x", [][2]string{{"Alt-Used", "app.example.test"}, {"X-Requested-With", "XMLHttpRequest"}},
			"", 200, nil, "application/json", `{}`),
	)
	d, err := FromHAR("h.har", data, Options{Target: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	y := string(d.YAML)
	if strings.Contains(strings.ToLower(y), "alt-used") || strings.Contains(y, "app.example.test") {
		t.Errorf("the draft keeps Alt-Used or the recorded host:\n%s", y)
	}
	if !strings.Contains(y, "X-Requested-With") {
		t.Errorf("the draft lost the page's own header:\n%s", y)
	}
}
