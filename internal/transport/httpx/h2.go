package httpx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// H2 is the HTTP/2 exchanger, built on net/http's HTTP/2 support: h2 over
// TLS (ALPN) for https URLs and h2c with prior knowledge for http URLs.
// HTTP/1.1 is switched off, so a server that cannot speak HTTP/2 fails
// loudly instead of being measured over the wrong protocol.
//
// Connections come from ceiling's own pool (h2pool.go) rather than from
// net/http's, whose hidden retries sent a request up to seven times with
// backoff when servers sent GOAWAY: the failures then showed as timeouts,
// never as retried, while thousands of connections were opened.
type H2 struct {
	cfg    Config
	client *http.Client
	pool   *h2Pool
}

var (
	_ transport.Exchanger = (*H2)(nil)
	_ transport.Resetter  = (*H2)(nil)
)

func newH2(c Config) *H2 {
	var protos http.Protocols
	protos.SetHTTP2(true)
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		Protocols:           &protos,
		DialContext:         (&net.Dialer{Timeout: c.Timeout}).DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: c.Insecure}, //nolint:gosec // the plan asks for it
		TLSHandshakeTimeout: c.Timeout,
		MaxConnsPerHost:     c.MaxConns,
		ForceAttemptHTTP2:   true,
	}
	pool := newH2Pool(tr, c.MaxConns)
	client := &http.Client{Transport: pool, Timeout: c.Timeout}
	if c.FollowRedirects {
		client.CheckRedirect = func(_ *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return errTooManyRedirects
			}
			return nil
		}
	} else {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return &H2{cfg: c, client: client, pool: pool}
}

var errTooManyRedirects = errors.New("too many redirects")

// Session returns a session.
func (h *H2) Session() transport.Session { return &h2Session{h: h} }

// Close closes every connection.
func (h *H2) Close() { h.pool.close() }

// Reset closes every connection and keeps the exchanger usable.
func (h *H2) Reset() { h.pool.reset() }

type h2Session struct {
	h       *H2
	ctx     context.Context // carries &retried to the pool
	retried bool            // set by the pool when it sent the request again
	header  []byte          // the last response's header lines
	body    bytes.Buffer
}

// Close does nothing: HTTP/2 connections are shared by every session.
func (s *h2Session) Close() {}

// Do performs one exchange over HTTP/2.
func (s *h2Session) Do(r *transport.Request, out *transport.Outcome) {
	*out = transport.Outcome{BytesOut: int64(len(r.Body))}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	if s.ctx == nil {
		s.ctx = context.WithValue(context.Background(), retriedKey{}, &s.retried)
	}
	req, err := http.NewRequestWithContext(s.ctx, r.Method, r.URL, body)
	if err != nil {
		out.Kind = transport.Protocol
		return
	}
	for _, h := range r.Header {
		if strings.EqualFold(h[0], "Host") {
			req.Host = h[1] // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Add(h[0], h[1])
	}
	s.retried = false
	resp, err := s.h.client.Do(req)
	out.Retried = s.retried
	if err != nil {
		out.Kind = classifyH2(err)
		return
	}
	defer resp.Body.Close()
	out.Redirected = resp.Request != nil && resp.Request.URL.String() != r.URL
	s.header = s.header[:0]
	for name, values := range resp.Header {
		for _, v := range values {
			s.header = append(append(append(append(s.header, name...), ": "...), v...), "\r\n"...)
		}
	}
	out.Header = s.header
	limit := int64(s.h.cfg.MaxBodyBytes)
	var sink io.Writer = io.Discard
	if r.Capture {
		s.body.Reset()
		sink = &s.body
	}
	n, err := io.Copy(sink, io.LimitReader(resp.Body, limit+1))
	if r.Capture {
		out.Body = s.body.Bytes()
	}
	out.BytesIn = n
	out.Status = resp.StatusCode
	switch {
	case n > limit:
		out.Kind = transport.Protocol
	case err != nil:
		out.Kind = classifyH2(err)
	default:
		out.Kind = transport.Classify(resp.StatusCode, r.Expect, r.Limited)
	}
}

func classifyH2(err error) transport.Kind {
	if errors.Is(err, errTooManyRedirects) {
		return transport.Protocol
	}
	if errors.Is(err, errConnGone) {
		return transport.Reset
	}
	return transport.ClassifyError(err)
}
