package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// shop is a loopback target whose every answer a flow's next request
// depends on, and which counts what it saw: a login sets a session cookie
// and hands out a token; an item created with the token and the cookie is
// answered with its id, but every tenth one without it (an answer a check
// must catch); reading an item back needs the cookie and an id it made.
type shop struct {
	mu       sync.Mutex
	logins   int
	created  int
	withID   int // items answered with their id
	reads    int // items read back with a valid session and id
	refused  int // requests with a wrong session, token or id: the generator's mistakes
	sessions map[string]string
	ids      map[string]bool
	refuse   string        // the email whose logins fail
	delay    time.Duration // before each answer
}

// newShop starts a shop; refuse is the email whose logins fail, delay
// the wait before each answer.
func newShop(t *testing.T, refuse string, delay time.Duration) (*shop, string) {
	s := &shop{sessions: map[string]string{}, ids: map[string]bool{}, refuse: refuse, delay: delay}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	sid, _ := r.Cookie("sid")
	valid := sid != nil && s.sessions[sid.Value] != "" && r.Header.Get("Authorization") == "Bearer "+s.sessions[sid.Value]
	switch {
	case r.Method == "POST" && r.URL.Path == "/login":
		var body struct{ Email string }
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.Email == s.refuse {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		s.logins++
		id := fmt.Sprintf("s%d", s.logins)
		s.sessions[id] = "t" + id
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: id, Path: "/"})
		fmt.Fprintf(w, `{"data":{"token":"t%s"}}`, id)
	case r.Method == "POST" && r.URL.Path == "/items" && valid:
		var body struct{ ID, Tenant string }
		if json.NewDecoder(r.Body).Decode(&body) != nil || len(body.ID) != 36 || body.Tenant != "acme" {
			s.refused++
			http.Error(w, "bad item", http.StatusBadRequest)
			return
		}
		s.created++
		if s.created%10 == 0 {
			fmt.Fprint(w, `{"data":{}}`)
			return
		}
		s.withID++
		s.ids[body.ID] = true
		fmt.Fprintf(w, `{"data":{"id":%q}}`, body.ID)
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/items/") && valid && s.ids[strings.TrimPrefix(r.URL.Path, "/items/")]:
		s.reads++
		fmt.Fprint(w, "item ok")
	default:
		s.refused++
		http.Error(w, "refused", http.StatusForbidden)
	}
}

