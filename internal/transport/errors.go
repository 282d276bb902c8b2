package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// ClassifyError maps a transport error to a failure Kind. Implementations
// map their own sentinel errors first and call this for the rest. A
// connection ceiling could not open for want of its own resources (file
// descriptors, local ports) is Generator, before any other class: the
// target never saw it.
func ClassifyError(err error) Kind {
	var netErr net.Error
	var opErr *net.OpError
	var recErr tls.RecordHeaderError
	var alertErr tls.AlertError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	switch {
	case OutOfResources(err):
		return Generator
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.As(err, &opErr) && opErr.Op == "dial":
		// A connection not made in time too: a target whose accept
		// queue is full drops the handshake, and that is a failure to
		// connect, not a slow answer.
		return Connect
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return Timeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return Reset
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalidCert):
		return TLS
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return Connect
	}
	return Protocol
}

// OutOfResources reports whether err says this process ran out of file
// descriptors (EMFILE: its own limit, ENFILE: the system's) or of local
// ports to connect from (EADDRNOTAVAIL).
func OutOfResources(err error) bool {
	for _, e := range outOfResources {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
