package run

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// preflight sends the run's first request once before the first step: a
// target that cannot be reached at all is ErrUnreachable, not a table of
// errors. cookie says the answer set a cookie.
func preflight(ex transport.Exchanger, set *scenario.Set, p *plan.Plan) (cookie bool, err error) {
	sess := ex.Session()
	defer sess.Close()
	out, err := set.Preflight(sess)
	if err != nil {
		return false, badInput("preflight: %w", err)
	}
	switch {
	case out.Kind.Responded():
		_, cookie = out.HeaderValue("Set-Cookie")
		return cookie, nil
	case out.Kind == transport.Protocol:
		return false, fmt.Errorf("preflight: %s: the target answered, but not with a valid HTTP response", Describe(p))
	}
	hint := map[transport.Kind]string{
		transport.Refused: " (nothing is listening there)",
		transport.Timeout: " (no answer within the timeout)",
	}[out.Kind]
	if out.Kind == transport.TLS {
		hint = tlsHint(p.RequestURL(firstRequest(p)), p.HTTP.Timeout.Duration)
	}
	return false, fmt.Errorf("%w: %s: %s%s", ErrUnreachable, Describe(p), out.Kind, hint)
}

// firstRequest is the request the preflight sends: the login's first, or
// the first scenario's.
func firstRequest(p *plan.Plan) *plan.Request {
	if len(p.Login) > 0 {
		return &p.Login[0].Request
	}
	for i := range p.Scenarios {
		switch sc := &p.Scenarios[i]; {
		case len(sc.Steps) > 0:
			return &sc.Steps[0].Request
		case sc.WebSocket == nil:
			return &sc.Request
		}
	}
	return &plan.Request{}
}

// tlsHint dials rawURL's host once more to say why its TLS failed: the
// certificate's own problem, and what to do about it.
func tlsHint(rawURL string, timeout time.Duration) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: &tls.Config{ServerName: u.Hostname()}}
	c, err := d.Dial("tcp", addr)
	if err == nil {
		c.Close()
		return ""
	}
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknown):
		return " (signed by an unknown authority, as a self-signed certificate is: --insecure skips the check)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return " (the certificate has expired or is not yet valid: renew it, or --insecure skips the check)"
	case errors.As(err, &host):
		return fmt.Sprintf(" (the certificate is not for %s: %v)", u.Hostname(), host)
	}
	return " (" + err.Error() + ")"
}

// Describe names what a plan sends: the request of a one-request plan, or
// its scenarios; URLs with their secrets redacted.
func Describe(p *plan.Plan) string {
	if len(p.Scenarios) == 1 {
		switch sc := &p.Scenarios[0]; {
		case sc.WebSocket != nil:
			return fmt.Sprintf("websocket %s over %d sockets", secret.URL(p.WebSocketURL(sc.WebSocket)), max(sc.WebSocket.Connections, 1))
		case len(sc.Steps) == 0:
			return sc.Request.Method + " " + secret.URL(p.URL(sc))
		}
	}
	names := make([]string, len(p.Scenarios))
	for i := range p.Scenarios {
		names[i] = p.Scenarios[i].Name
	}
	return fmt.Sprintf("%d scenarios (%s) against %s", len(names), strings.Join(names, ", "), secret.URL(p.Target))
}
