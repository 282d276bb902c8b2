package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/httpx"
)

// fataler is what compile needs of a test: testing.TB or *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// compile parses a plan text and compiles it.
func compile(t fataler, yaml string) *Set {
	t.Helper()
	p, err := plan.Parse("plan.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	s, err := Compile(p)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

// log records what iterations did.
type log struct {
	mu         sync.Mutex
	exchanges  []transport.Outcome
	iterations []metrics.Iteration
	logins     []metrics.Login
	noLogin    int
	idles      int           // arrivals of idle websocket scenarios
	clock      time.Duration // what Now returns
}

func (l *log) Now() time.Duration { return l.clock }
func (l *log) Exchange(_, _, _, _ time.Duration, out *transport.Outcome) {
	l.mu.Lock()
	o := *out
	o.Header, o.Body = nil, nil
	l.exchanges = append(l.exchanges, o)
	l.mu.Unlock()
}
func (l *log) Idle(time.Duration) {
	l.mu.Lock()
	l.idles++
	l.mu.Unlock()
}
func (l *log) Login(x *metrics.Login) {
	l.mu.Lock()
	l.logins = append(l.logins, *x)
	l.mu.Unlock()
}
func (l *log) NoLogin(time.Duration) {
	l.mu.Lock()
	l.noLogin++
	l.mu.Unlock()
}
func (l *log) StepOf(time.Duration) int { return 0 }
func (l *log) Iteration(it *metrics.Iteration) {
	l.mu.Lock()
	c := *it
	c.Tags = append([]string(nil), it.Tags...)
	l.iterations = append(l.iterations, c)
	l.mu.Unlock()
}

// The realised mix matches the weights within statistical bounds.
func TestPropertyMixMatchesWeights(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "scenarios")
		var b strings.Builder
		b.WriteString("target: http://127.0.0.1:9\nload: {rates: [1]}\nscenarios:\n")
		weights := make([]float64, n)
		var total float64
		for i := range weights {
			weights[i] = float64(rapid.IntRange(1, 100).Draw(t, fmt.Sprint("w", i)))
			total += weights[i]
			fmt.Fprintf(&b, "  - {name: s%d, weight: %g, request: {url: /%d}}\n", i, weights[i], i)
		}
		s := compile(t, b.String())
		seed := rapid.Uint64().Draw(t, "seed")
		const draws = 20000
		counts := make([]int, n)
		for i := range uint64(draws) {
			counts[s.Pick(Mix(seed, i))]++
		}
		for i, c := range counts {
			p := weights[i] / total
			sigma := math.Sqrt(draws * p * (1 - p))
			if math.Abs(float64(c)-draws*p) > 5*sigma+1 {
				t.Fatalf("scenario %d picked %d times of %d, want %.0f ± %.0f (weight %g of %g)", i, c, draws, draws*p, 5*sigma, weights[i], total)
			}
		}
	})
}

