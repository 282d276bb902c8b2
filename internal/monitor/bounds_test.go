package monitor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// manySeries is an exposition with n series of the gauge big and one of
// the gauge small.
func manySeries(n int) string {
	var b strings.Builder
	b.WriteString("# HELP big A metric with too many label sets.\n# TYPE big gauge\n")
	for i := range n {
		fmt.Fprintf(&b, "big{id=\"%06d\",pod=\"pod-%d\"} %d\n", i, i%100, i)
	}
	b.WriteString("# TYPE unrelated gauge\nunrelated 1\n# TYPE small gauge\nsmall 7\n")
	return b.String()
}

// retainedHeap is the heap in use after a collection.
func retainedHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// An endpoint with 20,000 series of a selected metric: the first
// MaxSeriesPerMetric are kept, the same ones every scrape, the figures say
// how many were left out, and the memory kept does not grow with the
// series or the scrapes.
func TestScrapeManySeries(t *testing.T) {
	const series = 20000
	url := serveProm(t, &promServer{bodies: []string{manySeries(series)}})
	// The samples' times are given; the interval and the scraper's own
	// timeout bound each scrape, long enough for 20,000 series under -race
	// on a busy machine.
	scr, err := NewScraper(url, []string{"big", "small"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(nil, scr, 8*time.Second)
	w.spacing = 0
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	w.sample(context.Background(), at(0)) // the first scrape sizes the buffers
	before := retainedHeap()
	const scrapes = 10
	for i := 1; i <= scrapes; i++ {
		w.sample(context.Background(), at(i))
	}
	grown := int64(retainedHeap()) - int64(before)
	// Each scrape keeps one value per kept series (8 KB); all the series
	// of one scrape took about 2 MB.
	if limit := int64(scrapes * 100 << 10); grown > limit {
		t.Errorf("the heap grew by %d KB over %d scrapes of %d series, want under %d KB", grown>>10, scrapes, series, limit>>10)
	}
	f := w.Window(at(0), at(scrapes))
	if len(f.Metrics) != MaxSeriesPerMetric+1 {
		t.Errorf("Window kept %d series, want %d of big and small", len(f.Metrics), MaxSeriesPerMetric+1)
	}
	first, last := `big{id="000000",pod="pod-0"}`, fmt.Sprintf(`big{id="%06d",pod="pod-%d"}`, MaxSeriesPerMetric-1, (MaxSeriesPerMetric-1)%100)
	for _, k := range []string{first, last, "small"} {
		if st, ok := f.Metrics[k]; !ok || st.Mean != st.Last {
			t.Errorf("Window metrics[%s] = %+v, %v; want it kept, with the same value every scrape", k, st, ok)
		}
	}
	want := []string{fmt.Sprintf("big: the endpoint serves %d series of it; ceiling keeps the first %d of a metric, "+
		"so %d are not in these figures (narrow the selection with labels)", series, MaxSeriesPerMetric, series-MaxSeriesPerMetric)}
	if d := cmp.Diff(want, f.Warnings); d != "" {
		t.Errorf("Window warnings mismatch (-want +got):\n%s", d)
	}
	if f.Scrapes != scrapes+1 || f.ScrapeErrors != 0 {
		t.Errorf("Window = %d scrapes, %d failed; want %d, none failed", f.Scrapes, f.ScrapeErrors, scrapes+1)
	}
}

// endless answers 200 and writes lines until the client goes away; every
// is how often it writes one.
func endless(every time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		line := []byte(strings.Repeat("# padding to make the body grow fast\n", 100))
		for i := 0; r.Context().Err() == nil; i++ {
			if _, err := fmt.Fprintf(w, "big{id=\"%d\"} 1\n", i); err != nil {
				return
			}
			if every > 0 {
				w.(http.Flusher).Flush()
				select {
				case <-time.After(every):
				case <-r.Context().Done():
				}
				continue
			}
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}
}

// scrapeEnds runs s.Scrape and fails the test if it has not returned
// after a minute: an endless answer must not hang the scrape.
func scrapeEnds(t *testing.T, s *Scraper) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Scrape()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Scrape of an endless answer has not returned after a minute")
		return nil
	}
}

