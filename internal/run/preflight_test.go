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
	"testing"
	"time"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-not-http\r\n\r\n"))
			c.Close()
		}
	}()
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
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrUnreachable) != tt.unreachable {
			t.Errorf("Open(%s) = %v, want an error saying %q (unreachable: %v)", tt.url, err, tt.want, tt.unreachable)
		}
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
