package sink

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Sink. The zero value is a sink on a free loopback
// port that answers 200 {"ok":true} at once and records no ids.
type Options struct {
	// Name labels the sink in errors and in its stats. Empty: none.
	Name string
	// Listen is the TCP address to listen on. Empty: "127.0.0.1:0", a
	// free loopback port (see URL).
	Listen string
	// Latency is how long the sink waits before answering a request it
	// has read (normal answers, 429s and 500s alike).
	Latency Latency
	// ErrorRate is the share of requests, in [0, 1], answered 500 (after
	// the latency). Zero: none. Requests refused by RateLimit are not
	// drawn.
	ErrorRate float64
	// Status is the status of a normal answer. Zero: 200.
	Status int
	// Body is the body of a normal answer. Empty: {"ok":true}.
	Body string
	// RateLimit, when set, answers 429 with Retry-After to requests past
	// the per-key rate. Nil: no limit.
	RateLimit *RateLimit
	// ID says where the message id is in each request body.
	ID IDRule
	// Seed makes the latency and error draws deterministic: request n,
	// in the order bodies finish arriving, always gets the same draws.
	Seed uint64
	// MaxIDs is how many distinct ids the sink remembers to count ids and
	// duplicates; past it, arrivals of ids it does not remember are
	// counted as Stats.Unchecked, with a warning. Zero: DefaultMaxIDs.
	MaxIDs int
}

// maxBody is the largest request body the sink reads; larger ones are
// answered 413.
const maxBody = 1 << 20

// closeGrace is how long Close waits for requests being answered before
// it closes their connections.
const closeGrace = 5 * time.Second

// Sink is a running mock outside service.
type Sink struct {
	name      string
	url       string
	srv       *http.Server
	quit      chan struct{} // closed by Close: cut latencies short
	served    chan struct{} // closed when Serve returns
	closeOnce sync.Once
	closeErr  error

	start   time.Time // base of the rate limiter's offsets
	latency sampler
	errRate float64
	status  int
	body    []byte
	ctype   string
	limit   *RateLimit
	limiter *limiter
	ids     finder
	seed    uint64
	seq     atomic.Uint64 // requests drawn so far
	ledger  *ledger
	bufs    sync.Pool // *bytes.Buffer for request bodies
}

// Start validates o, listens and serves until Close. It reports every
// problem with o at once.
func Start(o Options) (*Sink, error) {
	s, err := build(o)
	if err != nil {
		return nil, fmt.Errorf("start sink %q: %w", o.Name, err)
	}
	addr := o.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start sink %q: %w", o.Name, err)
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0), // failures are the client's data, not our log
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // returns ErrServerClosed after Close
	}()
	return s, nil
}

// build validates o and prepares everything but the listener.
func build(o Options) (*Sink, error) {
	var errs []error
	if err := o.Latency.validate(); err != nil {
		errs = append(errs, err)
	}
	if math.IsNaN(o.ErrorRate) || o.ErrorRate < 0 || o.ErrorRate > 1 {
		errs = append(errs, fmt.Errorf("error_rate: %v is outside [0, 1]", o.ErrorRate))
	}
	if o.Status != 0 && (o.Status < 200 || o.Status > 599) {
		errs = append(errs, fmt.Errorf("status: %d is not a final HTTP status", o.Status))
	}
	if o.RateLimit != nil {
		if err := o.RateLimit.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	ids, err := newFinder(o.ID)
	if err != nil {
		errs = append(errs, err)
	}
	if o.MaxIDs < 0 {
		errs = append(errs, fmt.Errorf("max_ids: %d is negative", o.MaxIDs))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	now := time.Now()
	s := &Sink{
		name:    o.Name,
		quit:    make(chan struct{}),
		served:  make(chan struct{}),
		start:   now,
		latency: newSampler(o.Latency),
		errRate: o.ErrorRate,
		status:  cmp.Or(o.Status, http.StatusOK),
		body:    []byte(cmp.Or(o.Body, `{"ok":true}`)),
		ids:     ids,
		seed:    o.Seed,
		ledger:  newLedger(now, cmp.Or(o.MaxIDs, DefaultMaxIDs)),
		bufs:    sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 4096)) }},
	}
	s.ctype = contentType(s.body)
	if o.RateLimit != nil {
		rl := *o.RateLimit
		s.limit = &rl
		s.limiter = newLimiter(rl.RPS)
	}
	return s, nil
}

