package monitor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeSource returns scripted samples, then repeats the last; an entry with
// a nil-At sample and err set fails.
type fakeSource struct {
	mu      sync.Mutex
	samples []Sample
	errs    []error
	n       int
}

func (f *fakeSource) Read() (Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := min(f.n, len(f.samples)-1)
	f.n++
	if f.errs != nil && f.errs[i] != nil {
		return Sample{}, f.errs[i]
	}
	return f.samples[i], nil
}

func TestWatcherSourceWindow(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	src := &fakeSource{
		samples: []Sample{
			{At: at(0), CPU: 0, RSSBytes: 10 * mib, Threads: 4, FDs: 9, Alive: true},
			{At: at(1000), CPU: 500 * time.Millisecond, RSSBytes: 30 * mib, Threads: 5, FDs: 10, Alive: true},
			{At: at(2000), CPU: 1500 * time.Millisecond, RSSBytes: 20 * mib, Threads: 6, FDs: 11, Alive: true},
			{},
			{At: at(4000), CPU: 1600 * time.Millisecond, Alive: false},
		},
		errs: []error{nil, nil, nil, errors.New("read failed"), nil},
	}
	w := NewWatcher(src, nil, time.Second)
	for i := range 5 {
		w.sample(context.Background(), at(i*1000))
	}
	tests := []struct {
		name     string
		from, to time.Time
		want     Figures
	}{
		{"first two seconds", at(0), at(2000), Figures{Samples: 3, SourceSamples: 3, CPUPct: 75, RSSMB: 20, RSSMaxMB: 30, Threads: 6, FDs: 11}},
		{"second one", at(500), at(2500), Figures{Samples: 2, SourceSamples: 2, CPUPct: 100, RSSMB: 20, RSSMaxMB: 30, Threads: 6, FDs: 11}},
		{"one reading", at(1000), at(1000), Figures{Samples: 1, SourceSamples: 1, RSSMB: 30, RSSMaxMB: 30, Threads: 5, FDs: 10}},
		{"a failed reading", at(2500), at(3500), Figures{Samples: 1, Errors: 1}},
		{"the exit", at(2000), at(4000), Figures{Samples: 3, SourceSamples: 2, Errors: 1, CPUPct: 5, RSSMaxMB: 20, Exited: true}},
		{"after the exit", at(4500), at(9000), Figures{}},
		{"empty", at(100), at(900), Figures{}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, w.Window(tc.from, tc.to)); d != "" {
			t.Errorf("%s: Window mismatch (-want +got):\n%s", tc.name, d)
		}
	}
	series := w.Series(at(1000), at(4000))
	want := []SeriesPoint{
		{At: at(1000), CPUPct: 50, RSSMB: 30, Measured: true},
		{At: at(2000), CPUPct: 100, RSSMB: 20, Measured: true},
		{At: at(3000)},
		{At: at(4000), CPUPct: 5, Measured: true},
	}
	if d := cmp.Diff(want, series); d != "" {
		t.Errorf("Series mismatch (-want +got):\n%s", d)
	}
	if got := w.Series(at(5000), at(6000)); got != nil {
		t.Errorf("Series of an empty window = %v, want nil", got)
	}
}

func TestWatcherStartStop(t *testing.T) {
	src := &fakeSource{samples: []Sample{{Alive: true}}}
	w := NewWatcher(src, nil, 10*time.Millisecond)
	start := time.Now()
	w.Start()
	w.Start() // harmless
	time.Sleep(100 * time.Millisecond)
	w.Stop()
	w.Stop() // harmless
	got := w.Window(start, time.Now())
	if got.Samples < 3 || got.Samples > 12 {
		t.Errorf("Window after 100ms at 10ms = %d samples, want 3–12", got.Samples)
	}
	n := got.Samples
	time.Sleep(30 * time.Millisecond)
	if again := w.Window(start, time.Now()).Samples; again != n {
		t.Errorf("samples went on after Stop: %d, then %d", n, again)
	}

	idle := NewWatcher(nil, nil, 0)
	idle.Stop() // never started: returns at once
	idle.Start()
	if got := idle.Window(start, time.Now()); got.Samples != 0 {
		t.Errorf("Start after Stop sampled: %+v", got)
	}
}

// TestWatcherStopDuringScrape checks that Stop does not wait for a slow
// scrape to time out.
func TestWatcherStopDuringScrape(t *testing.T) {
	entered := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	scr, err := NewScraper(srv.URL, []string{"x"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(nil, scr, time.Second)
	w.Start()
	<-entered
	start := time.Now()
	w.Stop()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Stop took %v during a scrape, want well under the 10s timeout", took)
	}
	if got := w.Window(start.Add(-time.Minute), time.Now()); got.Samples != 0 {
		t.Errorf("a scrape cut short by Stop was kept: %+v", got)
	}
}
