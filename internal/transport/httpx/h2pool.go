package httpx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// h2Pool is the HTTP/2 exchanger's connection pool: an http.RoundTripper
// over net/http's ClientConn, one HTTP/2 connection each, which sends a
// request once and reports what happened to it.
//
// A request takes a stream on the first connection with one free; a new
// connection is dialled only when none has, one dial at a time per host
// (requests that need it wait for it), and never more than max per host
// (past that, requests queue for a stream). A connection that received
// GOAWAY or failed leaves the pool (a draining one finishes its streams).
//
// A request is sent again at most once, and only when it went to a
// connection that was not dialled for it (one shared with other requests,
// or kept from an earlier one): when the server said it never processed
// the request (GOAWAY naming a lower last stream, or REFUSED_STREAM), or,
// for an idempotent request, when that connection died under it. The
// exchange is then counted as retried. The retry goes on a connection
// dialled for it alone, which no other request shares until the retry's
// answer began: a server that takes one request per connection answers
// it. A request refused by the connection dialled for it fails at once as
// a reset: the server refuses new connections' requests, and another would
// not change that. So every request dials at most one connection (its
// first attempt's, or its retry's), and a server that sends GOAWAY on
// every connection costs at most one connection per request.
type h2Pool struct {
	tr  *http.Transport
	max int

	mu     sync.Mutex
	hosts  map[string]*h2Host
	closed bool
}

type h2Host struct {
	conns []*http.ClientConn
	// own holds the connections dialled for one request's retry: no other
	// request takes a stream on them until that request's answer began.
	own  map[*http.ClientConn]bool
	dial *h2Dial // the dial in progress, if any
}

type h2Dial struct {
	done chan struct{} // closed when the dial ended
	err  error
}

// h2Attempts bounds how often one request is sent.
const h2Attempts = 2

// errConnGone wraps a request's failure when its connection went away
// (GOAWAY, a reset, a refused stream): classified as a reset.
var errConnGone = errors.New("the server closed the HTTP/2 connection")

// retriedKey keys the *bool in a request's context that the pool sets
// when it sent the request again.
type retriedKey struct{}

func newH2Pool(tr *http.Transport, max int) *h2Pool {
	return &h2Pool{tr: tr, max: max, hosts: make(map[string]*h2Host)}
}

// RoundTrip sends req on a pooled connection.
func (p *h2Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	scheme, addr := req.URL.Scheme, req.URL.Host
	if req.URL.Port() == "" {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(req.URL.Hostname(), port)
	}
	for attempt := 0; ; attempt++ {
		var cc *http.ClientConn
		var fresh bool
		var err error
		if attempt == 0 {
			cc, fresh, err = p.conn(req.Context(), scheme, addr)
		} else {
			cc, fresh, err = p.ownConn(req.Context(), scheme, addr)
		}
		if err != nil {
			if req.Body != nil {
				req.Body.Close() // the RoundTripper contract, even on failure
			}
			return nil, err
		}
		resp, err := cc.RoundTrip(req)
		if attempt > 0 {
			p.share(scheme+"://"+addr, cc)
		}
		if err == nil {
			return resp, nil
		}
		unsent := unprocessed(err)
		goaway := strings.Contains(err.Error(), "GOAWAY") || strings.Contains(err.Error(), "client conn not usable")
		if !unsent && !goaway && cc.Err() == nil {
			return nil, err // the connection is fine: the failure is this request's
		}
		if goaway || cc.Err() != nil {
			// A connection that received GOAWAY may still finish its other
			// streams (net/http reports it usable until it closes): no new
			// request goes to it, and it no longer counts against max.
			p.drop(scheme+"://"+addr, cc)
		}
		if req.Context().Err() == nil && attempt < h2Attempts-1 && !fresh && (unsent || idempotent(req.Method)) {
			if again, ok := rewound(req); ok {
				if r, ok := req.Context().Value(retriedKey{}).(*bool); ok {
					*r = true
				}
				req = again
				continue
			}
		}
		return nil, fmt.Errorf("%w: %w", errConnGone, err)
	}
}

// unprocessed reports whether err says the server never processed the
// request. net/http does not export these errors; their texts are matched,
// and TestH2GoAwayEveryConnection fails if they change.
func unprocessed(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "graceful shutdown GOAWAY") ||
		strings.Contains(msg, "client conn not usable") ||
		strings.Contains(msg, "REFUSED_STREAM")
}

// rewound returns req ready to be sent again, with its body from the
// start; false when the body cannot be read again.
func rewound(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	again := *req
	again.Body = body
	return &again, true
}

