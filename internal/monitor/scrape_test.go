package monitor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// promServer serves scripted exposition bodies, one per request, repeating
// the last.
type promServer struct {
	mu          sync.Mutex
	bodies      []string
	status      int
	contentType string // the classic text format when empty
	n           int
}

func (p *promServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	body, status, ct := p.bodies[min(p.n, len(p.bodies)-1)], p.status, p.contentType
	p.n++
	p.mu.Unlock()
	if ct == "" {
		ct = "text/plain; version=0.0.4; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	if status != 0 {
		w.WriteHeader(status)
	}
	fmt.Fprint(w, body)
}

func serveProm(t *testing.T, p *promServer) string {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// newScraper is a scraper of url's metrics with a 5 s timeout: the tests'
// answers are small and quick, but under -race beside other packages a
// busy machine has taken over a second to serve and parse one. The tests
// of the timeout make their own.
func newScraper(t *testing.T, url string, metrics ...string) *Scraper {
	t.Helper()
	s, err := NewScraper(url, metrics, 5*time.Second)
	if err != nil {
		t.Fatalf("NewScraper(%q, %q) = %v", url, metrics, err)
	}
	return s
}

const exposition = `# HELP queue_depth Items waiting.
# TYPE queue_depth gauge
queue_depth{lane="chat"} 5
queue_depth{lane="bulk"} 2
# TYPE requests_total counter
requests_total{method="GET",code="200"} 100
requests_total{code="500",method="GET"} 3
# TYPE latency_seconds summary
latency_seconds{quantile="0.5"} 0.1
latency_seconds{quantile="0.99"} 0.4
latency_seconds{quantile="0.999"} NaN
latency_seconds_sum 12.5
latency_seconds_count 100
# TYPE size_bytes histogram
size_bytes_bucket{le="1"} 1
size_bytes_bucket{le="+Inf"} 4
size_bytes_sum 10
size_bytes_count 4
temperature{room="a \"b\"\\c"} 21.5
other_metric 1
`

func TestScrapeSelects(t *testing.T) {
	url := serveProm(t, &promServer{bodies: []string{exposition}})
	s := newScraper(t, url, `queue_depth{lane="chat"}`, "requests_total", "latency_seconds",
		"size_bytes_count", "temperature", "absent_metric")
	got, err := s.Scrape()
	if err != nil {
		t.Fatalf("Scrape() = %v", err)
	}
	want := map[string]Point{
		`queue_depth{lane="chat"}`:                {Value: 5},
		`requests_total{code="200",method="GET"}`: {100, true},
		`requests_total{code="500",method="GET"}`: {3, true},
		`latency_seconds_sum`:                     {12.5, true},
		`latency_seconds_count`:                   {100, true},
		`latency_seconds{quantile="0.5"}`:         {Value: 0.1},
		`latency_seconds{quantile="0.99"}`:        {Value: 0.4},
		`size_bytes_count`:                        {4, true},
		`temperature{room="a \"b\"\\c"}`:          {Value: 21.5},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Scrape() mismatch (-want +got):\n%s", d)
	}
	// One quantile of a summary, picked by its label, is a gauge.
	q := newScraper(t, url, `latency_seconds{quantile="0.99"}`)
	if got, err := q.Scrape(); err != nil || !cmp.Equal(got, map[string]Point{`latency_seconds{quantile="0.99"}`: {Value: 0.4}}) {
		t.Errorf("Scrape() of one quantile = %v, %v", got, err)
	}
}

func TestScrapeErrors(t *testing.T) {
	tests := []struct {
		name    string
		srv     *promServer
		wantErr string
	}{
		{"status 500", &promServer{bodies: []string{"oops"}, status: 500}, "status 500"},
		{"not the text format", &promServer{bodies: []string{"queue_depth{lane=chat} 5\n"}}, "scrape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScraper(t, serveProm(t, tc.srv), "queue_depth")
			if _, err := s.Scrape(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Scrape() = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		if _, err := newScraper(t, url, "x").Scrape(); err == nil {
			t.Errorf("Scrape() of a closed port = nil error, want one")
		}
	})
}

func TestNewScraperValidates(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		metrics []string
		wantErr string
	}{
		{"no scheme", "localhost:9090/metrics", []string{"x"}, "want an http"},
		{"no metrics", "http://localhost:9090/metrics", nil, "no metrics"},
		{"all bad selectors reported", "http://localhost:9090/metrics", []string{"a{b=c}", "{x=\"y\"}"}, "want a quoted value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewScraper(tc.url, tc.metrics, 0)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("NewScraper(%q, %q) = %v, want an error with %q", tc.url, tc.metrics, err, tc.wantErr)
			}
		})
	}
	_, err := NewScraper("http://localhost:9090/metrics", []string{"a{b=c}", "{x=\"y\"}"}, 0)
	if err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("NewScraper with two bad selectors = %v, want both reported", err)
	}
}

