package sink

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// built returns a sink that is not listening: tests call its handler
// directly, without the network or goroutines.
func built(t testing.TB, o Options) *Sink {
	t.Helper()
	s, err := build(o)
	if err != nil {
		t.Fatalf("build(%+v) = %v", o, err)
	}
	return s
}

// serve posts body to s's handler and returns the status.
func serve(s *Sink, body string) int {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body)))
	return w.Code
}

// uuidBody is a webhook post whose id has the length of a UUID.
func uuidBody(i int) string {
	return fmt.Sprintf(`{"channel":"C1","text":"hello","id":"%08x-0000-4000-8000-%012x"}`, i, i)
}

// liveHeap returns the bytes of live heap objects after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestBytesPerID measures the heap a sink holds per distinct id: with a
// reader that reads as the delivery ledger does, and with none (ceiling
// mock). Before the id set and the unread log it was about 140 bytes an
// arrival, kept for ever; the bound is generous, the figure is logged.
func TestBytesPerID(t *testing.T) {
	const n = 100_000
	for _, tc := range []struct {
		name      string
		readEvery int // 0: no reader
	}{
		{"no reader", 0},
		{"reader", 10_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := built(t, Options{ID: IDRule{JSON: "id"}})
			next := 0
			if tc.readEvery > 0 {
				_, next = s.Arrivals(0)
			}
			before := liveHeap()
			for i := range n {
				serve(s, uuidBody(i))
				if tc.readEvery > 0 && (i+1)%tc.readEvery == 0 {
					_, next = s.Arrivals(next)
				}
			}
			per := float64(liveHeap()-before) / n
			t.Logf("%s: %.1f bytes of heap per id over %d ids", tc.name, per, n)
			if st := s.Stats(); st.IDs != n {
				t.Fatalf("Stats().IDs = %d, want %d", st.IDs, n)
			}
			if per > 100 {
				t.Errorf("heap per id = %.1f bytes, want under 100", per)
			}
			runtime.KeepAlive(s)
		})
	}
}

// TestBytesPerUnread measures what an arrival costs while it waits for the
// reader, and that reading gives it back.
func TestBytesPerUnread(t *testing.T) {
	const n = 100_000
	s := built(t, Options{ID: IDRule{JSON: "id"}, MaxIDs: 1}) // no id set to speak of
	_, next := s.Arrivals(0)
	before := liveHeap()
	for i := range n {
		serve(s, uuidBody(i))
	}
	per := float64(liveHeap()-before) / n
	t.Logf("%.1f bytes of heap per unread arrival over %d", per, n)
	if per > 100 {
		t.Errorf("heap per unread arrival = %.1f bytes, want under 100", per)
	}
	if got, _ := s.Arrivals(next); len(got) != n {
		t.Fatalf("Arrivals(%d) = %d arrivals, want %d", next, len(got), n)
	}
	if left := float64(liveHeap()-before) / n; left > 10 {
		t.Errorf("heap per arrival after reading = %.1f bytes, want under 10 (the log forgotten)", left)
	}
	runtime.KeepAlive(s)
}

// TestBounds: past MaxIDs ids are counted as unchecked, past the unread
// bound arrivals are counted as unlogged, and Stats says the counts are
// incomplete.
func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxIDs    int
		maxUnread int
		read      bool // a reader has read before the posts
		ids       []string
		wantRead  int // arrivals the reader gets after the posts
		want      Stats
		warnings  []string
	}{{
		name: "within bounds", maxIDs: 10, maxUnread: 10, read: true,
		ids:      []string{"a", "b", "a"},
		wantRead: 3,
		want:     Stats{Received: 3, IDs: 2, Duplicates: 1},
	}, {
		name: "id set full", maxIDs: 3, maxUnread: 100, read: true,
		ids:      []string{"a", "b", "c", "a", "d", "e", "d", "b"},
		wantRead: 8,
		want:     Stats{Received: 8, IDs: 3, Duplicates: 2, Unchecked: 3},
		warnings: []string{"id set full: the sink remembers 3 ids and could not check 3 later arrivals"},
	}, {
		name: "unread log full", maxIDs: 100, maxUnread: 5, read: true,
		ids:      []string{"a", "b", "c", "d", "e", "f", "g"},
		wantRead: 5,
		want:     Stats{Received: 7, IDs: 7, Unlogged: 2},
		warnings: []string{"unread log full: 2 arrivals were not kept"},
	}, {
		name: "no reader yet", maxIDs: 100, maxUnread: 5,
		ids:      []string{"a", "b", "c", "d", "e", "f", "g"},
		wantRead: 5, // not unlogged: nobody was reading
		want:     Stats{Received: 7, IDs: 7},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := built(t, Options{ID: IDRule{JSON: "id"}, MaxIDs: tc.maxIDs})
			s.ledger.log.max = tc.maxUnread
			if tc.read {
				s.Arrivals(0)
			}
			for _, id := range tc.ids {
				if got := serve(s, fmt.Sprintf(`{"id":%q}`, id)); got != http.StatusOK {
					t.Fatalf("post of %s = %d, want 200", id, got)
				}
			}
			got, next := s.Arrivals(0)
			if len(got) != tc.wantRead || next != len(tc.ids) {
				t.Errorf("Arrivals(0) = %d arrivals, next %d, want %d, %d", len(got), next, tc.wantRead, len(tc.ids))
			}
			st := s.Stats()
			warnings := st.Warnings
			st.Warnings = nil
			tc.want.ByStatus = map[int]int64{http.StatusOK: tc.want.Received}
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Errorf("Stats() (-want +got):\n%s", diff)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("Stats().Warnings = %q, want %d", warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(warnings[i], w) || !strings.Contains(warnings[i], "incomplete") {
					t.Errorf("Stats().Warnings[%d] = %q, want it to start %q and say incomplete", i, warnings[i], w)
				}
			}
			// Reading made room: the next arrivals are kept again.
			serve(s, `{"id":"later"}`)
			if got, n := s.Arrivals(next); len(got) != 1 || got[0].ID != "later" || n != next+1 {
				t.Errorf("Arrivals(%d) after one more post = %v, %d, want [later], %d", next, got, n, next+1)
			}
		})
	}
}

// TestArrivalsGap: arrivals not kept leave a gap the reader can count
// (next − since − len), and the ones kept keep their order, time and
// status.
func TestArrivalsGap(t *testing.T) {
	s := built(t, Options{ID: IDRule{JSON: "id"}})
	s.ledger.log.max = 2
	_, next := s.Arrivals(0)
	for _, id := range []string{"a", "b", "c", "d"} {
		serve(s, fmt.Sprintf(`{"id":%q}`, id))
	}
	got, n := s.Arrivals(next)
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
		if a.Status != http.StatusOK || a.At.Before(s.start) {
			t.Errorf("arrival %+v: want status 200 and At after the start", a)
		}
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" || n-next-len(got) != 2 {
		t.Errorf("Arrivals(%d) = %v, next %d, want [a b] and a gap of 2 (-want +got):\n%s", next, ids, n, diff)
	}
}

func TestMaxIDsValidation(t *testing.T) {
	if _, err := build(Options{MaxIDs: -1}); err == nil || !strings.Contains(err.Error(), "max_ids") {
		t.Errorf("build(MaxIDs: -1) = %v, want a max_ids error", err)
	}
}
