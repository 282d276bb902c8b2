package scenario

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// flow is the sequence of requests under way in a user's iteration: its
// login's or its scenario's. Each request is sent once the one before
// ended well; the first was meant to start at intended, each later one
// when it was sent.
type flow struct {
	steps    []*request
	i        int                // the request under way
	login    bool               // the login's flow: recorded as a login, not as exchanges
	sc       int                // the scenario picked (not the login's)
	intended time.Duration      // the flow's first request's intended start
	body     int64              // response body bytes read so far
	req      *transport.Request // the request under way, as sent
}

// Begin starts an iteration as Iterate does, and returns its first
// request, or nil when the iteration ended without sending one (a login
// still backing off, a var that could not be rendered; Pause then says
// how long the user should wait). The caller performs each request and
// hands its outcome to Answer, which returns the next one. done bounds
// the iteration as Iterate's ctx does.
//
// The request returned belongs to the user: it is valid, unchanged, until
// the next Begin or Answer.
func (v *VU) Begin(done <-chan struct{}, rec Recorder, intended time.Duration, u uint64) *transport.Request {
	v.done, v.u, v.pauseFor, v.wsNext, v.of = done, u, 0, false, intended
	v.n++
	v.base()
	if err := v.evalVars(false); err != nil {
		v.finish(rec, v.set.Pick(u), intended, rec.Now(), transport.Check, 0)
		return nil
	}
	if len(v.set.login) > 0 && !v.loggedIn {
		// The login runs between the two kinds of vars: it may read the
		// first, and the second read what it extracts.
		if now := rec.Now(); now < v.retryAt {
			rec.NoLogin(intended)
			v.pauseFor = v.retryAt - now
			return nil
		}
		v.fl = flow{steps: v.set.login, login: true, intended: intended}
		return v.request(rec)
	}
	return v.scenario(rec, intended)
}

// Answer takes the outcome of the request Begin or the last Answer
// returned, which started and ended at the offsets given, and returns the
// next request of the iteration, or nil when it is over. out is the
// caller's: Answer reads it and does not keep it.
func (v *VU) Answer(rec Recorder, start, end time.Duration, out *transport.Outcome) *transport.Request {
	v.o = *out
	req := v.answer(rec, start, end)
	v.o.Header, v.o.Body = nil, nil // the caller's buffers
	return req
}

// Pause returns how long the user should wait before its next iteration,
// as Iterate returns it, once Begin or Answer returned nil.
func (v *VU) Pause() time.Duration { return v.pauseFor }

// scenario starts the scenario part of the iteration, meant to start at
// intended: the late vars, the pick, the tags, then its first request.
func (v *VU) scenario(rec Recorder, intended time.Duration) *transport.Request {
	if err := v.evalVars(true); err != nil {
		v.finish(rec, v.set.Pick(v.u), intended, rec.Now(), transport.Check, 0)
		return nil
	}
	for j, i := range v.set.idVars {
		v.set.ids.see(v.set.idVarNames[j], v.data[v.set.vars[i].name].(string))
	}
	sc := v.set.Pick(v.u)
	c := v.set.scenarios[sc]
	for i := range v.it.Tags {
		v.it.Tags[i] = ""
	}
	for _, t := range c.tags {
		val, err := v.renderString(t.text)
		if err != nil {
			val = "?"
		}
		v.it.Tags[t.key] = val
	}
	v.fl = flow{steps: c.steps, sc: sc, intended: intended}
	if c.ws != nil {
		v.wsNext = true
		return nil
	}
	return v.request(rec)
}

// request renders the flow's request under way. A request after the first
// is not sent once the iteration is cut (it ends as a timeout), nor one
// that could not be rendered (a check failure: a value it needs was not
// there).
func (v *VU) request(rec Recorder) *transport.Request {
	r := v.fl.steps[v.fl.i]
	tr, err := v.build(r)
	if err == nil {
		for j, i := range r.ids {
			v.set.ids.see(r.idNames[j], tr.Header[i][1])
		}
	}
	if v.fl.i > 0 && v.cut() {
		return v.ended(rec, rec.Now(), transport.Timeout)
	}
	if err != nil {
		return v.ended(rec, rec.Now(), transport.Check)
	}
	v.fl.req = tr
	return tr
}

// answer is Answer on the outcome in v.o.
func (v *VU) answer(rec Recorder, start, end time.Duration) *transport.Request {
	r := v.fl.steps[v.fl.i]
	if v.o.Kind.Failed() && v.cut() {
		v.o.Kind = transport.Timeout // aborted at the step's end, not failed by the target
	}
	if v.o.Kind == transport.OK {
		v.o.Kind = v.verify(r, v.fl.login)
	}
	if v.o.Kind == transport.Limited {
		v.o.RetryAfter = retryAfter(&v.o)
	}
	if v.o.Header != nil {
		v.jar.update(v.fl.req.URL, &v.o)
	}
	if !v.fl.login { // a login's figures are its attempt's, recorded by loginEnded
		intended := v.fl.intended
		if v.fl.i > 0 {
			intended = start // a later request is meant to start when it is sent
		}
		rec.Exchange(v.of, intended, start, end, &v.o)
	}
	v.fl.body += v.o.BytesIn
	if v.o.Kind != transport.OK {
		return v.ended(rec, end, v.o.Kind)
	}
	if v.fl.i++; v.fl.i < len(v.fl.steps) {
		return v.request(rec)
	}
	return v.ended(rec, end, transport.OK)
}

// ended ends the flow at end with kind: a login goes on to the scenario
// when it succeeded; a scenario's iteration is recorded. It returns the
// scenario's first request after a login, else nil.
func (v *VU) ended(rec Recorder, end time.Duration, kind transport.Kind) *transport.Request {
	if v.fl.login {
		return v.loginEnded(rec, end, kind)
	}
	c := v.set.scenarios[v.fl.sc]
	v.finish(rec, v.fl.sc, v.fl.intended, end, kind, v.fl.body)
	v.deliver(rec, c, v.fl.intended, kind)
	v.pauseFor = v.pause(kind)
	return nil
}

// loginEnded ends a login attempt that ended at end with kind. A success
// goes on to the scenario, meant to start when the login ended; a failure
// ends the iteration unrun, and the user waits before trying again.
func (v *VU) loginEnded(rec Recorder, end time.Duration, kind transport.Kind) *transport.Request {
	intended := v.fl.intended
	if kind != transport.OK && v.cut() {
		// The step ended under the login (the generator cut it short, not
		// the target): neither an attempt nor a failure; the next step
		// logs in afresh, without a wait.
		return nil
	}
	v.login = metrics.Login{Intended: intended, End: end, Kind: kind, Retry: v.failures > 0}
	rec.Login(&v.login)
	if kind == transport.OK {
		v.loggedIn, v.failures, v.retryAt = true, 0, 0
		for k, val := range v.persist { // what the login extracted
			v.data[k] = val
		}
		return v.scenario(rec, end)
	}
	v.failures++
	wait := max(v.backoff(), v.pause(kind))
	v.retryAt = end + wait
	rec.NoLogin(intended)
	v.pauseFor = wait
	return nil
}