// TestWatcherScrapeWindow drives the watcher's sampling by hand at made-up
// times, one second apart, so the figures are exact.
func TestWatcherScrapeWindow(t *testing.T) {
	gauges := []float64{5, 7, 3, 9, 4}
	counters := []float64{100, 110, 130, 10, 40} // a restart before the fourth scrape
	var bodies []string
	for i := range gauges {
		bodies = append(bodies, fmt.Sprintf("# TYPE q gauge\nq{lane=\"chat\"} %g\nq{lane=\"bulk\"} 1\n# TYPE served_total counter\nserved_total %g\n", gauges[i], counters[i]))
	}
	srv := &promServer{bodies: bodies}
	w := NewWatcher(nil, newScraper(t, serveProm(t, srv), `q{lane="chat"}`, "served_total"), time.Second)
	w.spacing = 0 // every reading scrapes, however slow the machine
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for i := range gauges {
		w.sample(context.Background(), at(i))
	}
	srv.mu.Lock()
	srv.status = 503
	srv.mu.Unlock()
	w.sample(context.Background(), at(5)) // a failed scrape

	got := w.Window(at(1), at(3))
	want := Figures{Samples: 3, Scrapes: 3, Metrics: map[string]Stat{
		`q{lane="chat"}`: {Last: 9, Max: 9, Mean: (7 + 3 + 9) / 3.0},
		// 110 → 130 is +20; 130 → 10 is a restart, +10: 30 over 2 s.
		"served_total": {Last: 10, Max: 130, Mean: (110 + 130 + 10) / 3.0, Rate: 15, Counter: true},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Window(1s, 3s) mismatch (-want +got):\n%s", d)
	}
	all := w.Window(at(0), at(5))
	if all.Samples != 6 || all.Errors != 1 || all.Scrapes != 6 || all.ScrapeErrors != 1 || all.SourceSamples != 0 ||
		!strings.Contains(all.ScrapeError, "503") || all.Metrics["served_total"].Rate != (10+20+10+30)/4.0 {
		t.Errorf("Window(0s, 5s) = %+v, want 6 samples, 6 scrapes, 1 failed with a 503, none of a source, served_total rate 17.5", all)
	}
	wantWarn := []string{"1 of 6 scrapes of the metrics endpoint failed; its metrics are from the other 5; the last error: scrape " +
		w.scr.url + ": status 503 Service Unavailable"}
	if d := cmp.Diff(wantWarn, all.Warnings); d != "" {
		t.Errorf("Window(0s, 5s) warnings mismatch (-want +got):\n%s", d)
	}
	if w.Err() == nil || !strings.Contains(w.Err().Error(), "503") {
		t.Errorf("Err() = %v, want the 503", w.Err())
	}
	series := w.Series(at(2), at(3))
	wantSeries := []SeriesPoint{
		{At: at(2), Metrics: map[string]float64{`q{lane="chat"}`: 3, "served_total": 130}},
		{At: at(3), Metrics: map[string]float64{`q{lane="chat"}`: 9, "served_total": 10}},
	}
	if d := cmp.Diff(wantSeries, series); d != "" {
		t.Errorf("Series(2s, 3s) mismatch (-want +got):\n%s", d)
	}
}

// A scrape's errors name its URL without the secrets in it (a token in the
// query): they reach result.json and the terminal.
func TestScrapeErrorRedactsURL(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)) // nothing listens there: the scrape is refused
	s, err := NewScraper("http://"+addr+"/metrics?token=TOKEN-SECRET", []string{"up"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Scrape()
	if err == nil || strings.Contains(err.Error(), "TOKEN-SECRET") || !strings.Contains(err.Error(), "token=<redacted>") {
		t.Errorf("Scrape() = %v, want an error naming the URL with its token redacted", err)
	}
}