// api is a small service: POST /login with {"email"} returns a token and
// sets a session cookie; GET /me needs both; GET /old redirects to /login.
func api(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Email string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Email == "" {
			http.Error(w, "bad", 400)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s-" + in.Email, Path: "/"})
		w.Header().Set("X-Token", "t-"+in.Email)
		fmt.Fprintf(w, `{"token":"t-%s","user":{"email":%q}}`, in.Email, in.Email)
	})
	mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if err != nil || strings.TrimPrefix(c.Value, "s-") != strings.TrimPrefix(tok, "t-") {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		fmt.Fprintf(w, `{"email":%q,"ok":true,"n":3}`, strings.TrimPrefix(tok, "t-"))
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) { io.Copy(w, r.Body) })
	mux.HandleFunc("GET /limited", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(429)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func users(t *testing.T, rows ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.csv")
	if err := os.WriteFile(path, []byte("email,site\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(t *testing.T, s *Set, vus, iterations int) *log {
	t.Helper()
	ex := httpx.New(httpx.Config{Timeout: 2 * time.Second})
	t.Cleanup(ex.Close)
	l := &log{}
	for id := range vus {
		v := s.NewVU(id, ex.Session())
		for i := range iterations {
			v.Iterate(context.Background(), l, 0, Mix(7, uint64(id*1000+i)))
		}
		v.Session().Close()
	}
	return l
}

func kinds(its []metrics.Iteration) map[string]int {
	m := map[string]int{}
	for _, it := range its {
		m[fmt.Sprintf("%d:%v", it.Scenario, it.Kind)]++
	}
	return m
}

// A login flow extracts a token once per user; later iterations send it with
// the user's own session cookie, and the checks on the JSON body pass.
func TestLoginTokenAndCookiesPerUser(t *testing.T) {
	srv := api(t)
	s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
data: {users: %s}
login:
  - request: {method: POST, url: /login, json: {email: "{{.user.email}}"}}
    extract: {token: {json: token}}
vars:
  auth: "Bearer {{.token}}"   # a var reads what the login extracted, from the first iteration on
  rid: "{{uuid}}"             # and one that needs no login, sent with every request, the login's too
http: {headers: {X-Request-Id: "{{.rid}}"}}
scenarios:
  - name: me
    request: {url: /me, headers: {Authorization: "{{.auth}}"}}
    expect: {json: {ok: true, n: 3}}
`, srv.URL, users(t, "ann@x.test,a", "bob@x.test,b")))
	l := run(t, s, 2, 3)
	// Per user: one login, recorded apart, and three iterations of "me".
	want := map[string]int{"0:ok": 6}
	if got := kinds(l.iterations); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("iterations = %v, want %v", got, want)
	}
	if len(l.logins) != 2 || l.logins[0].Kind != transport.OK || l.logins[0].Retry || l.noLogin != 0 {
		t.Errorf("logins = %+v, %d iterations unrun; want 2 ok first attempts", l.logins, l.noLogin)
	}
	if len(l.exchanges) != 6 {
		t.Errorf("exchanges = %d, want 6: the logins' are not the scenarios'", len(l.exchanges))
	}
}

// A failed login is retried after a backoff that doubles, each retry
// counted; an iteration before the backoff ends runs nothing; once the
// login succeeds the scenario runs. Neither the failed attempts nor the
// login's exchanges are the scenario's.
func TestLoginRetriedWithBackoff(t *testing.T) {
	var attempts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" && attempts.Add(1) <= 2 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"token":"t"}`))
	}))
	t.Cleanup(srv.Close)
	s := compile(t, fmt.Sprintf(`
target: %s
load: {vus: [1]}
login: [{request: {method: POST, url: /login}, extract: {token: {json: token}}}]
scenarios: [{name: me, request: {url: "/me?t={{.token}}"}}]
`, srv.URL))
	ex := httpx.New(httpx.Config{Timeout: 2 * time.Second})
	t.Cleanup(ex.Close)
	v := s.NewVU(0, ex.Session())
	defer v.Session().Close()
	l := &log{}
	ctx := context.Background()

	var waits []time.Duration
	for range 2 {
		waits = append(waits, v.Iterate(ctx, l, l.clock, 1))
		if v.Iterate(ctx, l, l.clock, 1) <= 0 { // too early: nothing runs
			t.Errorf("an iteration before the backoff ended asked for no wait")
		}
		l.clock += waits[len(waits)-1]
	}
	if w := v.Iterate(ctx, l, l.clock, 1); w != 0 || !v.LoggedIn() {
		t.Errorf("third attempt: wait %v, logged in %v; want 0, true", w, v.LoggedIn())
	}
	for i, w := range waits {
		base := LoginBackoff << i
		if w < base/2 || w > base {
			t.Errorf("wait after failure %d = %v, want within [%v, %v]", i+1, w, base/2, base)
		}
	}
	var retries int
	for _, x := range l.logins {
		if x.Retry {
			retries++
		}
	}
	if len(l.logins) != 3 || retries != 2 || l.logins[2].Kind != transport.OK || l.noLogin != 4 {
		t.Errorf("logins %+v, %d iterations unrun; want 3 attempts (2 retries, the last ok) and 4 unrun", l.logins, l.noLogin)
	}
	if len(l.exchanges) != 1 || len(l.iterations) != 1 || attempts.Load() != 3 {
		t.Errorf("exchanges %d, iterations %d, requests %d; want the scenario's 1 and 1, and 3 logins sent", len(l.exchanges), len(l.iterations), attempts.Load())
	}
}