// shopPlan logs each user in, then creates an item with a fresh id, checks
// the answer, extracts the id and reads the item back: a two-request flow,
// a cookie, a token, a templated JSON body and URL, a check and an
// extraction, and a tag.
func shopPlan(t *testing.T, url string) *scenario.Set {
	t.Helper()
	p, err := plan.Parse("shop.yaml", []byte(`
target: `+url+`
load: {rates: [1]}
login:
  - request: {method: POST, url: /login, json: {email: "u{{.vu}}@test"}}
    extract: {token: {json: data.token}}
scenarios:
  - name: create
    tags: {tenant: acme}
    steps:
      - request:
          method: POST
          url: /items
          headers: {Authorization: "Bearer {{.token}}"}
          json: {id: "{{uuid}}", tenant: acme}
        expect: {status: [200]}
        extract: {id: {json: data.id}}
      - request: {url: "/items/{{.id}}", headers: {Authorization: "Bearer {{.token}}"}}
        expect: {body_contains: "item ok"}
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The loop drives virtual users through logins, cookies, templated bodies,
// checks and extraction exactly as the goroutines do: every figure of the
// step equals what the target saw, on both engines and in both models.
func TestLoopUsersMatchTheTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		st   Step
	}{
		{"open", Step{Rate: 300, Length: 700 * time.Millisecond}},
		{"closed", Step{VUs: 4, Length: 500 * time.Millisecond}},
	} {
		for _, off := range []bool{false, true} {
			engine := map[bool]string{false: "loop", true: "goroutines"}[off]
			t.Run(tc.name+"/"+engine, func(t *testing.T) {
				t.Parallel()
				s, url := newShop(t, "", 0)
				r := loopRunner(t, url, off, func(c *Config) { c.Scenarios = shopPlan(t, url) })
				if got := r.UsesLoop(tc.st); got == off {
					t.Fatalf("runs on the loop: %v, want %v", got, !off)
				}
				res := r.Run(context.Background(), tc.st)
				if res.Loop == off {
					t.Fatalf("the step ran on the loop: %v, want %v", res.Loop, !off)
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				tot := res.Total
				if s.refused != 0 {
					t.Errorf("the target refused %d requests: a wrong cookie, token, id or body", s.refused)
				}
				if s.created == 0 || s.reads == 0 {
					t.Fatalf("created %d, read %d: nothing ran", s.created, s.reads)
				}
				if got := tot.Logins.Attempts(); got != int64(s.logins) || tot.Logins.OK() != got || int(got) != res.Workers {
					t.Errorf("logins %d (ok %d), target saw %d, users %d: want one each", got, tot.Logins.OK(), s.logins, res.Workers)
				}
				// Every request of an iteration counts where the iteration
				// does (a read sent after the window, its create ended
				// there; a first iteration whose login ended after it): the
				// step's exchanges, sent and completed, are the target's own
				// count, exactly.
				if got, want := tot.Completed(), int64(s.created+s.reads); got != want || res.Sent != want {
					t.Errorf("exchanges completed %d, sent %d; the target answered %d", got, res.Sent, want)
				}
				within := func(got, want int64) bool { return got == want }
				if got, want := tot.Kinds[transport.Check], int64(s.created-s.withID); !within(got, want) {
					t.Errorf("check failures %d, want the %d items answered without an id", got, want)
				}
				sc := tot.Scenarios[0]
				if got, want := sc.Kinds[transport.OK], int64(s.reads); !within(got, want) {
					t.Errorf("iterations ok %d, want the %d items read back", got, want)
				}
				if got, want := sc.Kinds.Completed(), int64(s.created); !within(got, want) {
					t.Errorf("iterations %d, want one per item created (%d)", got, want)
				}
				if got := tot.Tags[0]["acme"]; got == nil || got.Kinds.Completed() != sc.Kinds.Completed() {
					t.Errorf("tag tenant=acme: %+v, want every iteration", got)
				}
				if tc.st.Rate > 0 && res.Iterations != int64(s.created) {
					t.Errorf("%d iterations, target saw %d items", res.Iterations, s.created)
				}
			})
		}
	}
}

// A closed-model user on the loop thinks between its iterations: no more
// iterations than the think time allows.
func TestLoopUsersThink(t *testing.T) {
	t.Parallel()
	s, url := newShop(t, "", 0)
	const think = 50 * time.Millisecond
	r := loopRunner(t, url, false, func(c *Config) { c.Scenarios = shopPlan(t, url); c.Think = think })
	st := Step{VUs: 2, Length: 500 * time.Millisecond}
	if !r.UsesLoop(st) {
		t.Fatal("a thinking user does not run on the loop")
	}
	res := r.Run(context.Background(), st)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Each user begins at most one iteration per think time in the window.
	if most := 2 * int(st.Length/think); s.created == 0 || s.created > most {
		t.Errorf("items created %d, want 1…%d: the users thought %v between iterations", s.created, most, think)
	}
	if got := res.Total.Scenarios[0].Kinds.Completed(); got != int64(s.created) {
		t.Errorf("iterations %d, target saw %d", got, s.created)
	}
}

// A user whose every iteration fails before it sends anything (its
// rendered header would inject others, and is refused) does not hold the
// loop: the step ends on time, each iteration a check failure, and nothing
// reaches the target.
func TestLoopUsersThatNeverSend(t *testing.T) {
	t.Parallel()
	s, url := newShop(t, "", 0)
	set := compiled(t, plan.Scenario{Request: plan.Request{URL: url + "/items/1", Headers: map[string]string{"X-Bad": `{{printf "%c" 10}}`}}})
	r := loopRunner(t, url, false, func(c *Config) { c.Scenarios = set })
	st := Step{VUs: 2, Length: 300 * time.Millisecond}
	if !r.UsesLoop(st) {
		t.Fatal("the plan does not run on the loop")
	}
	begun := time.Now()
	res := r.Run(context.Background(), st)
	if took := time.Since(begun); took > 2*time.Second {
		t.Errorf("the step took %v, want about its 300ms", took)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := res.Total.Scenarios[0]
	if sc.Kinds[transport.Check] == 0 || sc.Kinds.Completed() != sc.Kinds[transport.Check] || s.refused+s.created+s.reads+s.logins != 0 {
		t.Errorf("iterations %v, target saw %d requests; want only check failures and none", sc.Kinds, s.refused+s.created+s.reads+s.logins)
	}
}

// A user whose login fails ends its iterations at once, unrun, while it
// backs off, and tries again later; the others run the scenario. Every
// arrival of the window is accounted for: run (sent) or skipped for want
// of a login, on the loop as on goroutines.
func TestLoopUsersFailedLogin(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{false, true} {
		t.Run(map[bool]string{false: "loop", true: "goroutines"}[off], func(t *testing.T) {
			s, url := newShop(t, "u0@test", 10*time.Millisecond)
			r := loopRunner(t, url, off, func(c *Config) { c.Scenarios = shopPlan(t, url) })
			res := r.Run(context.Background(), Step{Rate: 200, Length: 500 * time.Millisecond}) // logins back off from 100 ms: retries come within it
			l := res.Total.Logins
			s.mu.Lock()
			defer s.mu.Unlock()
			if l.Failed() < 2 || l.Retries < 1 || l.OK() != int64(s.logins) {
				t.Errorf("logins failed %d, retries %d, ok %d (target: %d); want user 0's failing and retried, the others' ok", l.Failed(), l.Retries, l.OK(), s.logins)
			}
			if res.Iterations+l.Skipped+res.NotSent != 100 || l.Skipped == 0 || s.reads == 0 {
				t.Errorf("iterations %d + skipped %d + not sent %d, items read %d; want 100 arrivals, some skipped, some run", res.Iterations, l.Skipped, res.NotSent, s.reads)
			}
			if s.refused != 0 {
				t.Errorf("the target refused %d requests", s.refused)
			}
		})
	}
}

// stingy is a loop that refuses every other Send, as the real one does
// past the connections it may open between two polls.
type stingy struct {
	transport.Loop
	n int
}

func (s *stingy) Send(r *transport.Request, tag transport.Tag) bool {
	if s.n++; s.n%2 == 1 {
		return false
	}
	return s.Loop.Send(r, tag)
}

// A user's request the loop does not take at once is held and sent after
// the next poll, in order: nothing is lost or sent twice, and the figures
// still equal what the target saw.
func TestLoopUsersHeldRequests(t *testing.T) {
	t.Parallel()
	s, url := newShop(t, "", 0)
	r := loopRunner(t, url, false, func(c *Config) {
		c.Scenarios = shopPlan(t, url)
		c.Loop = &stingy{Loop: c.Loop}
	})
	res := r.Run(context.Background(), Step{Rate: 200, Length: 500 * time.Millisecond})
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := res.Total.Scenarios[0]
	// As in TestLoopUsersMatchTheTarget, a first iteration whose login ended
	// after the window is not the step's: at most one per user.
	w := int64(res.Workers)
	if s.refused != 0 || s.created != 100 || sc.Kinds.Completed() > 100 || sc.Kinds.Completed() < 100-w ||
		sc.Kinds[transport.OK] > int64(s.reads) || sc.Kinds[transport.OK] < int64(s.reads)-w {
		t.Errorf("target: %d items created, %d read, %d refused; iterations %v; want 100 created, each iteration recorded once",
			s.created, s.reads, s.refused, sc.Kinds)
	}
	if res.Total.Logins.Attempts() != int64(s.logins) || res.Total.Completed() > int64(s.created+s.reads) {
		t.Errorf("logins %d (target %d), exchanges %d (target %d)", res.Total.Logins.Attempts(), s.logins, res.Total.Completed(), s.created+s.reads)
	}
}
