package load

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// ledger is a loopback target for the engine-parity test: every answer
// after parityDelay, each kind of request counted, and each request the
// generator got wrong (a template not rendered, a cookie or token it was
// not given) counted as refused.
type ledger struct {
	mu      sync.Mutex
	seen    int // requests answered, refused ones included
	refused int
	fresh   int // /c without a cookie: given one
	again   int // /c with the cookie it was given
	checks  int // /check answers; every fourth is "bad"
	logins  int
	cookies map[string]bool
	tokens  map[string]bool
}

// parityDelay is the ledger's wait before each answer: the latency both
// engines must read.
const parityDelay = 2 * time.Millisecond

func newLedger(t *testing.T) (*ledger, string) {
	l := &ledger{cookies: map[string]bool{}, tokens: map[string]bool{}}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, srv.URL
}

func (l *ledger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(parityDelay)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen++
	switch r.URL.Path {
	case "/fixed":
		fmt.Fprint(w, "ok")
	case "/t": // a templated URL and header, both rendered
		if _, err := strconv.Atoi(r.URL.Query().Get("n")); err != nil || r.Header.Get("X-User") == "" || r.Header.Get("X-User")[0] == '{' {
			l.refuse(w)
			return
		}
		fmt.Fprint(w, "ok")
	case "/c": // a cookie handed out once and sent back by the same user after
		c, err := r.Cookie("k")
		switch {
		case err != nil:
			l.fresh++
			v := strconv.Itoa(l.fresh)
			l.cookies[v] = true
			http.SetCookie(w, &http.Cookie{Name: "k", Value: v, Path: "/"})
			fmt.Fprint(w, "fresh")
		case l.cookies[c.Value]:
			l.again++
			fmt.Fprint(w, "again")
		default:
			l.refuse(w)
		}
	case "/check":
		l.checks++
		if l.checks%4 == 0 {
			fmt.Fprint(w, "bad!")
			return
		}
		fmt.Fprint(w, "good")
	case "/login":
		l.logins++
		tok := fmt.Sprintf("t%04d", l.logins)
		l.tokens[tok] = true
		fmt.Fprintf(w, `{"token":%q}`, tok)
	case "/me":
		if a := r.Header.Get("Authorization"); len(a) < 7 || !l.tokens[a[7:]] {
			l.refuse(w)
			return
		}
		fmt.Fprint(w, "me")
	default:
		l.refuse(w)
	}
}

func (l *ledger) refuse(w http.ResponseWriter) {
	l.refused++
	http.Error(w, "refused", http.StatusForbidden)
}

