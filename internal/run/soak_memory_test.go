//go:build linux && soakbench

package run

import (
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// ownAnon keeps ceiling's private memory at the end of each window of
// a soak, as the window measured it, and when (seconds from its start).
type ownAnon struct{ at, anon []float64 }

func (o *ownAnon) Start(*results.Result) error { return nil }
func (o *ownAnon) Step(*Finished) error        { return nil }
func (o *ownAnon) Stop(*results.Result) error  { return nil }
func (o *ownAnon) Window(res *results.Result) error {
	w, err := res.Soak.LastWindow()
	if err == nil && w != nil && w.Ceiling != nil && w.Ceiling.AnonMB != nil {
		o.at, o.anon = append(o.at, w.EndS), append(o.anon, *w.Ceiling.AnonMB)
	}
	return nil
}

// TestSoakOwnMemorySettles soaks an in-process target (100 exchanges a
// second) for 2,000 one-second windows on a fake clock, the soak's whole
// path (windows written to their file and to result.json, fitted,
// judged, folded at 480), and logs ceiling's private memory every 100
// windows: what a soak of hours does to ceiling's own memory, in half a
// minute. Its private memory settles: it may grow by 3 MB from the 100th
// window to the last, and by 1 KB a window at most from the 500th on
// (measured: +1.0 MB over the first 100 windows, +0.8 over the next
// 400, +0.25 over the 1,500 after). A benchmark more than a test (it
// reads the whole process's memory, alone), so it is built only with the
// soakbench tag:
//
//	go test -tags soakbench -run SoakOwnMemory -v ./internal/run
func TestSoakOwnMemorySettles(t *testing.T) {
	const windows = 2000
	o := &ownAnon{}
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.json")
		p := soakPlan(t, "p99<50ms", 100, windows*time.Second, time.Second)
		s, err := Open(t.Context(), p, Options{Out: out, Exchanger: newServer(4, 10*time.Millisecond), GoTimer: true, Outputs: []Output{o}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	if len(o.anon) == 0 || o.at[len(o.at)-1] < 0.95*windows {
		t.Fatalf("%d windows measured ceiling's private memory; want them to about %d s", len(o.anon), windows)
	}
	// at is the private memory at the end of the window that holds second n.
	at := func(n float64) float64 {
		i, _ := slices.BinarySearch(o.at, n)
		return o.anon[min(i, len(o.anon)-1)]
	}
	for n := 100.0; n <= windows; n += 100 {
		t.Logf("second %4.0f: private memory %.3f MB", n, at(n))
	}
	late := (at(windows) - at(500)) / (windows - 500) * 1024
	t.Logf("from the 100th second to the last %+.2f MB; from the 500th, %+.3f KB a second (windows fold at 480)", at(windows)-at(100), late)
	if at(windows)-at(100) > 3 || late > 1 {
		t.Errorf("ceiling's private memory grew %+.2f MB from the 100th second to the last, %+.3f KB a second from the 500th: want it settled (at most 3 MB, 1 KB a second)", at(windows)-at(100), late)
	}
}
