package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// run --dashboard serves the live page from before the run's first
// request to its end, says where on stderr, and ends the page's event
// stream with the link to the run's report, which it serves; a page beyond loopback without a token
// is bad input. The page itself (a search watched in Chromium, a flood of
// its viewers) is tested in package dashboard.
func TestRunLivePage(t *testing.T) {
	t.Parallel()
	watching := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // the run's first request waits for the test to watch the page
		case <-watching:
		case <-time.After(20 * time.Second):
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	out := filepath.Join(t.TempDir(), "r.json")
	done := make(chan string, 1)
	go func() {
		code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "20", "--step", "300ms", "--warmup", "0s",
			"--out", out, "--dashboard", addr)
		done <- fmt.Sprintf("exit %d\n%s", code, stderr)
	}()
	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if resp, err = http.Get("http://" + addr + "/live/events"); err == nil {
			break
		}
	}
	close(watching)
	if resp == nil {
		t.Fatalf("the live page did not answer within 20s: %s", <-done)
	}
	stream, err := io.ReadAll(resp.Body) // to the end: the stream ends with the run's
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stream), "event: end") || !strings.Contains(string(stream), "live/report") {
		t.Errorf("the stream does not end with the report's link:\n%s", stream)
	}
	// The page that took the end fetches the report: the run's.
	page, err := http.Get("http://" + addr + "/live/report")
	if err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(report), "<!doctype html>") || !strings.Contains(string(report), srv.URL) {
		t.Errorf("the report served is not the run's:\n%.300s", report)
	}
	if got := <-done; !strings.HasPrefix(got, "exit 0") && !(strings.HasPrefix(got, "exit 1") && starved(t, readResult(t, out))) ||
		!strings.Contains(got, "ceiling: live page at http://"+addr+"/") {
		t.Errorf("want exit 0 and the live page's address on stderr:\n%s", got)
	}
	code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "20", "--dashboard", "0.0.0.0:1")
	if code != ExitBadInput || !strings.Contains(stderr, "needs --dashboard-token") {
		t.Errorf("a page beyond loopback without a token: exit %d, %q; want 2", code, stderr)
	}
}
