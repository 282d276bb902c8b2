package scenario

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Recorder receives what iterations do. The load executor implements it
// over its clock and its metrics shard; it decides what a step counts.
type Recorder interface {
	// Now returns the offset from the run's base.
	Now() time.Duration
	// Exchange records one request of the iteration meant to start at of
	// (the arrival that began it, its login included), which decides the
	// step that counts it: every request of an iteration is counted where
	// the iteration is, so that a flow crossing a window's end is counted
	// whole. intended (when the request was meant to start: the scenario's
	// start for the first, its send for a later one), start and end are
	// offsets, out what it produced; it returns nothing and must not keep
	// out.
	Exchange(of, intended, start, end time.Duration, out *transport.Outcome)
	// Iteration records how an iteration ended. It must not keep it.
	Iteration(it *metrics.Iteration)
	// Idle records an iteration meant to start at intended that sent
	// nothing by design (an idle soak), so it is not taken for a lost one.
	Idle(intended time.Duration)
	// StepOf returns the index of the step whose counted window holds
	// intended, or -1 (a warm-up).
	StepOf(intended time.Duration) int
	// Login records one login attempt; its exchanges are recorded by no
	// other method. It must not keep l.
	Login(l *metrics.Login)
	// NoLogin records an iteration meant to start at intended whose
	// scenario did not run because its user has not logged in.
	NoLogin(intended time.Duration)
}

// VU is one virtual user.
type VU struct {
	set      *Set
	id       int
	sess     transport.Session
	rng      *rand.Rand // randInt, randString, pick: repeat with the plan's seed
	ids      *rand.Rand // uuid: unique per run
	data     map[string]any
	persist  map[string]string // what the login extracted
	loggedIn bool
	// failures counts the user's failed login attempts since its last
	// success; retryAt is the offset before which it does not try again.
	failures int
	retryAt  time.Duration
	jar      jar
	n        int64 // iterations begun

	// done is the context of the iteration under way: once it is closed
	// the iteration stops before its next request or frame (see Iterate).
	done <-chan struct{}

	// The iteration under way, one request at a time (Begin, Answer).
	fl flow
	// of is when the iteration under way was meant to start: the arrival
	// (or the closed-model user's turn) that began it, its login included.
	// Its requests, frames and the iteration itself are counted in the step
	// whose window holds it.
	of       time.Duration
	u        uint64        // the iteration's pick (Iterate's u)
	wsNext   bool          // the scenario picked is a websocket one, which Iterate runs
	pauseFor time.Duration // the wait the last iteration asked for

	own    map[*wsScenario]*slot // the closed model's own sockets
	waiter *waiter               // this user's frame waiting for its ack

	// Scratch, reused by every iteration.
	req      transport.Request
	o        transport.Outcome
	out      bytes.Buffer
	scratch  []byte
	leaf     []byte
	frameBuf []byte
	it       metrics.Iteration
	login    metrics.Login
}

// NewVU returns virtual user id, performing its requests on sess. Its
// seeded draws are user id's (they repeat with the plan's seed, in every
// repeat of a run); its uuids come from a stream of its own, so that a
// user made again (a repeat's fresh users) never repeats an earlier one's.
func (s *Set) NewVU(id int, sess transport.Session) *VU {
	return s.newVU(id, uint64(id)+1, s.made.Add(1)<<32|uint64(uint32(id)), sess)
}

// preflightStream is the random stream of the preflight's user, apart from
// every virtual user's (stream id+1).
const preflightStream = ^uint64(0)

// socketStream is the random stream that renders the held sockets' URLs and
// headers, apart from the users' and the preflight's.
const socketStream = ^uint64(0) - 1

// newVU returns user id drawing its seeded values from random stream
// stream (they repeat with the plan's seed) and its uuids from idStream
// (the run's own).
func (s *Set) newVU(id int, stream, idStream uint64, sess transport.Session) *VU {
	v := &VU{
		set: s, id: id, sess: sess,
		rng:     rand.New(rand.NewPCG(s.seed, stream)),
		ids:     rand.New(rand.NewPCG(s.nonce, idStream)),
		data:    map[string]any{},
		persist: map[string]string{},
		jar:     jar{dropped: &s.droppedCookies},
	}
	v.it.Tags = make([]string, len(s.tagKeys))
	return v
}

// Session returns the VU's transport session.
func (v *VU) Session() transport.Session { return v.sess }

// base resets the iteration's data but for the vars: the user's row, its
// number, the iteration's number and what the login extracted.
func (v *VU) base() {
	if len(v.set.tmpls.list) == 0 {
		return // nothing renders: no data needed
	}
	clear(v.data)
	if n := len(v.set.users); n > 0 {
		v.data["user"] = v.set.users[v.id%n]
	}
	v.data["vu"] = v.id
	v.data["iteration"] = v.n
	for k, val := range v.persist {
		v.data[k] = val
	}
}

// evalVars renders the vars evaluated before the login (late false) or
// after it (late true); they may read what base set.
func (v *VU) evalVars(late bool) error {
	if len(v.set.tmpls.list) == 0 {
		return nil
	}
	for _, nt := range v.set.vars {
		if nt.late != late {
			continue
		}
		val, err := v.renderString(nt.text)
		if err != nil {
			return fmt.Errorf("vars.%s: %w", nt.name, err)
		}
		v.data[nt.name] = val
	}
	return nil
}