// Without the login, the server redirects to /login: every iteration is a
// redirect failure, never a success.
func TestRedirectToLoginFails(t *testing.T) {
	srv := api(t)
	s := compile(t, fmt.Sprintf("target: %s\nload: {rates: [1]}\nscenarios:\n  - request: {url: /me}\n", srv.URL))
	l := run(t, s, 1, 3)
	if got := kinds(l.iterations); got["0:redirect"] != 3 {
		t.Errorf("iterations = %v, want 3 redirects", got)
	}
}

// A flow stops at its first failing step, and the failure is the
// iteration's.
func TestFlowStopsAtFailure(t *testing.T) {
	srv := api(t)
	s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
scenarios:
  - name: flow
    steps:
      - request: {method: POST, url: /login, json: {email: x@y.test}}
        extract: {sid: {cookie: sid}, tok: {header: X-Token}}
        expect: {header: {X-Token: t-x@y.test}}
      - request: {method: POST, url: /echo, body: "{{.sid}} {{.tok}}"}
        expect: {body_regex: "^s-x@y\\.test t-x@y\\.test$"}
      - request: {url: /limited}
      - request: {url: /me}
`, srv.URL))
	l := run(t, s, 1, 2)
	if got := kinds(l.iterations); got["0:limited"] != 2 {
		t.Errorf("iterations = %v, want 2 ended by the 429 (limited)", got)
	}
	if len(l.exchanges) != 6 {
		t.Errorf("exchanges = %d, want 6: the step after the 429 never ran", len(l.exchanges))
	}
}

func TestFailedChecksAreCheckFailures(t *testing.T) {
	srv := api(t)
	for name, expect := range map[string]string{
		"contains":     `{body_contains: nope}`,
		"regex":        `{body_regex: "^z"}`,
		"json missing": `{json: {missing.path: 1}}`,
		"json value":   `{json: {n: 4}}`,
		"json type":    `{json: {n: "3"}}`,
		"header":       `{header: {X-Token: other}}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
scenarios:
  - request: {method: POST, url: /login, json: {email: a@b.test}}
    expect: %s
`, srv.URL, expect))
			if got := kinds(run(t, s, 1, 1).iterations); got["0:check"] != 1 {
				t.Errorf("iterations = %v, want a check failure", got)
			}
		})
	}
}

// An extraction that finds nothing fails the step as a check.
func TestExtractionMissIsCheck(t *testing.T) {
	srv := api(t)
	s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
scenarios:
  - steps:
      - request: {method: POST, url: /login, json: {email: a@b.test}}
        extract: {x: {json: no.such.path}}
      - request: {url: /me, headers: {X: "{{.x}}"}}
`, srv.URL))
	l := run(t, s, 1, 1)
	if got := kinds(l.iterations); got["0:check"] != 1 || len(l.exchanges) != 1 {
		t.Errorf("iterations = %v with %d exchanges, want one check failure after one exchange", got, len(l.exchanges))
	}
}

