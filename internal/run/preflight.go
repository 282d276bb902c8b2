package run

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// preflight sends the run's first request once before the first step: a target
// that cannot be reached at all is failure.ErrUnreachable, not a table of
// errors. When that request is refused with a 4xx the scenario does not
// expect, it sends each other scenario's first request too, while they are
// refused: refused, when every scenario's was, says so and what to check (""
// otherwise; a plan with a login or a websocket scenario is never refused
// here, see scenario.Set.Preflight). cookie says the first answer set a
// cookie; sent counts the requests sent (into *sent, also on an error),
// which no step counts.
func preflight(ex transport.Exchanger, set *scenario.Set, p *plan.Plan, sent *int) (cookie bool, refused string, err error) {
	sess := ex.Session()
	defer sess.Close()
	var outs []transport.Outcome
	var names []string
	err = set.Preflight(sess, func(name string, out transport.Outcome) bool {
		outs, names = append(outs, out), append(names, name)
		*sent = len(outs)
		return out.Kind == transport.HTTP4xx // only while every answer so far refused its request
	})
	if err != nil {
		return false, "", badInput("preflight: %w", err)
	}
	if len(outs) == 0 {
		return false, "", nil // only websocket scenarios: opening the sockets is the preflight
	}
	out := outs[0]
	switch {
	case out.Kind.Responded():
		_, cookie = out.HeaderValue("Set-Cookie")
		return cookie, refusedAll(p, set, names, outs), nil
	case out.Kind == transport.Protocol:
		return false, "", fmt.Errorf("preflight: %s: the target answered, but not with a valid HTTP response", Describe(p))
	case out.Kind == transport.Generator: // not the target's doing
		return false, "", fmt.Errorf("preflight: %s: ceiling could not open a connection: it ran out of file descriptors (raise ulimit -n) or local ports", Describe(p))
	}
	hint := map[transport.Kind]string{
		transport.Refused: " (nothing is listening there)",
		transport.Timeout: " (no answer within the timeout)",
	}[out.Kind]
	switch out.Kind {
	case transport.TLS:
		hint = tlsHint(p.RequestURL(firstRequest(p)), p.HTTP.Timeout.Duration)
	case transport.Connect:
		hint = connectHint(p.RequestURL(firstRequest(p)), p.HTTP.Timeout.Duration)
	}
	return false, "", fmt.Errorf("%w: %s: %s%s", failure.ErrUnreachable, Describe(p), out.Kind, hint)
}

// refusedAll says how the target refused every scenario's first request
// (outs, of the scenarios names), "" unless it did: every scenario
// preflighted (no login, no websocket), each answered with a 4xx it does
// not expect.
func refusedAll(p *plan.Plan, set *scenario.Set, names []string, outs []transport.Outcome) string {
	if set.HasLogin() || len(set.WebSockets()) > 0 || len(outs) != set.Len() {
		return ""
	}
	status := outs[0].Status
	parts := make([]string, len(outs))
	for i, out := range outs {
		if out.Kind != transport.HTTP4xx {
			return ""
		}
		if out.Status != status {
			status = 0
		}
		parts[i] = fmt.Sprintf("%s %d %s", names[i], out.Status, http.StatusText(out.Status))
	}
	if len(outs) == 1 {
		return fmt.Sprintf("the target refused the request: %s answered %d %s: %s", Describe(p), outs[0].Status, http.StatusText(outs[0].Status), results.RefusedHint(status))
	}
	return fmt.Sprintf("the target refused every scenario's first request (%s): %s", strings.Join(parts, ", "), results.RefusedHint(status))
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

// lookupHost resolves a host name as the transport's dials do; the tests
// replace it.
var lookupHost = net.DefaultResolver.LookupHost

// connectHint looks rawURL's host name up once more to say why a connection
// could not be made: a name that does not resolve (a typo, a Service in
// another namespace, a cluster's DNS) is said so, rather than as a bare
// "connect".
func connectHint(rawURL string, timeout time.Duration) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(min(timeout, 10*time.Second), 10*time.Second))
	defer cancel()
	_, err = lookupHost(ctx, u.Hostname())
	if err == nil {
		return " (its name resolves, but no connection could be made to it)"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf(" (the lookup of %s failed: %s)", u.Hostname(), dns.Err)
	}
	return fmt.Sprintf(" (the lookup of %s failed: %v)", u.Hostname(), err)
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
