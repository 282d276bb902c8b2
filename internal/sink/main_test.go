package sink

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start starts a sink for one test and closes it, and the test client's
// idle connections, at the end.
func start(t testing.TB, o Options) (*Sink, *http.Client) {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatalf("Start(%+v) = %v", o, err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	c := &http.Client{Transport: tr}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s, c
}

// reply is what a test saw of one answer.
type reply struct {
	status int
	header http.Header
	body   string
}

// do sends one request and reads the whole answer.
func do(t testing.TB, c *http.Client, method, url, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, url, err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// post sends a JSON body to the sink's webhook path.
func post(t testing.TB, c *http.Client, s *Sink, body string, header ...string) reply {
	t.Helper()
	return do(t, c, http.MethodPost, s.URL()+"/hook", body, header...)
}