// Iterate runs one iteration that was meant to start at intended: the
// login flow first if this user has not logged in, then the scenario that u
// (a uniform 64-bit number, see Mix) picks by weight. It returns how long
// the user should wait before its next iteration: the Retry-After of a
// limited answer when the plan obeys it, the backoff of a failed login,
// else zero.
//
// A user whose login fails does not run the scenario: the iteration ends
// there (recorded with NoLogin), and the user tries again in a later
// iteration that starts after a backoff (see LoginBackoff). An iteration
// that comes earlier (the open model hands arrivals to a worker whatever
// its user's state) ends at once, also unrun. A login's figures are
// recorded with Login only, never as exchanges or iterations.
//
// ctx bounds the iteration: once it is done, a flow sends no further
// request and a websocket scenario no further frame nor waits longer for
// an ack. An iteration cut so ends as a timeout (ws_no_ack for a frame), as
// does an exchange that failed because its connection was aborted then: it
// did not finish in the time its step allowed.
//
// Iterate performs the requests on the user's session, one after another;
// an event loop drives the same iteration with Begin and Answer instead.
func (v *VU) Iterate(ctx context.Context, rec Recorder, intended time.Duration, u uint64) (pause time.Duration) {
	req := v.Begin(ctx.Done(), rec, intended, u)
	for req != nil {
		start := rec.Now()
		v.sess.Do(req, &v.o)
		req = v.answer(rec, start, rec.Now())
	}
	if !v.wsNext {
		return v.pauseFor
	}
	v.wsNext = false
	sc, c := v.fl.sc, v.set.scenarios[v.fl.sc]
	end, kind, body := v.frame(rec, c.ws, v.fl.intended, u)
	if c.ws.idle {
		rec.Idle(v.fl.intended)
	} else {
		v.finish(rec, sc, v.fl.intended, end, kind, body)
		v.deliver(rec, c, v.fl.intended, kind)
	}
	return 0
}

// Login retries back off exponentially: the first retry waits about
// LoginBackoff, each later one twice as long as the one before, up to
// MaxLoginBackoff.
const (
	LoginBackoff    = 100 * time.Millisecond
	MaxLoginBackoff = 3200 * time.Millisecond
)

// backoff is the wait before the next login attempt after v.failures
// failed ones: LoginBackoff doubled each time up to MaxLoginBackoff, of
// which the second half is drawn at random (from the uuid stream, so that
// the seeded draws of templates repeat), so that users whose logins failed
// together do not all try again at the same instant.
func (v *VU) backoff() time.Duration {
	b := MaxLoginBackoff
	if n := v.failures - 1; n < 6 {
		b = min(LoginBackoff<<n, MaxLoginBackoff)
	}
	return b/2 + time.Duration(v.ids.Int64N(int64(b/2)+1))
}

// LoggedIn reports whether the user has logged in, or needs no login.
func (v *VU) LoggedIn() bool { return v.loggedIn || len(v.set.login) == 0 }

// LoggedInBefore reports whether the user's login succeeded before t (an
// offset from the run's base): false when it has not logged in, logged in
// at t or later, or needs no login.
func (v *VU) LoggedInBefore(t time.Duration) bool { return v.loggedIn && v.login.End < t }

// deliver tells the ledger which id an accepted iteration expects at its
// sink, or that the iteration was not accepted.
func (v *VU) deliver(rec Recorder, c *compiled, intended time.Duration, kind transport.Kind) {
	d, l := c.delivery, v.set.deliveries
	if d == nil || l == nil {
		return
	}
	step := rec.StepOf(intended)
	if kind != transport.OK {
		l.Reject(d.sink, step)
		return
	}
	id, err := v.renderString(d.id)
	if err != nil || id == "" {
		l.Reject(d.sink, step)
		return
	}
	// The delivery latency runs from the iteration's intended start, as
	// the headline latency does.
	l.Expect(d.sink, id, time.Now().Add(intended-rec.Now()), step)
}

// maxPause caps an obeyed Retry-After.
const maxPause = time.Minute

// pause is the wait an iteration that ended with kind asks for.
func (v *VU) pause(kind transport.Kind) time.Duration {
	if kind != transport.Limited || !v.set.obeyRetryAfter {
		return 0
	}
	return min(v.o.RetryAfter, maxPause)
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(out *transport.Outcome) time.Duration {
	raw, ok := out.HeaderValue("Retry-After")
	if !ok {
		return 0
	}
	if secs, err := strconv.ParseFloat(string(raw), 64); err == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(string(raw)); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func (v *VU) finish(rec Recorder, sc int, intended, end time.Duration, kind transport.Kind, body int64) {
	v.it.Scenario, v.it.Of, v.it.Intended, v.it.End, v.it.Kind, v.it.BodyBytes = sc, v.of, intended, end, kind, body
	rec.Iteration(&v.it)
}

// cut reports whether the iteration's context is done. It does not block.
func (v *VU) cut() bool {
	select {
	case <-v.done:
		return true
	default:
		return false
	}
}

// verify runs r's checks and extractions on the last outcome.
func (v *VU) verify(r *request, login bool) transport.Kind {
	if !r.checks.ok(&v.o) {
		if !v.set.failedCheck.have.Load() {
			v.set.noteCheck(r, &v.o, login, r.checks.failure(&v.o))
		}
		return transport.Check
	}
	for _, e := range r.extract {
		val, ok := e.value(&v.o)
		if !ok {
			if !v.set.failedCheck.have.Load() {
				v.set.noteCheck(r, &v.o, login, "extract "+e.name+": not found in the response")
			}
			return transport.Check
		}
		v.data[e.name] = val
		if login {
			v.persist[e.name] = val
		}
	}
	return transport.OK
}

// ID returns the virtual user's number.
func (v *VU) ID() int { return v.id }
