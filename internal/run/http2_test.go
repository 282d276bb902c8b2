package run

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
)

// HTTP/2 end to end, against servers that answer anything else with 505:
// h2 over TLS with http.insecure, h2c in the clear; h2 over TLS without
// insecure does not open, with a TLS hint.
func TestHTTP2(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
		}
	})
	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	h2c := httptest.NewUnstartedServer(h)
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	h2c.Config.Protocols = &protos
	h2c.Start()
	defer h2c.Close()
	for _, tc := range []struct {
		name, url string
		insecure  bool
	}{
		{"h2", tlsSrv.URL, true},
		{"h2c", h2c.URL, false},
		{"h2 without insecure", tlsSrv.URL, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := quickPlan(t, "errors<1%", 300*time.Millisecond, 0, 50)
			p.Target, p.HTTP.HTTP2, p.HTTP.Insecure = tc.url, true, tc.insecure
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), p, Options{})
			if !tc.insecure && tc.url == tlsSrv.URL {
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, failure.ErrUnreachable) || !strings.Contains(err.Error(), "tls") {
					t.Errorf("Open = %v, want the target unreachable, with a TLS hint", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st := res.Steps[0]; st.Failed != 0 || st.OK == 0 || !res.Thresholds[0].OK {
				t.Errorf("ok %d, failed %d %v, thresholds %+v; want every request answered over HTTP/2", st.OK, st.Failed, st.Errors, res.Thresholds)
			}
			passedOrBusy(t, res)
		})
	}
}