// JSON bodies are built from YAML, with templated leaves escaped as JSON.
func TestJSONBody(t *testing.T) {
	set := &Set{}
	ts := &set.tmpls
	b, err := compileJSON(ts, "json", map[string]any{
		"text": `he said "hi"{{"\n"}}`, "n": uint64(3), "ok": true, "list": []any{"a", nil, 1.5},
		"id": "{{.id}}",
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.ready(&set.seq)
	v := &VU{data: map[string]any{"id": "x\ty"}, set: set}
	got, err := v.renderJSON(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("rendered body %s is not JSON: %v", got, err)
	}
	if back["text"] != "he said \"hi\"\n" || back["id"] != "x\ty" || back["n"] != 3.0 {
		t.Errorf("rendered %s", got)
	}
	if want := `{"id":`; !strings.HasPrefix(string(got), want) {
		t.Errorf("keys are not sorted: %s", got)
	}
}

// uuid is a version 4 UUID and unique; seq is unique across users.
func TestTemplateFuncs(t *testing.T) {
	s := compile(t, "target: http://127.0.0.1:9\nload: {rates: [1]}\nvars: {u: \"{{uuid}}\", n: \"{{seq}}\", r: \"{{randInt 3 5}}\", p: \"{{pick \\\"a\\\" \\\"b\\\"}}\", s: \"{{randString 8}}\", t: \"{{now.Unix}}\"}\nscenarios:\n  - request: {url: /}\n")
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for id := range 3 {
		v := s.NewVU(id, nil)
		for range 100 {
			if err := v.begin(); err != nil {
				t.Fatal(err)
			}
			u, n := v.data["u"].(string), v.data["n"].(string)
			if !re.MatchString(u) || seen[u] || seen["seq"+n] {
				t.Fatalf("uuid %q / seq %q: malformed or repeated", u, n)
			}
			seen[u], seen["seq"+n] = true, true
			if r := v.data["r"].(string); r < "3" || r > "5" || len(r) != 1 {
				t.Fatalf("randInt 3 5 = %q", r)
			}
			if p := v.data["p"].(string); p != "a" && p != "b" {
				t.Fatalf("pick = %q", p)
			}
			if len(v.data["s"].(string)) != 8 || len(v.data["t"].(string)) < 10 {
				t.Fatalf("randString 8 = %q, now.Unix = %q", v.data["s"], v.data["t"])
			}
		}
	}
}

// Tags are rendered per iteration from the user's row.
func TestTags(t *testing.T) {
	srv := api(t)
	s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
data: {users: %s}
scenarios:
  - request: {url: /limited}
    tags: {site: "{{.user.site}}"}
`, srv.URL, users(t, "a@x.test,north", "b@x.test,south")))
	l := run(t, s, 2, 2)
	sites := map[string]int{}
	for _, it := range l.iterations {
		sites[it.Tags[0]]++
	}
	if sites["north"] != 2 || sites["south"] != 2 || s.TagKeys()[0] != "site" {
		t.Errorf("tag values = %v (keys %v), want 2 north and 2 south", sites, s.TagKeys())
	}
}

// Rendering a templated request must stay small next to a request's cost
// (about 8 µs of CPU on these machines).
func BenchmarkRenderRequest(b *testing.B) {
	s := compile(b, `
target: http://127.0.0.1:9
load: {rates: [1]}
vars: {msgid: "{{uuid}}"}
scenarios:
  - request:
      method: POST
      url: /api/msg/{{.iteration}}
      headers: {Authorization: "Bearer {{.vu}}", Idempotency-Key: "{{.msgid}}"}
      json: {id: "{{.msgid}}", text: hello, n: 3}
`)
	v := s.NewVU(1, nil)
	r := s.scenarios[0].steps[0]
	b.ReportAllocs()
	for b.Loop() {
		if err := v.begin(); err != nil {
			b.Fatal(err)
		}
		if _, err := v.build(r); err != nil {
			b.Fatal(err)
		}
	}
}

// Retry-After is recorded on limited answers, and returned as a pause only
// when the plan obeys it.
func TestRetryAfter(t *testing.T) {
	srv := api(t)
	for _, obey := range []bool{false, true} {
		s := compile(t, fmt.Sprintf("target: %s\nload: {vus: [1]}\nhttp: {obey_retry_after: %v}\nscenarios:\n  - request: {url: /limited}\n", srv.URL, obey))
		ex := httpx.New(httpx.Config{Timeout: time.Second})
		v := s.NewVU(0, ex.Session())
		l := &log{}
		pause := v.Iterate(context.Background(), l, 0, 1)
		ex.Close()
		if got := l.exchanges[0]; got.Kind != transport.Limited || got.RetryAfter != 2*time.Second {
			t.Errorf("exchange = %v with Retry-After %v, want limited with 2s", got.Kind, got.RetryAfter)
		}
		if want := map[bool]time.Duration{false: 0, true: 2 * time.Second}[obey]; pause != want {
			t.Errorf("obey=%v: pause = %v, want %v", obey, pause, want)
		}
	}
}

// Ids from a data row or a literal repeat and are counted; ids made by uuid
// or seq are not watched.
func TestDuplicateIDs(t *testing.T) {
	srv := api(t)
	s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
data: {users: %s}
vars:
  clientId: "{{.user.email}}"
  msgid: "{{uuid}}"
  key: "k-{{seq}}"
scenarios:
  - request:
      method: POST
      url: /echo
      headers: {Idempotency-Key: fixed, X-Request-Id: "{{.msgid}}"}
      body: "{{.clientId}} {{.key}}"
`, srv.URL, users(t, "a@x.test,n", "b@x.test,s")))
	run(t, s, 2, 3)
	dups, full := s.Duplicates()
	want := []Duplicate{
		{Source: "header Idempotency-Key", Count: 5, Example: "fixed"},
		{Source: "vars.clientId", Count: 4, Example: "a@x.test"},
	}
	if full || len(dups) != 2 || dups[0] != want[0] || dups[1].Source != want[1].Source || dups[1].Count != 4 {
		t.Errorf("Duplicates() = %+v (full %v), want %+v", dups, full, want)
	}
}

