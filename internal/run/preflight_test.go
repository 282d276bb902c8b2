package run

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// expiredCert is a self-signed certificate for 127.0.0.1 that expired a
// day ago.
func expiredCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// The preflight says what is wrong with a target it cannot use: an expired
// certificate apart from a self-signed one, and a target that answers
// garbage apart from one that cannot be reached.
func TestPreflightSaysWhy(t *testing.T) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	quiet := log.New(io.Discard, "", 0) // the servers' handshake errors are the point
	selfSigned := httptest.NewUnstartedServer(ok)
	selfSigned.Config.ErrorLog = quiet
	selfSigned.StartTLS()
	defer selfSigned.Close()
	expired := httptest.NewUnstartedServer(ok)
	expired.Config.ErrorLog = quiet
	expired.TLS = &tls.Config{Certificates: []tls.Certificate{expiredCert(t)}}
	expired.StartTLS()
	defer expired.Close()
	ln := testkit.ServeTCP(t, func(c net.Conn) {
		c.Write([]byte("SSH-2.0-not-http\r\n\r\n"))
		c.Close()
	})
	for _, tt := range []struct {
		url, want   string
		unreachable bool
	}{
		{selfSigned.URL, "unknown authority", true},
		{expired.URL, "expired", true},
		{"http://" + ln.Addr().String(), "not with a valid HTTP response", false},
	} {
		p := quickPlan(t, "", time.Second, 0, 1)
		p.Target = tt.url
		s, err := Open(context.Background(), p, Options{})
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, failure.ErrUnreachable) != tt.unreachable {
			t.Errorf("Open(%s) = %v, want an error saying %q (unreachable: %v)", tt.url, err, tt.want, tt.unreachable)
		}
	}
}

// outOfDescriptors is an exchanger whose every exchange fails in ceiling
// itself, as when the process has no file descriptor left.
type outOfDescriptors struct{}

func (outOfDescriptors) Session() transport.Session { return outOfDescriptors{} }
func (outOfDescriptors) Close()                     {}
func (outOfDescriptors) Do(_ *transport.Request, out *transport.Outcome) {
	*out = transport.Outcome{Kind: transport.Generator}
}

// A preflight that failed in ceiling itself (out of file descriptors or
// local ports) says so, and does not call the target unreachable.
func TestPreflightOutOfDescriptors(t *testing.T) {
	p := quickPlan(t, "", time.Second, 0, 1)
	p.Target = "http://127.0.0.1:9"
	s, err := Open(context.Background(), p, Options{Exchanger: outOfDescriptors{}})
	if err == nil {
		s.Close()
	}
	if err == nil || errors.Is(err, failure.ErrUnreachable) || !strings.Contains(err.Error(), "ran out of file descriptors") {
		t.Errorf("Open = %v, want an error saying ceiling ran out of file descriptors, not that the target is unreachable", err)
	}
}

// The reproduce line keeps a plan's secret headers, and the built-in ones,
// as placeholders.
func TestReproduceRedacts(t *testing.T) {
	p := quickPlan(t, "", time.Second, 0, 1)
	p.HTTP.SecretHeaders = []string{"X-Tenant-Key"}
	r := newResult(p, &Options{Args: []string{"run", "--header", "X-Tenant-Key: TENANT", "--header", "Authorization: Bearer TOKEN", "--url", "http://u:PASS@h/"}})
	want := "ceiling run --header 'X-Tenant-Key: <redacted>' --header 'Authorization: <redacted>' --url 'http://u:<redacted>@h/'"
	if r.Command != want {
		t.Errorf("command = %s, want %s", r.Command, want)
	}
}

