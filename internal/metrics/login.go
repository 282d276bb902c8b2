package metrics

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Logins are the figures of the virtual users' login flows, kept apart
// from the exchanges of the scenarios: a slow or failing login never shows
// in a step's latency, errors or throughput, only here.
//
// Every attempt of the step is counted, warm-up included (users log in
// mostly at a step's start, which is often its warm-up), but the arrivals
// left unrun for want of a login (Skipped) count only in the window, like
// the arrivals they are missing from.
type Logins struct {
	// Latency holds each attempt's time, from its intended start to the
	// end of its last request, in microseconds. Nil when the plan has no
	// login.
	Latency *hdrhistogram.Histogram
	// Kinds counts attempts by how they ended.
	Kinds Counts
	// Retries counts the attempts of users whose login had failed before.
	Retries int64
	// Skipped counts open-model arrivals of the window whose scenario did
	// not run because their user had not logged in (its login failed in
	// that arrival, or it was waiting to retry it).
	Skipped int64
}

// Attempts counts login attempts that ended.
func (l *Logins) Attempts() int64 { return l.Kinds.Completed() }

// OK counts successful logins.
func (l *Logins) OK() int64 { return l.Kinds[transport.OK] }

// Failed counts failed attempts: every kind but OK, a limited answer
// included (it did not log the user in).
func (l *Logins) Failed() int64 { return l.Attempts() - l.OK() }

func (l *Logins) reset() {
	h := l.Latency
	if h != nil {
		h.Reset()
	}
	*l = Logins{Latency: h}
}

// Merge adds o into l.
func (l *Logins) Merge(o *Logins) {
	if l.Latency != nil && o.Latency != nil {
		l.Latency.Merge(o.Latency)
	}
	l.Kinds.add(&o.Kinds)
	l.Retries += o.Retries
	l.Skipped += o.Skipped
}

// Login is one login attempt of a virtual user.
type Login struct {
	// Intended is when the attempt was meant to start; End when its last
	// request ended.
	Intended, End time.Duration
	// Kind is how it ended: OK, or the kind of the request that ended it.
	Kind transport.Kind
	// Retry is true when the user's login had failed before.
	Retry bool
}

// RecordLogin adds one login attempt. It allocates nothing.
func (s *Shard) RecordLogin(l *Login) {
	s.mu.Lock()
	t := &s.cur.Logins
	t.Kinds[l.Kind]++
	if l.Retry {
		t.Retries++
	}
	if t.Latency != nil {
		record(t.Latency, l.End-l.Intended)
	}
	s.mu.Unlock()
}

// SkipForLogin counts an arrival whose scenario did not run because its
// user had not logged in; counted says whether it belongs to the step's
// window.
func (s *Shard) SkipForLogin(counted bool) {
	if !counted {
		return
	}
	s.mu.Lock()
	s.cur.Logins.Skipped++
	s.mu.Unlock()
}