// An answer that never ends is cut off: by the size limit when it comes
// fast, by the timeout when it trickles. Either way nothing is kept.
func TestScrapeEndless(t *testing.T) {
	t.Run("fast", func(t *testing.T) {
		srv := httptest.NewServer(endless(0))
		t.Cleanup(srv.Close)
		s := newScraper(t, srv.URL, "big")
		s.maxBytes = 1 << 20
		err := scrapeEnds(t, s)
		if err == nil || !strings.Contains(err.Error(), "body larger than 1 MB") {
			t.Errorf("Scrape() of an endless fast answer = %v, want body larger than 1 MB", err)
		}
	})
	t.Run("trickle", func(t *testing.T) {
		srv := httptest.NewServer(endless(5 * time.Millisecond))
		t.Cleanup(srv.Close)
		s, err := NewScraper(srv.URL, []string{"big"}, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		err = scrapeEnds(t, s)
		if err == nil || !strings.Contains(err.Error(), "no complete answer within 200ms") {
			t.Errorf("Scrape() of an endless trickle = %v, want no complete answer within 200ms", err)
		}
	})
	t.Run("watched", func(t *testing.T) {
		srv := httptest.NewServer(endless(0))
		t.Cleanup(srv.Close)
		s := newScraper(t, srv.URL, "big")
		s.maxBytes = 1 << 20
		w := NewWatcher(nil, s, time.Second)
		t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		w.sample(context.Background(), t0)
		f := w.Window(t0, t0)
		if f.Scrapes != 1 || f.ScrapeErrors != 1 || f.Metrics != nil || !strings.Contains(f.ScrapeError, "larger than 1 MB") {
			t.Errorf("Window after an endless answer = %+v, want 1 failed scrape, no metrics", f)
		}
	})
}

// A scrape that fails, or returns what is not the text format, is recorded
// as failed with its reason; it never reads as measured zeros.
func TestScrapeGarbage(t *testing.T) {
	long := "big{id=\"" + strings.Repeat("x", maxLineBytes) + "\"} 1\n"
	tests := []struct {
		name, body, contentType string
		status                  int
		wantErr                 string
	}{
		{name: "an HTML page", body: "<!doctype html><html><body>Login</body></html>\n", wantErr: "parse the answer"},
		{name: "JSON", body: `{"big": 1}` + "\n", contentType: "application/json", wantErr: "parse the answer"},
		{name: "binary", body: "\x00\x01\x02big\xff\xfe\n", wantErr: "parse the answer"},
		{name: "a line too long", body: "# TYPE big gauge\n" + long, wantErr: "line 2 is longer than 8 KB"},
		{name: "a bad value", body: "# TYPE big gauge\nbig{id=\"1\"} one\n", wantErr: "parse the answer"},
		{name: "status 404", body: "no such page", status: 404, wantErr: "status 404"},
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				ct, status := tc.contentType, tc.status
				if ct == "" {
					ct = "text/plain; version=0.0.4"
				}
				if status == 0 {
					status = http.StatusOK
				}
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(status)
				fmt.Fprint(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			w := NewWatcher(nil, newScraper(t, srv.URL, "big"), time.Second)
			w.sample(context.Background(), t0)
			f := w.Window(t0, t0)
			if f.Samples != 1 || f.SourceSamples != 0 || f.Scrapes != 1 || f.ScrapeErrors != 1 || f.Errors != 1 || f.Metrics != nil {
				t.Errorf("Window = %+v, want 1 sample, 1 failed scrape, no metrics, no source samples", f)
			}
			if !strings.Contains(f.ScrapeError, tc.wantErr) || !strings.HasPrefix(f.ScrapeError, "scrape "+srv.URL) {
				t.Errorf("ScrapeError = %q, want it to name the URL and say %q", f.ScrapeError, tc.wantErr)
			}
			if len(f.Warnings) != 1 || !strings.HasPrefix(f.Warnings[0], "every scrape of the metrics endpoint failed (1)") {
				t.Errorf("Warnings = %q, want that every scrape failed", f.Warnings)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		w := NewWatcher(nil, newScraper(t, url, "big"), time.Second)
		w.sample(context.Background(), t0)
		if f := w.Window(t0, t0); f.ScrapeErrors != 1 || !strings.Contains(f.ScrapeError, "refused") {
			t.Errorf("Window of a closed port = %+v, want a refused scrape", f)
		}
	})
	t.Run("an empty answer", func(t *testing.T) {
		w := NewWatcher(nil, newScraper(t, serveProm(t, &promServer{bodies: []string{""}}), "big", "small"), time.Second)
		w.sample(context.Background(), t0)
		f := w.Window(t0, t0)
		want := []string{"the metrics endpoint answered 1 times without any of big, small: is it the right endpoint?"}
		if f.ScrapeErrors != 0 || f.Metrics != nil || !cmp.Equal(want, f.Warnings) {
			t.Errorf("Window of an empty answer = %+v, want no failure, no metrics, warning %q", f, want)
		}
	})
}

// A slow scrape spaces the next ones out, and the figures say so.
func TestScrapeSpacing(t *testing.T) {
	w := NewWatcher(nil, newScraper(t, serveProm(t, &promServer{bodies: []string{"small 1\n"}}), "small"), time.Second)
	w.spacing = 1e9 // any scrape is slow enough to skip the following ones
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3 {
		w.sample(context.Background(), t0.Add(time.Duration(i)*time.Second))
	}
	f := w.Window(t0, t0.Add(3*time.Second))
	if f.Samples != 3 || f.Scrapes != 1 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "2 of 3 readings skipped it") {
		t.Errorf("Window = %+v, want 3 samples, 1 scrape, a warning that 2 readings skipped it", f)
	}
}

// The body is read in full before it is parsed, so parsing has its own
// check of the deadline: an OpenMetrics body (about 2 ms a line to parse)
// of thousands of lines ends with the timeout, not after seconds.
func TestScrapeSlowParse(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE big gauge\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "big{id=\"%d\"} 1\n", i)
	}
	b.WriteString("# EOF\n")
	srv := &promServer{bodies: []string{b.String()}, contentType: "application/openmetrics-text; version=1.0.0"}
	s, err := NewScraper(serveProm(t, srv), []string{"big"}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	err = scrapeEnds(t, s)
	if err == nil || !strings.Contains(err.Error(), "no complete answer within 200ms") {
		t.Errorf("Scrape() of a slow body = %v, want no complete answer within 200ms", err)
	}
}
