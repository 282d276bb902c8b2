package draft

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func demoHAR(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("../../docs/examples/demo-session.har")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The shipped recording of a browser session against the built-in
// target: the form login and the API login run once per user, their
// cookie and token are extracted, never copied, and the other requests
// are a mix weighted by how often each endpoint was called.
func TestHARDemoMix(t *testing.T) {
	d, err := FromHAR("demo-session.har", demoHAR(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := parsed(t, d)
	y := string(d.YAML)
	if len(p.Login) != 2 || p.Login[0].Request.URL != "/login" || p.Login[1].Request.URL != "/api/login" {
		t.Errorf("login = %+v, want the form's and the API's", p.Login)
	}
	if got := p.Login[0].Extract["session"].Cookie; got != "session" {
		t.Errorf("the form login extracts %+v, want the session cookie", p.Login[0].Extract)
	}
	weights := map[string]float64{}
	for _, sc := range p.Scenarios {
		weights[sc.Name] = sc.Weight
	}
	want := map[string]float64{"GET /": 1, "GET /login": 1, "GET /dashboard": 2, "GET /billing": 1, "GET /api/messages": 2,
		"GET /api/instances/{id}/status": 2, "POST /api/messages": 1}
	if len(weights) != len(want) {
		t.Errorf("scenarios %v, want %v", weights, want)
	}
	for name, w := range want {
		if weights[name] != w {
			t.Errorf("%s: weight %v, want %v", name, weights[name], w)
		}
	}
	for _, secret := range []string{"9ee2fdb7a1adb423db282574", "6f1c2a9e-3b7d-4c55-9a0e-2d8f41b7c3a1", "Mozilla", "sec-ch-ua", "text/html"} {
		if strings.Contains(y, secret) {
			t.Errorf("the draft holds %q", secret)
		}
	}
	if p.Load.Model != "closed" || p.Load.Think.Duration != 1500*time.Millisecond {
		t.Errorf("load = %+v, want closed with the recording's median gap, 1.5s", p.Load)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "1 static asset") {
		t.Errorf("notes = %q", d.Notes)
	}
}

func TestHARDemoFlow(t *testing.T) {
	d, err := FromHAR("demo-session.har", demoHAR(t), Options{Flow: true, Target: "http://127.0.0.1:9999"})
	if err != nil {
		t.Fatal(err)
	}
	p := parsed(t, d)
	if len(p.Login) != 0 || len(p.Scenarios) != 1 || len(p.Scenarios[0].Steps) != 12 {
		t.Fatalf("want one flow of 12 steps:\n%s", d.YAML)
	}
	if p.Target != "http://127.0.0.1:9999" || strings.Contains(string(d.YAML), "8080") {
		t.Errorf("--target: the draft still names the recorded host:\n%s", d.YAML)
	}
	steps := p.Scenarios[0].Steps
	if steps[2].Name != "POST /login" || steps[2].Expect.Status[0] != 303 || steps[2].Extract["session"].Cookie != "session" {
		t.Errorf("step 3 = %+v, want the form login, 303, extracting the cookie", steps[2])
	}
}

// harOf builds a HAR file of entries.
func harOf(t *testing.T, entries ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entryOf is a HAR entry, Firefox's way: no resource type, cookies in
// headers only.
func entryOf(at string, method, url string, reqHeaders [][2]string, body string, status int, respHeaders [][2]string, mime, text string) map[string]any {
	nv := func(hs [][2]string) []map[string]string {
		out := []map[string]string{}
		for _, h := range hs {
			out = append(out, map[string]string{"name": h[0], "value": h[1]})
		}
		return out
	}
	req := map[string]any{"method": method, "url": url, "headers": nv(reqHeaders), "cookies": []any{}}
	if body != "" {
		ct := "application/x-www-form-urlencoded"
		for _, h := range reqHeaders {
			if strings.EqualFold(h[0], "Content-Type") {
				ct = h[1]
			}
		}
		req["postData"] = map[string]any{"mimeType": ct, "text": body}
	}
	content := map[string]any{"mimeType": mime, "size": len(text)}
	if text != "" {
		content["text"] = base64.StdEncoding.EncodeToString([]byte(text))
		content["encoding"] = "base64"
	}
	return map[string]any{
		"startedDateTime": at, "time": 20,
		"request":  req,
		"response": map[string]any{"status": status, "headers": nv(respHeaders), "cookies": []any{}, "content": content},
	}
}

// A Firefox recording of a login form with a CSRF token: the token the
// page handed out is extracted with a regular expression, the cookie
// the login set goes by the jar, a cookie set before the recording and
// the password come from the environment; preflights, other hosts,
// errors and cache revalidations are handled.
func TestHARCSRFAndCookies(t *testing.T) {
	const base = "https://app.example.test"
	page := `<html><form method="post"><input type="hidden" name="csrf_token" value="tok-8f3a9c1d2e"><input name="email"></form>` +
		`<meta name="api-key" content="pub-771aa9b0c"></html>`
	data := harOf(t,
		entryOf("2026-01-01T10:00:00.000Z", "GET", base+"/login", [][2]string{{":authority", "app.example.test"}, {"Cookie", "prefs=xyz123456; tz=UTC"}}, "", 200,
			[][2]string{{"Content-Type", "text/html"}}, "text/html", page),
		entryOf("2026-01-01T10:00:01.000Z", "GET", "https://cdn.example.test/app.js", nil, "", 200, nil, "application/javascript", ""),
		entryOf("2026-01-01T10:00:03.000Z", "POST", base+"/login", [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}, {"Cookie", "prefs=xyz123456; tz=UTC"}},
			"csrf_token=tok-8f3a9c1d2e&email=ana%40example.com&password=hunter2x", 302,
			[][2]string{{"Location", "/home"}, {"Set-Cookie", "sid=s-0a1b2c3d4e5f; Path=/; HttpOnly\nlang=en; Path=/"}}, "text/html", ""),
		entryOf("2026-01-01T10:00:03.050Z", "GET", base+"/home", [][2]string{{"Cookie", "prefs=xyz123456; tz=UTC; sid=s-0a1b2c3d4e5f"}, {"If-None-Match", `"abc"`}}, "", 304, nil, "text/html", ""),
		entryOf("2026-01-01T10:00:04.000Z", "OPTIONS", base+"/api/items", nil, "", 204, nil, "", ""),
		entryOf("2026-01-01T10:00:04.100Z", "GET", base+"/api/items?key=pub-771aa9b0c&page=1", [][2]string{{"X-CSRF-Token", "tok-8f3a9c1d2e"}, {"Cookie", "sid=s-0a1b2c3d4e5f"}}, "", 200,
			[][2]string{{"Content-Type", "application/json"}}, "application/json", `{"items":[{"id":"itm-4471829a"}]}`),
		entryOf("2026-01-01T10:00:05.000Z", "GET", base+"/api/items/itm-4471829a", [][2]string{{"Cookie", "sid=s-0a1b2c3d4e5f"}}, "", 200, nil, "application/json", `{}`),
		entryOf("2026-01-01T10:00:06.000Z", "GET", base+"/missing", nil, "", 404, nil, "text/html", ""),
		entryOf("2026-01-01T10:00:07.000Z", "GET", base+"/logo.png", nil, "", 200, nil, "image/png", ""),
	)
	d, err := FromHAR("firefox.har", data, Options{Flow: true})
	if err != nil {
		t.Fatal(err)
	}
	y := string(d.YAML)
	t.Logf("%s", y)
	for _, want := range []string{
		`extract: {csrf_token: {regex: 'name="csrf_token" value="([^"]+)'}, api_key: {regex: 'name="api-key" content="([^"]+)'}}`,
		"- name: 'GET /api/items/{id}'",
		"body: 'csrf_token={{.csrf_token}}&email=ana%40example.com&password={{env \"CEILING_PASSWORD\" | urlquery}}'",
		"expect: {status: [302]}", "extract: {sid: {cookie: sid}}",
		"url: '/api/items?key={{.api_key}}&page=1'", "X-CSRF-Token: '{{.csrf_token}}'",
		"extract: {id: {json: items.0.id}}", "url: '/api/items/{{.id}}'",
		`Cookie: '{{env "CEILING_COOKIE"}}'`,
	} {
		if !strings.Contains(y, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
	for _, secret := range []string{"hunter2x", "xyz123456", "s-0a1b2c3d4e5f", "If-None-Match", ":authority", "tok-8f3a9c1d2e", "itm-4471829a"} {
		if strings.Contains(y, secret) {
			t.Errorf("the draft holds %q", secret)
		}
	}
	if len(d.Env) != 2 || d.Env[0].Name != "CEILING_COOKIE" || !strings.Contains(d.Env[0].What, "prefs, tz") || d.Env[1].Name != "CEILING_PASSWORD" {
		t.Errorf("Env = %+v", d.Env)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "1 CORS preflight; 1 request answered 4xx or 5xx; 1 static asset") ||
		!strings.Contains(d.Notes[0], "cdn.example.test (1)") {
		t.Errorf("notes = %q", d.Notes)
	}
	parsed(t, d)
}

func TestHARErrors(t *testing.T) {
	for _, tt := range []struct{ data, want string }{
		{"{\"log\": {\"entries\": [\n  {\"request\": }]}}", "h.har: 2:15: invalid character '}'"},
		{`{"log": {"entries": [{"time": "x"}]}}`, "h.har: 1:33: json: cannot unmarshal string"},
		{`{"log": {}}`, "h.har: no entries in log.entries"},
		{`[1]`, "h.har: 1:1: json: cannot unmarshal array"},
		{`{"log": {"entries": [{"request": {"method": "GET", "url": "https://h.test/a.css"}, "response": {"status": 200}}]}}`, "no request is left to load: 1 static asset"},
	} {
		_, err := FromHAR("h.har", []byte(tt.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FromHAR(%s) = %v, want %q", tt.data, err, tt.want)
		}
	}
}

// Whatever the file, FromHAR does not crash, and what it drafts is a
// plan (but for its environment variables).
func FuzzHAR(f *testing.F) {
	f.Add(string(demoHAR(f)))
	f.Add(`{"log":{"entries":[{"startedDateTime":"2026-01-01T10:00:00Z","request":{"method":"POST","url":"http://h.test/a?b=1","headers":[{"name":"Cookie","value":"a=b"}],` +
		`"postData":{"mimeType":"application/json","text":"{\"password\":\"p\",\"x\":[{}]}"}},"response":{"status":200,"headers":[{"name":"Set-Cookie","value":"s=12345678"}],` +
		`"content":{"mimeType":"application/json","text":"{\"token\":\"t0123456789\"}"}}},` +
		`{"startedDateTime":"2026-01-01T10:00:01Z","request":{"method":"GET","url":"http://h.test/t0123456789","headers":[{"name":"Authorization","value":"Bearer t0123456789"}]},"response":{"status":301}}]}}`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, flow := range []bool{false, true} {
			d, err := FromHAR("f.har", []byte(text), Options{Flow: flow})
			if err != nil {
				return
			}
			isPlan(t, d.YAML)
		}
	})
}

// A long recording drafts in about linear time: each request looks up
// what earlier answers handed out, it does not search them all.
func TestHARLarge(t *testing.T) {
	var entries []map[string]any
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3000 {
		body := `{"items":[`
		for j := range 20 {
			if j > 0 {
				body += ","
			}
			body += `{"id":"itm-` + strings.Repeat("7", 4) + string(rune('a'+j%26)) + `-` + strconv.Itoa(i) + `"}`
		}
		body += `],"token":"tok-0000` + strconv.Itoa(i) + `"}`
		entries = append(entries, entryOf(at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), "GET",
			"https://h.test/api/page/"+strconv.Itoa(i), [][2]string{{"Authorization", "Bearer tok-0000" + strconv.Itoa(max(i-1, 0))}},
			"", 200, nil, "application/json", body))
	}
	start := time.Now()
	d, err := FromHAR("large.har", harOf(t, entries...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("3000 entries took %v", took)
	}
	if !strings.Contains(string(d.YAML), "Bearer {{.token}}") {
		t.Error("the tokens were not extracted")
	}
	if p := parsed(t, d); len(p.Login) != 1 || len(p.Scenarios) != 1 || p.Scenarios[0].Weight != 2999 {
		t.Errorf("want one login request and one endpoint of weight 2999")
	}
	t.Logf("3000 entries: %v, %d bytes of plan", time.Since(start), len(d.YAML))
}
