package httpx

import (
	"bytes"
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
type H2 struct {
	cfg    Config
	client *http.Client
	tr     *http.Transport
}

var _ transport.Exchanger = (*H2)(nil)

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
	client := &http.Client{Transport: tr, Timeout: c.Timeout}
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
	return &H2{cfg: c, client: client, tr: tr}
}

var errTooManyRedirects = errors.New("too many redirects")

// Session returns a session.
func (h *H2) Session() transport.Session { return &h2Session{h: h} }

// Close closes idle connections.
func (h *H2) Close() { h.tr.CloseIdleConnections() }

type h2Session struct {
	h      *H2
	header []byte // the last response's header lines
	body   bytes.Buffer
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
	req, err := http.NewRequest(r.Method, r.URL, body)
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
	resp, err := s.h.client.Do(req)
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
	return transport.ClassifyError(err)
}
