package transport

import (
	"bytes"
	"time"
)

// Request is one HTTP request. A Static request never changes once built,
// so sessions may cache its wire form by its pointer; any other request is
// encoded afresh by every Do (a rendered template, a cookie that changed).
type Request struct {
	// Static says the request will not change: its wire form may be cached.
	Static bool
	// Capture asks for the response body in Outcome.Body (for checks and
	// extraction); otherwise it is read and discarded.
	Capture bool
	// Method is the HTTP method, e.g. "GET".
	Method string
	// URL is the absolute URL.
	URL string
	// Header holds the request headers in order, as name/value pairs.
	Header [][2]string
	// Body is the request body; nil sends none.
	Body []byte
	// Expect lists the statuses that count as OK; empty means any 2xx.
	Expect []int
	// Limited lists the statuses counted as limited rather than failed.
	Limited []int
}

// Outcome is what one exchange produced. Sessions fill it in place so that
// recording an exchange allocates nothing.
type Outcome struct {
	// Kind classifies the outcome.
	Kind Kind
	// Status is the HTTP status, or 0 when no response arrived.
	Status int
	// BytesIn counts the response body bytes read.
	BytesIn int64
	// BytesOut counts the request body bytes sent.
	BytesOut int64
	// RetryAfter is the wait a limited response asked for in its
	// Retry-After header, zero when none (filled by the scenario layer).
	RetryAfter time.Duration
	// Redirected is true when the answer came after following a redirect
	// (http.follow_redirects): a login page can hide behind it.
	Redirected bool
	// Retried is true when an idempotent request met a keep-alive
	// connection the server had closed and was sent again on a new one.
	Retried bool
	// Header holds the response's header lines ("Name: value\r\n" each) as
	// received. It belongs to the session and is valid until its next Do.
	Header []byte
	// Body holds the response body when the request asked to Capture it. It
	// belongs to the session and is valid until its next Do.
	Body []byte
}

// HeaderValue returns the first value of the named response header
// (compared without regard to case).
func (o *Outcome) HeaderValue(name string) ([]byte, bool) {
	var v []byte
	found := false
	o.EachHeader(name, func(b []byte) bool { v, found = b, true; return false })
	return v, found
}

// EachHeader calls fn with each value of the named response header, in
// order, until fn returns false.
func (o *Outcome) EachHeader(name string, fn func(value []byte) bool) {
	h := o.Header
	for len(h) > 0 {
		line := h
		if i := bytes.IndexByte(h, '\n'); i >= 0 {
			line, h = h[:i], h[i+1:]
		} else {
			h = nil
		}
		line = bytes.TrimRight(line, "\r")
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !bytes.EqualFold(line[:colon], []byte(name)) {
			continue
		}
		if !fn(bytes.TrimSpace(line[colon+1:])) {
			return
		}
	}
}

// Session performs exchanges for one worker or virtual user. It keeps that
// user's connections and scratch buffers (the user's cookies are the
// scenario layer's); it is not safe for concurrent use.
type Session interface {
	// Do performs req and fills out. It never returns a Go error: failures
	// are classified into out.Kind.
	Do(req *Request, out *Outcome)
	// Close releases the session's connections.
	Close()
}

// Aborter is a Session whose exchange in progress can be ended from another
// goroutine: the executor aborts the sessions of a step whose in-flight work
// outlasted the drain, so that no worker outlives its step.
type Aborter interface {
	// Abort makes the exchange in progress, if any, fail at once (a dial in
	// progress still runs to its deadline). It is safe to call from any
	// goroutine, at any time; the session stays usable, and its next
	// exchange opens a new connection.
	Abort()
}

// Resetter is an Exchanger whose shared connections can be dropped while
// it stays usable: a repeat of a run starts with new connections.
type Resetter interface {
	// Reset closes every pooled connection; the next exchanges dial anew.
	Reset()
}

// Exchanger creates sessions that share one connection pool. It is safe for
// concurrent use.
type Exchanger interface {
	// Session returns a new session.
	Session() Session
	// Close releases every connection, including those of open sessions.
	Close()
}
