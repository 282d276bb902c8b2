package transport

// Kind classifies how one exchange ended. OK and Limited are not failures;
// every other kind is a failure class counted apart in every report.
type Kind uint8

// The kinds of outcome. The order is the order of columns in reports.
const (
	// OK is a response the scenario accepts (a 2xx, or a listed expect.status).
	OK Kind = iota
	// Limited is a response whose status the plan lists under limited
	// (default 429): the target shedding load as designed, not failing.
	Limited
	// Refused is a connection the target refused (nothing listening).
	Refused
	// Connect is any other failure to establish a connection (DNS, unreachable).
	Connect
	// Timeout is an exchange that did not finish within the timeout.
	Timeout
	// Reset is a connection reset or closed by the peer mid-exchange.
	Reset
	// TLS is a failed TLS handshake or certificate verification.
	TLS
	// Protocol is a malformed or oversized response.
	Protocol
	// HTTP4xx is a 4xx response the scenario does not expect.
	HTTP4xx
	// HTTP5xx is a 5xx response the scenario does not expect.
	HTTP5xx
	// Redirect is a 3xx response the scenario does not expect. Redirects are
	// not followed by default, so a redirect to a login page is a failure.
	Redirect
	// Check is a response that failed a check (including an unexpected status
	// outside 3xx/4xx/5xx, such as a 204 when only 200 is expected).
	Check
	// WSNoAck is a WebSocket frame whose ack did not arrive in time.
	WSNoAck
	// WSClosed is a WebSocket frame lost to its socket closing (or a frame
	// that found its socket closed, waiting to be reopened).
	WSClosed
	// Generator is an exchange that failed in ceiling itself before it
	// reached the target: ceiling ran out of file descriptors (EMFILE,
	// ENFILE) or of local ports (EADDRNOTAVAIL). It is the generator's
	// failure, not the target's: a step with any is GENERATOR LIMITED.
	Generator
	// NumKinds is the number of kinds; arrays indexed by Kind use it.
	NumKinds
)

var kindNames = [NumKinds]string{
	OK: "ok", Limited: "limited", Refused: "refused", Connect: "connect",
	Timeout: "timeout", Reset: "reset", TLS: "tls", Protocol: "protocol",
	HTTP4xx: "http_4xx", HTTP5xx: "http_5xx", Redirect: "redirect", Check: "check",
	WSNoAck: "ws_no_ack", WSClosed: "ws_closed", Generator: "generator",
}

// String returns the class name used in result.json and tables.
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Failed reports whether the kind counts as a failure.
func (k Kind) Failed() bool { return k != OK && k != Limited }

// Responded reports whether the target answered with a complete response
// (whatever its status), as opposed to a transport failure.
func (k Kind) Responded() bool {
	switch k {
	case OK, Limited, HTTP4xx, HTTP5xx, Redirect, Check:
		return true
	}
	return false
}

// Classify maps an HTTP status to a Kind. expect lists the statuses the
// scenario accepts (empty means any 2xx); limited lists the statuses counted
// as limited. A status both expected and limited is OK: the scenario said so.
func Classify(status int, expect, limited []int) Kind {
	if len(expect) > 0 {
		for _, s := range expect {
			if s == status {
				return OK
			}
		}
	} else if status >= 200 && status < 300 {
		return OK
	}
	for _, s := range limited {
		if s == status {
			return Limited
		}
	}
	switch {
	case status >= 300 && status < 400:
		return Redirect
	case status >= 400 && status < 500:
		return HTTP4xx
	case status >= 500 && status < 600:
		return HTTP5xx
	}
	return Check
}
