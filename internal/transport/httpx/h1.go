package httpx

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// H1 is the HTTP/1.1 exchanger: a client of our own, measured faster than
// fasthttp's (bench/README.md). Each session owns its keep-alive
// connections, one per host, so the hot path takes no lock and shares
// nothing with other workers; a request is encoded once and written with one
// system call.
type H1 struct {
	cfg Config
	tls *tls.Config

	mu       sync.Mutex // guards sessions; taken only when sessions come and go
	sessions map[*h1Session]struct{}
}

var (
	_ transport.Exchanger = (*H1)(nil)
	_ transport.Aborter   = (*h1Session)(nil)
)

func newH1(c Config) *H1 {
	return &H1{
		cfg:      c,
		tls:      &tls.Config{InsecureSkipVerify: c.Insecure, NextProtos: []string{"http/1.1"}}, //nolint:gosec // the plan asks for it
		sessions: map[*h1Session]struct{}{},
	}
}

// Session returns a session with no connection yet.
func (h *H1) Session() transport.Session {
	s := &h1Session{h: h}
	h.mu.Lock()
	h.sessions[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Close closes every session's connections. A session still in an exchange
// sees that exchange fail.
func (h *H1) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.sessions {
		s.closeConns(false)
		delete(h.sessions, s)
	}
}

// h1Conn is one keep-alive connection.
type h1Conn struct {
	addr string
	tls  bool
	c    net.Conn // what requests go through: raw, or TLS over raw
	raw  net.Conn // the TCP connection
	br   *bufio.Reader
	used time.Time // when the last exchange on it started
}

// idleCheck is how long a connection may sit idle before it is checked for
// a close by the server before it is used again.
const idleCheck = 500 * time.Millisecond

type h1Session struct {
	h *H1

	// conns is written only by the session's own goroutine, under mu; that
	// goroutine reads it without mu, and H1.Close and Abort read it under mu.
	mu    sync.Mutex
	conns []*h1Conn
	// aborted is set by Abort: the connections were closed under the
	// session, and its next exchange forgets them first.
	aborted atomic.Bool

	last *transport.Request // the request enc was built from
	url  string             // the URL line was parsed from
	line requestLine
	enc  []byte
	cap  capture // the last response's header lines and body
}

// Close closes the session's connections and forgets it. Only the
// session's own goroutine calls it.
func (s *h1Session) Close() {
	s.closeConns(true)
	s.h.mu.Lock()
	delete(s.h.sessions, s)
	s.h.mu.Unlock()
}

// Abort closes the session's connections from any goroutine: an exchange
// in progress on one fails at once. The session stays usable: its next
// exchange dials anew.
func (s *h1Session) Abort() {
	s.aborted.Store(true)
	s.closeConns(false)
}

// closeConns closes every connection; forget (the owner only) also empties
// the list.
func (s *h1Session) closeConns(forget bool) {
	s.mu.Lock()
	for _, c := range s.conns {
		c.c.Close()
	}
	if forget {
		s.conns = nil
	}
	s.mu.Unlock()
}

// Do performs one exchange, following redirects when configured.
func (s *h1Session) Do(r *transport.Request, out *transport.Outcome) {
	*out = transport.Outcome{BytesOut: int64(len(r.Body))}
	if s.aborted.Load() {
		s.aborted.Store(false)
		s.closeConns(true)
	}
	if !r.Static || r != s.last {
		if err := s.encode(r); err != nil {
			out.Kind = transport.Protocol
			return
		}
	}
	s.cap.keepBody = r.Capture
	defer s.cap.done() // out.Body stays the caller's to read
	now := time.Now()
	deadline := now.Add(s.h.cfg.Timeout)
	resp, err := s.roundTrip(&s.line, s.enc, now, deadline, out)
	hop := redirect{url: r.URL, method: r.Method, header: r.Header, body: r.Body}
	for hops := 0; err == nil && s.h.cfg.FollowRedirects && isRedirect(resp.status); hops++ {
		loc, ok := s.location()
		if !ok {
			break
		}
		if hops == MaxRedirects {
			out.Kind = transport.Protocol
			return
		}
		resp, err = s.follow(&hop, r.URL, resp.status, loc, deadline, out)
		out.Redirected = true
	}
	out.BytesIn = resp.body
	out.Header = s.cap.header
	if r.Capture {
		out.Body = s.cap.body
	}
	if err != nil {
		out.Kind = classifyH1(err)
		return
	}
	out.Status = resp.status
	out.Kind = transport.Classify(resp.status, r.Expect, r.Limited)
}

// encode builds r's wire form into s.enc, parsing its URL only when it
// differs from the last one's.
func (s *h1Session) encode(r *transport.Request) error {
	if s.last == nil || r.URL != s.url || r.Method != s.line.method {
		line, err := parseRequestLine(r.Method, r.URL)
		if err != nil {
			s.last, s.url = nil, ""
			return err
		}
		s.line, s.url = line, r.URL
	}
	s.last = r
	s.enc = encodeRequest(s.enc[:0], &s.line, r.Header, r.Body)
	return nil
}

// location returns the last response's Location header.
func (s *h1Session) location() (string, bool) {
	o := transport.Outcome{Header: s.cap.header}
	v, ok := o.HeaderValue("Location")
	return string(v), ok && len(v) > 0
}

// roundTrip writes enc on a connection to line.addr and reads the response.
//
// A keep-alive connection the server closed while it sat idle is not the
// target failing. Before reusing a connection idle for idleCheck or more,
// ceiling looks (without blocking) whether the server closed it, and dials
// afresh if so. If a reused connection still fails before a single response
// byte, an idempotent request (GET, HEAD, OPTIONS, PUT, DELETE) is sent once
// more on a new connection and counted as retried; any other request is a
// failure, since the server may have acted on it.
func (s *h1Session) roundTrip(line *requestLine, enc []byte, now, deadline time.Time, out *transport.Outcome) (response, error) {
	for attempt := 0; ; attempt++ {
		c, fresh, err := s.conn(line, now, deadline)
		if err != nil {
			return response{}, err
		}
		c.used = now
		if err = c.c.SetDeadline(deadline); err != nil {
			s.drop(c)
			return response{}, err
		}
		var resp response
		if _, err = c.c.Write(enc); err == nil {
			resp, err = readResponse(c.br, line.method == "HEAD", int64(s.h.cfg.MaxBodyBytes), &s.cap)
		}
		// Bytes after a complete response answer nothing we asked: the
		// connection is out of step, and must not feed the next request.
		if err != nil || resp.close || c.br.Buffered() > 0 {
			s.drop(c)
		}
		if err != nil && !fresh && attempt == 0 && !resp.started && stale(err) && idempotent(line.method) {
			out.Retried = true
			continue
		}
		return resp, err
	}
}

func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// conn returns the session's connection to line.addr, dialling one if
// needed, or if the one it has was closed by the server while idle.
func (s *h1Session) conn(line *requestLine, now, deadline time.Time) (*h1Conn, bool, error) {
	for _, c := range s.conns {
		if c.addr != line.addr || c.tls != line.tls {
			continue
		}
		if now.Sub(c.used) < idleCheck || !closedByPeer(c.raw) {
			return c, false, nil
		}
		s.drop(c)
		break
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", line.addr)
	if err != nil {
		return nil, false, err
	}
	raw := nc
	if line.tls {
		cfg := s.h.tls.Clone()
		cfg.ServerName = hostOnly(line.addr)
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, false, err
		}
		nc = tc
	}
	c := &h1Conn{addr: line.addr, tls: line.tls, c: nc, raw: raw, br: bufio.NewReaderSize(nc, readBufferSize)}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	return c, true, nil
}

// drop closes c and forgets it.
func (s *h1Session) drop(c *h1Conn) {
	c.c.Close()
	s.mu.Lock()
	for i, x := range s.conns {
		if x == c {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
}

// redirect is the request a redirect chain is at: each hop resolves its
// Location against the last URL, and a method that a 303 (or a 301/302
// of a POST) turned into a GET stays one.
type redirect struct {
	url    string
	method string
	header [][2]string
	body   []byte
}

// sensitive are the headers a redirect to another host does not carry, as
// browsers, curl and Go's own client do.
var sensitive = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "WWW-Authenticate"}

// follow sends the request a redirect points to: 303, and 301/302 after a
// POST, become a GET without a body. Credentials (sensitive headers, and
// the user information of the first URL) go only to the first URL's host
// or its subdomains.
func (s *h1Session) follow(hop *redirect, first string, status int, location string, deadline time.Time, out *transport.Outcome) (response, error) {
	base, err := url.Parse(hop.url)
	if err != nil {
		return response{}, errMalformed
	}
	ref, err := url.Parse(location)
	if err != nil {
		return response{}, errMalformed
	}
	if status == 303 || (status <= 302 && hop.method == "POST") {
		hop.method, hop.body = "GET", nil
	}
	next := base.ResolveReference(ref)
	if !sameSite(first, next) {
		hop.header = slices.DeleteFunc(slices.Clone(hop.header), func(h [2]string) bool {
			return slices.ContainsFunc(sensitive, func(n string) bool { return strings.EqualFold(n, h[0]) })
		})
		next.User = nil
	}
	hop.url = next.String()
	line, err := parseRequestLine(hop.method, hop.url)
	if err != nil {
		return response{}, errMalformed
	}
	enc := encodeRequest(nil, &line, hop.header, hop.body)
	return s.roundTrip(&line, enc, time.Now(), deadline, out)
}

// sameSite reports whether next is on the host of the URL first, or a
// subdomain of it (ports aside).
func sameSite(first string, next *url.URL) bool {
	u, err := url.Parse(first)
	if err != nil {
		return false
	}
	a, b := strings.ToLower(u.Hostname()), strings.ToLower(next.Hostname())
	return a == b || strings.HasSuffix(b, "."+a) && net.ParseIP(a) == nil
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

func hostOnly(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func classifyH1(err error) transport.Kind {
	switch {
	case errors.Is(err, errKeptBudget):
		return transport.Generator // ceiling's budget, not the target's doing
	case errors.Is(err, errMalformed), errors.Is(err, errBodyTooLarge):
		return transport.Protocol
	}
	return transport.ClassifyError(err)
}
