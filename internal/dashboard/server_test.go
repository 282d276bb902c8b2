package dashboard

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// event is one server-sent event.
type event struct{ name, id, data string }

// events reads server-sent events from r until it ends.
func events(r io.Reader, out chan<- event) {
	defer close(out)
	sc := bufio.NewScanner(r)
	var e event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			e.data = strings.Join(data, "\n")
			out <- e
			e, data = event{}, nil
		case strings.HasPrefix(line, "event: "):
			e.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

func next(t *testing.T, ch <-chan event) event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event in 5s")
	}
	return event{}
}

// The page holds the latest body as it loads; its event stream sends the
// body at once, each new one as it is published (a body of many lines
// whole), then the end with the report's link; the report is served.
func TestPageAndEvents(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Publish("find: GET /", "<p>first</p>")
	page := body(t, get(t, s.URL()))
	for _, want := range []string{"<title>find: GET /</title>", "<p>first</p>", "new EventSource('live/events')", "Live: updated every second."} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	resp := get(t, s.URL()+"live/events")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	ch := make(chan event, 16)
	go events(resp.Body, ch)
	defer resp.Body.Close()
	if e := next(t, ch); e.name != "body" || e.data != "find: GET /\n<p>first</p>" {
		t.Fatalf("first event %+v", e)
	}
	s.Publish("find: GET /", "<table>\n<tr><td>1</td></tr>\n</table>")
	if e := next(t, ch); e.name != "body" || e.data != "find: GET /\n<table>\n<tr><td>1</td></tr>\n</table>" {
		t.Fatalf("second event %+v", e)
	}
	s.End("find: GET /", "<p>edge 200/s</p>", []byte("<h1>the report</h1>"))
	if e := next(t, ch); e.name != "body" || !strings.Contains(e.data, "edge 200/s") {
		t.Fatalf("last body %+v", e)
	}
	if e := next(t, ch); e.name != "end" || !strings.Contains(e.data, `<a href="live/report">`) {
		t.Fatalf("end %+v", e)
	}
	if got := body(t, get(t, s.URL()+"live/report")); got != "<h1>the report</h1>" {
		t.Errorf("report %q", got)
	}
	if page := body(t, get(t, s.URL())); !strings.Contains(page, "The run has ended") || !strings.Contains(page, "edge 200/s") {
		t.Errorf("the page after the end:\n%s", page)
	}
	s.Publish("late", "<p>after the end</p>")
	if page := body(t, get(t, s.URL())); strings.Contains(page, "after the end") {
		t.Error("a body published after the end replaced the final one")
	}
}

// With a token every path needs it, in the query or the cookie the first
// request sets; beyond loopback a token is required.
func TestToken(t *testing.T) {
	if _, err := Listen(Options{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "--dashboard-token") {
		t.Fatalf("listening on every address without a token: %v", err)
	}
	s, err := Listen(Options{Addr: "127.0.0.1:0", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bare := strings.TrimSuffix(s.URL(), "?token=s3cret")
	for _, path := range []string{"", "live/events", "live/report", "?token=wrong"} {
		if resp := get(t, bare+path); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", path, resp.StatusCode)
		}
	}
	resp := get(t, s.URL())
	body(t, resp)
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 || !resp.Cookies()[0].HttpOnly {
		t.Fatalf("with the token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	s.End("t", "<p>done</p>", nil)
	if got := body(t, get(t, bare+"live/events", resp.Cookies()[0])); !strings.Contains(got, "event: end") {
		t.Errorf("the event stream with the cookie:\n%s", got)
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true, "[::1]": true,
		"0.0.0.0": false, "": false, "::": false, "10.0.0.1": false, "example.com": false} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// A client that stops reading is dropped, and Close ends every stream.
func TestCloseEndsStreams(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, s.URL()+"live/events")
	ch := make(chan event, 4)
	go events(resp.Body, ch)
	next(t, ch)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for an open stream")
	}
	for range ch {
	}
}
