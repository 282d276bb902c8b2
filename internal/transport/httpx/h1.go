package httpx

import (
	"crypto/tls"
	"errors"
	"net"

	"github.com/valyala/fasthttp"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// H1 is the HTTP/1.1 exchanger, built on fasthttp's client.
type H1 struct {
	cfg Config
	fc  *fasthttp.Client
}

var _ transport.Exchanger = (*H1)(nil)

func newH1(c Config) *H1 {
	dialer := &net.Dialer{Timeout: c.Timeout, KeepAlive: -1}
	return &H1{cfg: c, fc: &fasthttp.Client{
		NoDefaultUserAgentHeader:  true,
		DisablePathNormalizing:    true,
		MaxConnsPerHost:           c.MaxConns,
		MaxConnWaitTimeout:        c.Timeout,
		MaxIdemponentCallAttempts: 1, // a retry would hide a failure
		// No ReadTimeout/WriteTimeout: each request carries the whole-exchange
		// timeout (SetTimeout), which sets both deadlines from one clock read.
		RetryIfErr:                func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
		MaxResponseBodySize:       c.MaxBodyBytes,
		ReadBufferSize:            16 << 10,
		TLSConfig:                 &tls.Config{InsecureSkipVerify: c.Insecure}, //nolint:gosec // the plan asks for it
		Dial: func(addr string) (net.Conn, error) {
			return dialer.Dial("tcp", addr)
		},
	}}
}

// Session returns a session with its own request and response buffers.
func (h *H1) Session() transport.Session { return &h1Session{h: h} }

// Close closes idle connections.
func (h *H1) Close() { h.fc.CloseIdleConnections() }

type h1Session struct {
	h     *H1
	req   fasthttp.Request
	proto fasthttp.Request // the built request, kept to restore after redirects
	resp  fasthttp.Response
	last  *transport.Request
	out   int64 // request body bytes
}

// Do performs one exchange. A Request seen before is not rebuilt.
func (s *h1Session) Do(r *transport.Request, out *transport.Outcome) {
	if r != s.last {
		s.build(r)
	}
	var err error
	if s.h.cfg.FollowRedirects {
		s.proto.CopyTo(&s.req) // redirects rewrite the URI
		s.req.SetTimeout(s.h.cfg.Timeout)
		err = s.h.fc.DoRedirects(&s.req, &s.resp, MaxRedirects)
	} else {
		err = s.h.fc.Do(&s.req, &s.resp)
	}
	out.BytesOut = s.out
	if err != nil {
		*out = transport.Outcome{Kind: classifyH1(err), BytesOut: s.out}
		return
	}
	out.Status = s.resp.StatusCode()
	out.BytesIn = int64(len(s.resp.Body()))
	out.Kind = transport.Classify(out.Status, r.Expect, r.Limited)
}

func (s *h1Session) build(r *transport.Request) {
	s.proto.Reset()
	s.proto.Header.SetMethod(r.Method)
	s.proto.SetRequestURI(r.URL)
	for _, h := range r.Header {
		s.proto.Header.Set(h[0], h[1])
	}
	if r.Body != nil {
		s.proto.SetBody(r.Body)
	}
	s.proto.SetTimeout(s.h.cfg.Timeout)
	s.proto.CopyTo(&s.req)
	s.req.SetTimeout(s.h.cfg.Timeout)
	s.out = int64(len(r.Body))
	s.last = r
}

func classifyH1(err error) transport.Kind {
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout),
		errors.Is(err, fasthttp.ErrNoFreeConns):
		return transport.Timeout
	case errors.Is(err, fasthttp.ErrConnectionClosed):
		return transport.Reset
	case errors.Is(err, fasthttp.ErrBodyTooLarge), errors.Is(err, fasthttp.ErrTooManyRedirects),
		errors.Is(err, fasthttp.ErrMissingLocation):
		return transport.Protocol
	case errors.Is(err, fasthttp.ErrTLSHandshakeTimeout):
		return transport.TLS
	}
	return transport.ClassifyError(err)
}