// parityPlan compiles a plan of the given scenarios (YAML) against url.
func parityPlan(t *testing.T, url, body string) *scenario.Set {
	t.Helper()
	p, err := plan.Parse("parity.yaml", []byte("target: "+url+"\nload: {rates: [1]}\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parityRun is one engine's run of a feature: what the step counted, and
// what the target saw.
type parityRun struct {
	res *Result
	l   *ledger
}

// Every scenario feature behaves the same on both engines: the event loop
// and a goroutine per user. In the open model, whose arrivals are the
// same on both, every counter of the step is compared exactly (sent,
// started, not sent, iterations, completed, each outcome kind, each
// scenario's and tag's, body bytes out and, where the answers do not
// depend on how many users ran, in); the figures that depend on timing
// alone (late arrivals, lag) are not. In the closed model, where the
// number of iterations is the wall clock's, each engine's counters are
// compared exactly with what the target saw. Latencies: each engine's p50
// within parityDelay and parityDelay+5 ms, the two within 2 ms of each
// other.
//
// The engines run one after the other: a loop waits for the network in
// system calls that hold their processor, and loops side by side in one
// process would starve the test's own server of processors.
func TestEnginesAgree(t *testing.T) {
	t.Parallel()
	open := Step{Rate: 100, Length: 300 * time.Millisecond}
	closed := Step{VUs: 2, Length: 250 * time.Millisecond}
	for _, tc := range []struct {
		name  string
		st    Step
		think time.Duration
		// cookies: the target's first answer sets a cookie, as the run's
		// preflight would have found (load.Config.Cookies).
		cookies bool
		plan    string
		// bytesIn is false where the answers' bytes depend on how many
		// users ran (a login's token, a cookie's first answer).
		bytesIn bool
		// target checks one engine's run against what the target saw.
		target func(t *testing.T, p parityRun)
	}{
		{name: "fixed request", st: open, bytesIn: true, plan: `
scenarios: [{request: {url: /fixed}}]`,
			target: func(t *testing.T, p parityRun) { sameAsTarget(t, p, p.l.seen) }},
		{name: "template", st: open, bytesIn: true, plan: `
scenarios:
  - request: {url: "/t?n={{seq}}", headers: {X-User: "{{.vu}}"}}
    tags: {n: "{{randInt 1 3}}"}`,
			target: func(t *testing.T, p parityRun) { sameAsTarget(t, p, p.l.seen) }},
		{name: "check", st: open, bytesIn: true, plan: `
scenarios:
  - request: {url: /check}
    expect: {body_contains: good}`,
			target: func(t *testing.T, p parityRun) {
				sameAsTarget(t, p, p.l.seen)
				if got, want := p.res.Total.Kinds[transport.Check], int64(p.l.checks/4); got != want {
					t.Errorf("check failures %d, want the %d bad answers", got, want)
				}
			}},
		{name: "cookies", st: open, cookies: true, plan: `
scenarios: [{request: {url: /c}}]`,
			target: func(t *testing.T, p parityRun) {
				sameAsTarget(t, p, p.l.seen)
				if p.l.fresh == 0 || p.l.fresh > p.res.Workers+1 || p.l.again == 0 {
					t.Errorf("cookies handed out %d, sent back %d, users %d: want one a user, sent back after", p.l.fresh, p.l.again, p.res.Workers)
				}
			}},
		{name: "login", st: open, plan: `
login:
  - request: {method: POST, url: /login}
    extract: {token: {json: token}}
scenarios:
  - request: {url: /me, headers: {Authorization: "Bearer {{.token}}"}}`,
			target: func(t *testing.T, p parityRun) {
				lg := p.res.Total.Logins
				if lg.OK() != int64(p.l.logins) || lg.Failed() != 0 || lg.Skipped != 0 {
					t.Errorf("logins ok %d, failed %d, skipped %d; the target saw %d", lg.OK(), lg.Failed(), lg.Skipped, p.l.logins)
				}
				sameAsTarget(t, p, p.l.seen-p.l.logins)
			}},
		{name: "flow", st: open, plan: `
scenarios:
  - name: two
    tags: {kind: flow}
    steps:
      - request: {url: /fixed}
      - request: {url: /check}
        expect: {body_contains: good}`,
			target: func(t *testing.T, p parityRun) {
				sameAsTarget(t, p, p.l.seen)
				sc := p.res.Total.Scenarios[0]
				if got, want := sc.Kinds.Completed(), p.res.Iterations; got != want || 2*got != p.res.Total.Completed() {
					t.Errorf("iterations %d (step: %d), exchanges %d: want two exchanges an iteration", got, want, p.res.Total.Completed())
				}
			}},
		{name: "closed model", st: closed, bytesIn: true, plan: `
scenarios: [{request: {url: /fixed}}]`,
			target: func(t *testing.T, p parityRun) { sameAsTarget(t, p, p.l.seen) }},
		{name: "think time", st: closed, think: 40 * time.Millisecond, bytesIn: true, plan: `
scenarios: [{request: {url: "/t?n={{seq}}", headers: {X-User: "{{.vu}}"}}}]`,
			target: func(t *testing.T, p parityRun) {
				sameAsTarget(t, p, p.l.seen)
				// Each user begins an iteration at most once a think time.
				if most := int64(closed.VUs) * int64(closed.Length/(40*time.Millisecond)+1); p.res.Iterations > most {
					t.Errorf("%d iterations, want at most %d: the users thought 40ms between them", p.res.Iterations, most)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var runs [2]parityRun
			for i, off := range []bool{false, true} {
				runs[i] = parityAttempts(t, tc.st, off, func(url string, c *Config) {
					c.Scenarios, c.Think, c.Cookies = parityPlan(t, url, tc.plan), tc.think, tc.cookies
				})
			}
			for i, p := range runs {
				t.Run(map[int]string{0: "loop", 1: "goroutines"}[i], func(t *testing.T) {
					p.l.mu.Lock()
					defer p.l.mu.Unlock()
					if p.l.refused != 0 {
						t.Errorf("the target refused %d requests: a template, cookie or token gone wrong", p.l.refused)
					}
					tc.target(t, p)
					if p50 := metrics.Summarize(p.res.Total.Latency).P50; p50 < ms(parityDelay) || p50 > ms(parityDelay)+5 {
						t.Errorf("p50 %v ms, want %v…%v", p50, ms(parityDelay), ms(parityDelay)+5)
					}
				})
			}
			loop, gor := runs[0].res, runs[1].res
			if d := metrics.Summarize(loop.Total.Latency).P50 - metrics.Summarize(gor.Total.Latency).P50; math.Abs(d) > 2 {
				t.Errorf("p50 on the loop %v ms, on goroutines %v: want within 2 ms", metrics.Summarize(loop.Total.Latency).P50, metrics.Summarize(gor.Total.Latency).P50)
			}
			if tc.st.VUs > 0 {
				return // the closed model's iterations are the wall clock's
			}
			if loop.NotSent+gor.NotSent > 0 {
				// The machine held a step back past its window in every
				// attempt: each engine's own figures were checked above
				// against its target, the two cannot be compared.
				t.Logf("arrivals not sent: %d on the loop, %d on goroutines; counters not compared", loop.NotSent, gor.NotSent)
				return
			}
			sameCounters(t, loop, gor, tc.bytesIn)
		})
	}
}

// parityAttempts runs the step on one engine (off: goroutines) against a
// fresh ledger, mod giving the runner its plan, until the step ran on
// time: every arrival sent, none more than 20 ms late, the p50 within
// parityDelay+5 ms. A shared machine may hold a step back (a neighbour's
// load, the race detector); an engine's own fault holds every attempt
// back, and the last one's figures fail the test.
func parityAttempts(t *testing.T, st Step, off bool, mod func(url string, c *Config)) parityRun {
	t.Helper()
	var p parityRun
	for attempt := 1; attempt <= 3; attempt++ {
		l, url := newLedger(t)
		r := loopRunner(t, url, off, func(c *Config) { mod(url, c) })
		res := r.Run(context.Background(), st)
		if res.Loop == off {
			t.Fatalf("the step ran on the loop: %v, want %v", res.Loop, !off)
		}
		p = parityRun{res: res, l: l}
		p50 := metrics.Summarize(res.Total.Latency).P50
		if res.NotSent == 0 && res.Total.MaxLag <= 20*time.Millisecond && p50 <= ms(parityDelay)+5 {
			break
		}
		t.Logf("attempt %d on the loop %v: %d arrivals not sent, one %v late, p50 %v ms: again", attempt, !off, res.NotSent, res.Total.MaxLag, p50)
	}
	return p
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sameAsTarget checks that the step's exchanges are what the target
// answered (seen), each answered OK but the check failures.
func sameAsTarget(t *testing.T, p parityRun, seen int) {
	t.Helper()
	tot := p.res.Total
	if tot.Completed() != int64(seen) || p.res.Sent != int64(seen) {
		t.Errorf("completed %d, sent %d; the target answered %d", tot.Completed(), p.res.Sent, seen)
	}
	if tot.OK()+tot.Kinds[transport.Check] != tot.Completed() {
		t.Errorf("kinds %v: want every exchange OK but the failed checks", tot.Kinds)
	}
	if p.res.Iterations == 0 {
		t.Error("no iteration")
	}
	if st := p.res.Step; st.Rate > 0 {
		if want := int64(st.Rate * st.Length.Seconds()); p.res.Started+p.res.NotSent+p.res.Total.Logins.Skipped != want || p.res.Iterations != p.res.Started {
			t.Errorf("arrivals started %d, not sent %d, iterations %d: want the %d arrivals of the window, each an iteration", p.res.Started, p.res.NotSent, p.res.Iterations, want)
		}
	}
}

// sameCounters compares two open-model steps' counters exactly.
func sameCounters(t *testing.T, a, b *Result, bytesIn bool) {
	t.Helper()
	type counts struct {
		Sent, Started, NotSent, Iterations int64
		Kinds                              metrics.Counts
		BytesOut, Redirected, Idle         int64
		Skipped                            int64
		Scenarios                          []metrics.Counts
		Tags                               []metrics.Counts
	}
	of := func(r *Result) counts {
		c := counts{Sent: r.Sent, Started: r.Started, NotSent: r.NotSent, Iterations: r.Iterations, Kinds: r.Total.Kinds,
			BytesOut: r.Total.BytesOut, Redirected: r.Total.Redirected, Idle: r.Total.Idle, Skipped: r.Total.Logins.Skipped,
			Tags: make([]metrics.Counts, len(r.Total.Tags))}
		for _, s := range r.Total.Scenarios {
			c.Scenarios = append(c.Scenarios, s.Kinds)
		}
		// A tag's values may come from each user's random stream, and the
		// users are the engine's own: each tag's iterations are compared
		// in sum.
		for i, tag := range r.Total.Tags {
			for _, s := range tag {
				for k, n := range s.Kinds {
					c.Tags[i][k] += n
				}
			}
		}
		return c
	}
	if ca, cb := of(a), of(b); fmt.Sprint(ca) != fmt.Sprint(cb) {
		t.Errorf("counters differ:\n  loop       %+v\n  goroutines %+v", ca, cb)
	}
	if bytesIn && a.Total.BytesIn != b.Total.BytesIn {
		t.Errorf("bytes in: %d on the loop, %d on goroutines", a.Total.BytesIn, b.Total.BytesIn)
	}
}
