package monitor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A watcher that keeps 64 readings one by one still sums a long run
// exactly over its whole span (readings, failures, the most memory, the
// CPU of a steady load) and the last minutes one by one, while what it
// holds stays within twice its bound, in the room it made at first.
func TestWatcherThinsOldReadings(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	const n = 5000
	src := &fakeSource{}
	failed := 0
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		rss := int64(10 * mib)
		if i == 7 {
			rss = 99 * mib // the most memory, early: thinned, not lost
		}
		src.samples = append(src.samples, Sample{At: at, CPU: time.Duration(i) * 500 * time.Millisecond, RSSBytes: rss, Threads: 3, FDs: 9, Alive: true})
		var err error
		if i%100 == 50 {
			err, failed = errors.New("read failed"), failed+1
		}
		src.errs = append(src.errs, err)
	}
	w := NewWatcher(src, nil, time.Second)
	w.Keep(64)
	room := cap(w.readings)
	for i := range n {
		w.sample(context.Background(), t0.Add(time.Duration(i)*time.Second))
		if len(w.readings) > 2*64+1 || cap(w.readings) != room {
			t.Fatalf("after %d readings it holds %d in room for %d, want at most %d in the room made at first, %d", i+1, len(w.readings), cap(w.readings), 2*64+1, room)
		}
	}
	all := w.Window(t0, t0.Add(n*time.Second))
	if all.Samples != n || all.Errors != failed || all.SourceSamples != n-failed || all.RSSMaxMB != 99 || all.CPUPct != 50 || all.RSSMB != 10 {
		t.Errorf("Window(whole run) = %+v, want %d samples, %d errors, %d from the source, RSS max 99, CPU 50%%, RSS 10", all, n, failed, n-failed)
	}
	recent := w.Window(t0.Add((n-30)*time.Second), t0.Add(n*time.Second))
	if recent.Samples != 30 || recent.CPUPct != 50 {
		t.Errorf("Window(last 30 s) = %+v, want 30 samples at 50%% CPU", recent)
	}
	if s := w.Series(t0.Add((n-10)*time.Second), t0.Add(n*time.Second)); len(s) != 10 {
		t.Errorf("Series(last 10 s) has %d points, want 10", len(s))
	}
}