// The fast renderer writes what text/template writes, and fails where it
// fails.
func TestFastRenderMatchesTemplate(t *testing.T) {
	data := map[string]any{"user": map[string]string{"email": "a@b.test"}, "vu": 7, "iteration": int64(42), "token": "t-1"}
	for _, src := range []string{
		"Bearer {{.token}}", "{{.user.email}}", "/u/{{.vu}}/{{.iteration}}?x={{.token}}", "{{.missing}}",
		"{{.user.nope}}", "{{.token.deeper}}", "{{ .token }}-{{.vu}}", "plain {{/* comment */}}{{.vu}}",
	} {
		set := &Set{}
		x, err := set.tmpls.text("t", src)
		if err != nil {
			t.Fatal(err)
		}
		set.tmpls.ready(&set.seq)
		fast := &VU{data: data}
		slow := &VU{data: data, set: set}
		slowText := x
		slowText.fast = nil
		want, werr := slow.render(nil, slowText)
		if x.fast == nil {
			if !strings.Contains(src, "comment") {
				t.Errorf("%q: no fast path", src)
			}
			continue
		}
		got, gerr := fast.render(nil, x)
		if (werr == nil) != (gerr == nil) || (werr == nil && string(got) != string(want)) {
			t.Errorf("%q: fast %q (%v), text/template %q (%v)", src, got, gerr, want, werr)
		}
	}
}