// conn returns a connection to addr with a stream reserved for the caller
// (or, when the host is at max connections, the least busy one, on which
// RoundTrip waits for a stream; or the one it dialled, when the requests
// that waited for it took its streams). fresh is true when the connection
// was dialled for this request: a request opens one connection at most.
func (p *h2Pool) conn(ctx context.Context, scheme, addr string) (cc *http.ClientConn, fresh bool, err error) {
	key := scheme + "://" + addr
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, false, net.ErrClosed
		}
		h := p.hosts[key]
		if h == nil {
			h = &h2Host{}
			p.hosts[key] = h
		}
		if cc := h.reserve(); cc != nil {
			p.mu.Unlock()
			return cc, false, nil
		}
		if d := h.dial; d != nil {
			p.mu.Unlock()
			select {
			case <-d.done:
				// A dial that failed on the dialling request's own deadline
				// or cancellation says nothing of this one's: dial again.
				if d.err != nil && !(ctx.Err() == nil && (errors.Is(d.err, context.Canceled) || errors.Is(d.err, context.DeadlineExceeded))) {
					return nil, false, d.err
				}
				continue
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
		}
		if len(h.conns) >= p.max {
			cc := h.leastBusy()
			p.mu.Unlock()
			return cc, false, nil
		}
		d := &h2Dial{done: make(chan struct{})}
		h.dial = d
		p.mu.Unlock()

		cc, err := p.tr.NewClientConn(ctx, scheme, addr)
		p.mu.Lock()
		h.dial = nil
		if err == nil {
			switch {
			case p.closed:
				cc.Close()
				err = net.ErrClosed
			case p.hosts[key] != h: // reset while dialling: the host is new
				cc.Close()
				p.mu.Unlock()
				close(d.done)
				continue
			default:
				h.conns = append(h.conns, cc)
			}
		}
		d.err = err
		p.mu.Unlock()
		close(d.done)
		if err != nil {
			return nil, false, err
		}
		// The requests that waited for the dial may have taken its streams,
		// or it is closing already (a GOAWAY as it opened): this request
		// still goes on the connection it dialled, unreserved, where its
		// RoundTrip waits for a stream or fails, and is not sent again
		// (fresh). Dialling another for it would open two connections for
		// one request.
		_ = cc.Reserve() // nil: the stream is this request's
		return cc, true, nil
	}
}

// ownConn dials a connection to addr for one request alone (a retry) and
// reserves its stream; no other request takes a stream on it until share.
// At max connections to the host it is conn's instead, shared. fresh is
// true when the connection was dialled for this request.
func (p *h2Pool) ownConn(ctx context.Context, scheme, addr string) (cc *http.ClientConn, fresh bool, err error) {
	key := scheme + "://" + addr
	p.mu.Lock()
	h := p.hosts[key]
	full := h != nil && len(h.conns) >= p.max
	p.mu.Unlock()
	if full {
		return p.conn(ctx, scheme, addr)
	}
	cc, err = p.tr.NewClientConn(ctx, scheme, addr)
	if err != nil {
		return nil, false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		cc.Close()
		return nil, false, net.ErrClosed
	}
	if err := cc.Reserve(); err != nil {
		cc.Close()
		return nil, false, err
	}
	h = p.hosts[key] // a reset while dialling made the host anew
	if h == nil {
		h = &h2Host{}
		p.hosts[key] = h
	}
	if h.own == nil {
		h.own = map[*http.ClientConn]bool{}
	}
	h.own[cc] = true
	h.conns = append(h.conns, cc)
	return cc, true, nil
}

// share lets every request take streams on cc, which ownConn dialled for
// one request whose answer has begun (or which failed).
func (p *h2Pool) share(key string, cc *http.ClientConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h := p.hosts[key]; h != nil {
		delete(h.own, cc)
	}
}

// drop takes cc out of the pool without closing it: it finishes the
// streams it has, then closes itself.
func (p *h2Pool) drop(key string, cc *http.ClientConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h := p.hosts[key]; h != nil {
		h.conns = slices.DeleteFunc(h.conns, func(c *http.ClientConn) bool { return c == cc })
		delete(h.own, cc)
	}
}

// reserve drops the host's dead connections and reserves a stream on the
// first live one with a stream free. The pool's lock is held.
func (h *h2Host) reserve() *http.ClientConn {
	live := h.conns[:0]
	for _, cc := range h.conns {
		if cc.Err() != nil {
			cc.Close()
			delete(h.own, cc)
			continue
		}
		live = append(live, cc)
	}
	clear(h.conns[len(live):])
	h.conns = live
	for _, cc := range h.conns {
		if !h.own[cc] && cc.Reserve() == nil {
			return cc
		}
	}
	return nil
}

// leastBusy returns the live connection with the fewest requests in
// flight. The pool's lock is held and the host has connections.
func (h *h2Host) leastBusy() *http.ClientConn {
	var best *http.ClientConn
	for _, cc := range h.conns {
		if h.own[cc] && len(h.own) < len(h.conns) {
			continue // another request's alone, while a shared one is there
		}
		if best == nil || cc.InFlight() < best.InFlight() {
			best = cc
		}
	}
	return best
}

// close closes every connection, for good; requests in flight fail.
func (p *h2Pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.reset()
}

// reset closes every connection; later requests dial new ones.
func (p *h2Pool) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, h := range p.hosts {
		for _, cc := range h.conns {
			cc.Close()
		}
		delete(p.hosts, key)
	}
}