// contentType guesses the Content-Type of a configured answer body.
func contentType(body []byte) string {
	if t := bytes.TrimSpace(body); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// URL returns the sink's base URL, e.g. "http://127.0.0.1:41234".
func (s *Sink) URL() string { return s.url }

// Close stops the sink: it stops accepting, answers the requests still
// waiting out their latency at once, waits up to 5 s for them to be
// written, then closes every connection. Later calls return the first
// call's result.
func (s *Sink) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			if err := s.srv.Close(); err != nil {
				s.closeErr = fmt.Errorf("close sink %q: %w", s.name, err)
			}
		}
		<-s.served
	})
	return s.closeErr
}

// Arrivals hands its one reader the arrivals of index since and after
// that it has not handed over yet, and returns the index to pass next time
// (the number of arrivals recorded so far). The sink then forgets them: it
// keeps an arrival only until the next call, and at most MaxUnread of them
// (4096 until the first call, so that a sink nobody reads stays
// small). A reader that gets fewer than next − since arrivals missed the
// difference; Stats counts those missed after its first call as Unlogged.
func (s *Sink) Arrivals(since int) ([]Arrival, int) { return s.ledger.since(since) }

// Stats returns the sink's counts so far.
func (s *Sink) Stats() Stats { return s.ledger.snapshot() }

// ServeHTTP answers one request: reserved paths are served by the sink
// itself; anything else is read, recorded and answered as configured.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, reservedPrefix) {
		s.serveReserved(w, r)
		return
	}
	d := s.admit(r)
	s.wait(r.Context(), d.latency)
	h := w.Header()
	if d.retryAfter != "" {
		h.Set("Retry-After", d.retryAfter)
	}
	h.Set("Content-Type", d.ctype)
	h.Set("Content-Length", strconv.Itoa(len(d.body)))
	w.WriteHeader(d.status)
	_, _ = w.Write(d.body) // a client that went away is its own problem
}

// decision is the answer to one request.
type decision struct {
	status     int
	ctype      string
	body       []byte
	latency    time.Duration
	retryAfter string // for 429
}

// made returns the answer of a status the sink makes up itself, without
// latency.
func made(status int) decision {
	return decision{status: status, ctype: "application/json", body: errorBodies[status]}
}

// admit reads r's body, finds its id, decides the answer and records it.
// A body that cannot be read or is too large is answered at once, without
// latency.
func (s *Sink) admit(r *http.Request) decision {
	if r.ContentLength > maxBody {
		s.ledger.record(Arrival{At: time.Now(), Status: http.StatusRequestEntityTooLarge}, false)
		return made(http.StatusRequestEntityTooLarge)
	}
	buf := s.bufs.Get().(*bytes.Buffer)
	defer s.putBuf(buf)
	buf.Reset()
	_, err := buf.ReadFrom(io.LimitReader(r.Body, maxBody+1))
	at := time.Now()
	switch {
	case err != nil:
		s.ledger.record(Arrival{At: at, Status: http.StatusBadRequest}, false)
		return made(http.StatusBadRequest)
	case buf.Len() > maxBody:
		s.ledger.record(Arrival{At: at, Status: http.StatusRequestEntityTooLarge}, false)
		return made(http.StatusRequestEntityTooLarge)
	}
	body := buf.Bytes()
	id, _ := s.ids.find(body)
	uLat, uErr := draws(s.seed, s.seq.Add(1)-1)
	d := decision{status: s.status, ctype: s.ctype, body: s.body}
	if s.limiter != nil {
		if ok, wait := s.limiter.allow(s.limit.key(body, r.Header), at.Sub(s.start)); !ok {
			d = made(http.StatusTooManyRequests)
			d.retryAfter = retryAfter(wait)
		}
	}
	if d.retryAfter == "" && uErr < s.errRate {
		d = made(http.StatusInternalServerError)
	}
	d.latency = s.latency.draw(uLat)
	s.ledger.record(Arrival{ID: id, At: at, Status: d.status}, true)
	return d
}

// putBuf returns a body buffer to the pool unless a large body grew it.
func (s *Sink) putBuf(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		s.bufs.Put(b)
	}
}

// wait sleeps d, or less if the client goes away or the sink closes. No
// lock is held: each waiting request has its own timer.
func (s *Sink) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.quit:
	}
}

// errorBodies are the answers of the statuses the sink makes up itself,
// in the shape of Slack's errors.
var errorBodies = map[int][]byte{
	http.StatusBadRequest:            []byte(`{"ok":false,"error":"invalid_body"}`),
	http.StatusRequestEntityTooLarge: []byte(`{"ok":false,"error":"body_too_large"}`),
	http.StatusTooManyRequests:       []byte(`{"ok":false,"error":"rate_limited"}`),
	http.StatusInternalServerError:   []byte(`{"ok":false,"error":"internal_error"}`),
}