// uuids never repeat: not between the preflight and user 0 (which share
// user 0's data), and not between two runs of the same plan with the same
// seed; the seeded draws (randInt) do repeat with the seed.
func TestUUIDsUniqueAcrossRunsAndPreflight(t *testing.T) {
	const plan = "target: http://127.0.0.1:9\nload: {rates: [1]}\nvars: {u: \"{{uuid}}\", r: \"{{randInt 1 1000000}}\"}\nscenarios:\n  - request: {url: \"/{{.u}}\"}\n"
	draw := func(s *Set, v *VU) (string, string) {
		if err := v.begin(); err != nil {
			t.Fatal(err)
		}
		return v.data["u"].(string), v.data["r"].(string)
	}
	a, b := compile(t, plan), compile(t, plan)
	ua, ra := draw(a, a.NewVU(0, nil))
	ub, rb := draw(b, b.NewVU(0, nil))
	if ua == ub {
		t.Errorf("two runs of one plan drew the same first uuid %s", ua)
	}
	if ra != rb {
		t.Errorf("randInt with the same seed = %s and %s, want the same draw", ra, rb)
	}
	up, _ := draw(a, a.newVU(0, preflightStream, preflightStream, nil))
	if up == ua {
		t.Errorf("the preflight drew user 0's first uuid %s", up)
	}
	us, _ := draw(a, a.newVU(0, socketStream, socketStream, nil))
	if us == ua || us == up {
		t.Errorf("the held sockets' renderer drew a user's or the preflight's uuid %s", us)
	}
	// A repeat makes user 0 again: its uuids are new, its seeded draws the same.
	ua2, ra2 := draw(a, a.NewVU(0, nil))
	if ua2 == ua || ra2 != ra {
		t.Errorf("user 0 made again drew uuid %s (first %s), randInt %s (first %s); want a new uuid, the same draw", ua2, ua, ra2, ra)
	}
}

// begin sets an iteration's data as Iterate does for a user that needs no
// login: its row, numbers, what a login extracted, then both kinds of vars.
func (v *VU) begin() error {
	v.base()
	if err := v.evalVars(false); err != nil {
		return err
	}
	return v.evalVars(true)
}

// env reads the environment: alone in an action it is read once, as
// literal text; in a pipeline it goes through text/template.
func TestTemplateEnv(t *testing.T) {
	t.Setenv("CEILING_TEST_TOKEN", "a b&c")
	s := compile(t, "target: http://127.0.0.1:9\nload: {rates: [1]}\nvars: {a: 'Bearer {{env \"CEILING_TEST_TOKEN\"}}', q: '{{env \"CEILING_TEST_TOKEN\" | urlquery}}'}\nscenarios:\n  - request: {url: /}\n")
	v := s.NewVU(0, nil)
	if err := v.begin(); err != nil {
		t.Fatal(err)
	}
	if got, want := v.data["a"], "Bearer a b&c"; got != want {
		t.Errorf(`{{env "CEILING_TEST_TOKEN"}} = %q, want %q`, got, want)
	}
	if got, want := v.data["q"], "a+b%26c"; got != want {
		t.Errorf(`{{env "CEILING_TEST_TOKEN" | urlquery}} = %q, want %q`, got, want)
	}
}

// A failed check that did not need the body says the body was not kept,
// with its size, rather than calling a body of 151 bytes empty; an empty
// body is still "(empty)".
func TestFailedCheckBodyNotKept(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/empty" {
			return
		}
		w.Write([]byte(strings.Repeat("b", 151)))
	}))
	defer srv.Close()
	for path, want := range map[string]string{"/full": "body not kept (151 bytes)", "/empty": "body (empty)"} {
		s := compile(t, fmt.Sprintf(`
target: %s
load: {rates: [1]}
scenarios:
  - request: {url: %s}
    expect: {header: {X-Wanted: yes}}
`, srv.URL, path))
		run(t, s, 1, 1)
		if got := s.TakeFailedCheck(); !strings.Contains(got, want) {
			t.Errorf("TakeFailedCheck() after %s = %q, want it to say %q", path, got, want)
		}
	}
}

// A body_file's bytes are sent as they are: no template ({{ stays), the
// file read once when the plan compiles.
func TestBodyFileSentAsItIs(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	body := `{"b": 1, "a": "{{not a template}}"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "order.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(fmt.Sprintf("target: %s\nload: {rates: [1]}\nscenarios:\n  - request: {method: POST, url: /o, body_file: order.json}\n", srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.LoadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, 1, 1)
	if string(got) != body {
		t.Errorf("the body sent: %q, want the file's bytes %q", got, body)
	}
}