// The preflight asks each scenario only while the target refuses them
// with a 4xx: a target that answers the first sees one request, as before.
// Every scenario refused stops a run that asks for it (find, sweep) with
// failure.ErrRefused, saying what answered what and what to check; without
// that the run opens, said at once and in its warnings. An expected 404, a
// limited 429 or any other answer to one scenario is no refusal.
func TestPreflightEveryScenarioRefused(t *testing.T) {
	var hits []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("ok"))
		case "/busy":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/gone":
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name      string
		scenarios string
		refused   bool
		sent      int
		want      string
	}{
		{"one refused", "[{name: a, request: {url: /a}}]", true, 1, "answered 401 Unauthorized: check the credentials"},
		{"all refused", "[{name: a, request: {url: /a}}, {name: b, request: {url: /b}}, {name: c, steps: [{request: {url: /gone}}]}]", true, 3,
			"every scenario's first request (a 401 Unauthorized, b 401 Unauthorized, c 404 Not Found): check the request"},
		{"first answers", "[{name: a, request: {url: /ok}}, {name: b, request: {url: /b}}]", false, 1, ""},
		{"a later one answers", "[{name: a, request: {url: /a}}, {name: b, request: {url: /ok}}, {name: c, request: {url: /c}}]", false, 2, ""},
		{"a 404 expected", "[{name: a, request: {url: /a}}, {name: b, request: {url: /gone}, expect: {status: [404]}}]", false, 2, ""},
		{"limited", "[{name: a, request: {url: /a}}, {name: b, request: {url: /busy}}]", false, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Parse("plan.yaml", []byte("target: "+srv.URL+"\nload: {rates: [10], step: 1s}\nscenarios: "+tt.scenarios+"\n"))
			if err == nil {
				err = p.Validate()
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, stops := range []bool{true, false} {
				mu.Lock()
				hits = nil
				mu.Unlock()
				var notes []string
				s, err := Open(context.Background(), p, Options{RefusedStops: stops, OnNote: func(n string) { notes = append(notes, n) }})
				if err == nil {
					s.Close()
				}
				mu.Lock()
				sent := len(hits)
				mu.Unlock()
				if sent != tt.sent {
					t.Errorf("stops %v: the preflight sent %d requests %q, want %d", stops, sent, hits, tt.sent)
				}
				switch {
				case tt.refused && stops:
					if !errors.Is(err, failure.ErrRefused) || !strings.Contains(err.Error(), tt.want) {
						t.Errorf("Open = %v, want failure.ErrRefused saying %q", err, tt.want)
					}
				case tt.refused:
					if err != nil || len(notes) == 0 || !strings.Contains(notes[0], tt.want) || !strings.Contains(s.Result().Warnings[0], tt.want) {
						t.Errorf("Open = %v, notes %q; want it open, saying %q at once and in its warnings", err, notes, tt.want)
					}
				default:
					if err != nil || len(notes) != 0 {
						t.Errorf("Open = %v, notes %q; want it open without a word of refusal", err, notes)
					}
				}
			}
		})
	}
}

// unconnected is an exchanger whose every exchange fails to connect, as
// to a host name that resolves nowhere.
type unconnected struct{}

func (unconnected) Session() transport.Session { return unconnected{} }
func (unconnected) Close()                     {}
func (unconnected) Do(_ *transport.Request, out *transport.Outcome) {
	*out = transport.Outcome{Kind: transport.Connect}
}

// A target whose name does not resolve is unreachable, and the error says
// the lookup failed (an agent in a pod whose Service name is wrong said
// only "connect"); one whose name resolves says that instead.
func TestPreflightSaysLookupFailed(t *testing.T) {
	defer func(f func(context.Context, string) ([]string, error)) { lookupHost = f }(lookupHost)
	for _, tt := range []struct {
		lookup func(context.Context, string) ([]string, error)
		want   string
	}{
		{func(_ context.Context, host string) ([]string, error) {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}, "connect (the lookup of shop.shop.svc failed: no such host)"},
		{func(context.Context, string) ([]string, error) { return []string{"10.1.2.3"}, nil }, "connect (its name resolves, but no connection could be made to it)"},
	} {
		lookupHost = tt.lookup
		p := quickPlan(t, "", time.Second, 0, 1)
		p.Target = "http://shop.shop.svc:8080"
		s, err := Open(context.Background(), p, Options{Exchanger: unconnected{}})
		if err == nil {
			s.Close()
		}
		if err == nil || !errors.Is(err, failure.ErrUnreachable) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open = %v, want the target unreachable, saying %q", err, tt.want)
		}
	}
}
