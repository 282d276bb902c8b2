package delivery

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/sink"
)

// fakeSink hands out arrivals appended by the test.
// The tests of a ledger over it run on a fake clock (testing/synctest):
// an arrival 1.2 s into a drain takes no time, and lands where it is meant.
type fakeSink struct {
	mu       sync.Mutex
	arrivals []sink.Arrival
}

func (f *fakeSink) add(a ...sink.Arrival) {
	f.mu.Lock()
	f.arrivals = append(f.arrivals, a...)
	f.mu.Unlock()
}

func (f *fakeSink) Arrivals(since int) ([]sink.Arrival, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if since >= len(f.arrivals) {
		return nil, len(f.arrivals)
	}
	return append([]sink.Arrival(nil), f.arrivals[since:]...), len(f.arrivals)
}

func TestLedger(t *testing.T) { synctest.Test(t, testLedger) }

func testLedger(t *testing.T) {
	t0 := time.Now()
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	// An arrival before its Expect (a fast target) still matches.
	f.add(sink.Arrival{ID: "a", At: t0.Add(30 * time.Millisecond), Status: 200})
	l.Poll()
	l.Expect(0, "a", t0, 0)
	l.Expect(0, "b", t0, 0)
	l.Expect(0, "c", t0, 1)
	l.Expect(0, "w", t0, -1) // warm-up: not counted
	l.Reject(0, 0)
	f.add(
		sink.Arrival{ID: "b", At: t0.Add(50 * time.Millisecond), Status: 429}, // refused: not delivered
		sink.Arrival{ID: "b", At: t0.Add(80 * time.Millisecond), Status: 200},
		sink.Arrival{ID: "b", At: t0.Add(90 * time.Millisecond), Status: 200}, // a duplicate
		sink.Arrival{ID: "zz", At: t0, Status: 200},                           // never expected
	)
	l.Poll()
	s0 := l.Step(0, time.Now())
	if s0.Expected != 2 || s0.Delivered != 2 || s0.Duplicates != 1 || s0.Lost != 0 || s0.Rejected != 1 {
		t.Errorf("step 0 = %+v, want 2 expected, 2 delivered, 1 duplicate, 1 rejected", s0)
	}
	if s0.Latency.Max < 79 || s0.Latency.Max > 81 {
		t.Errorf("max latency = %v ms, want 80 (the first accepted arrival of b)", s0.Latency.Max)
	}
	run := l.Step(-1, time.Now())
	if run.Expected != 3 || run.Lost != 0 || run.Undelivered != 1 || len(run.LostIDs) != 1 || run.LostIDs[0] != "c" {
		t.Errorf("run = %+v, want c undelivered (not lost before the drain)", run)
	}
	// c arrives during the drain.
	go func() {
		time.Sleep(100 * time.Millisecond)
		f.add(sink.Arrival{ID: "c", At: time.Now(), Status: 200})
	}()
	stop := time.Now()
	if d, complete := l.Drain(context.Background(), stop, 2*time.Second, time.Second, nil); !complete || d < 90*time.Millisecond || d > time.Second {
		t.Errorf("drain = %v, complete %v; want ≈ 100ms, complete", d, complete)
	}
	series := l.Series(t0, time.Now())
	if len(series) == 0 || series[0].Arrived < 2 {
		t.Errorf("series = %+v", series)
	}
}

// A drain that runs out while deliveries are still arriving is not
// complete, and the ids still missing are undelivered, not lost: a queue
// that is still draining has not lost them.
func TestDrainIncomplete(t *testing.T) { synctest.Test(t, testDrainIncomplete) }

func testDrainIncomplete(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	const n = 100
	for i := range n {
		l.Expect(0, fmt.Sprint(i), t0, 0)
	}
	done := make(chan struct{})
	go func() { // one delivery every 20 ms: 2 s for all, longer than the drain
		defer close(done)
		for i := range n {
			f.add(sink.Arrival{ID: fmt.Sprint(i), At: time.Now(), Status: 200})
			time.Sleep(20 * time.Millisecond)
			if time.Since(t0) > 600*time.Millisecond {
				return
			}
		}
	}()
	d, complete := l.Drain(context.Background(), t0, 400*time.Millisecond, 200*time.Millisecond, nil)
	<-done
	fig := l.Step(-1, time.Now())
	if complete || d < 400*time.Millisecond {
		t.Errorf("drain = %v, complete %v; want the whole 400ms, incomplete", d, complete)
	}
	if fig.Lost != 0 || fig.Undelivered == 0 || fig.Delivered+fig.Undelivered != n {
		t.Errorf("figures = %+v; want none lost, the missing undelivered", fig)
	}
}

// A drain that saw nothing arrive for its quiet period before it ended is
// complete: the ids still missing are lost.
func TestDrainQuietProvesLost(t *testing.T) { synctest.Test(t, testDrainQuietProvesLost) }

func testDrainQuietProvesLost(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	l.Expect(0, "a", t0, 0)
	l.Expect(0, "b", t0, 0)
	f.add(sink.Arrival{ID: "a", At: time.Now(), Status: 200})
	_, complete := l.Drain(context.Background(), t0, 300*time.Millisecond, 100*time.Millisecond, nil)
	if fig := l.Step(0, time.Now()); !complete || fig.Lost != 1 || fig.Undelivered != 0 || fig.LostIDs[0] != "b" {
		t.Errorf("complete %v, figures %+v; want complete, b lost", complete, fig)
	}
}

// The delivery latency runs from the iteration's intended start, and a
// delivery that arrived before its own request was answered (a target
// that posts first, then answers) is measured as it was, never as zero.
func TestDeliveryLatencyFromIntendedStart(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	intended := time.Now().Add(-100 * time.Millisecond)
	f.add(sink.Arrival{ID: "a", At: intended.Add(40 * time.Millisecond), Status: 200})
	l.Poll() // arrives before the ledger hears of it
	l.Expect(0, "a", intended, 0)
	l.Poll()
	if lat := l.Step(0, time.Now()).Latency; lat.P50 < 39 || lat.P50 > 41 {
		t.Errorf("latency p50 = %v ms, want 40", lat.P50)
	}
}

// Settle returns as soon as the backlog has cleared, and stops waiting when
// arrivals stop making progress (the rest are lost) or at its timeout.
func TestSettle(t *testing.T) { synctest.Test(t, testSettle) }

func testSettle(t *testing.T) {
	ctx := context.Background()
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	l.Expect(0, "a", t0, 0)
	l.Expect(0, "b", t0, 0)
	l.Expect(0, "w", t0, -1) // warm-up: not waited for
	go func() {
		time.Sleep(100 * time.Millisecond)
		f.add(sink.Arrival{ID: "a", At: time.Now(), Status: 200})
		time.Sleep(100 * time.Millisecond)
		f.add(sink.Arrival{ID: "b", At: time.Now(), Status: 200})
	}()
	if d, missing := l.Settle(ctx, time.Second, 5*time.Second); missing != 0 || d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("Settle = %v, %d missing; want ≈ 200ms, 0 missing", d, missing)
	}
	// c is lost: Settle gives up after quiet without progress.
	l.Expect(0, "c", t0, 1)
	if d, missing := l.Settle(ctx, 200*time.Millisecond, 5*time.Second); missing != 1 || d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("Settle with c lost = %v, %d missing; want ≈ 200ms, 1 missing", d, missing)
	}
	if d, missing := l.Settle(ctx, time.Hour, 150*time.Millisecond); missing != 1 || d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("Settle at its timeout = %v, %d missing; want ≈ 150ms, 1 missing", d, missing)
	}
}

// gappySource keeps only every other arrival, as a sink whose unread log
// is full does.
type gappySource struct{ fakeSink }

func (g *gappySource) Arrivals(since int) ([]sink.Arrival, int) {
	all, next := g.fakeSink.Arrivals(since)
	var kept []sink.Arrival
	for i, a := range all {
		if (since+i)%2 == 0 {
			kept = append(kept, a)
		}
	}
	return kept, next
}

// Arrivals a source did not keep are counted as missed, in every figure,
// so that lost is never silently wrong.
func TestLedgerMissed(t *testing.T) {
	t0 := time.Now()
	g := &gappySource{}
	l := New([]string{"slack"}, []Source{g})
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		l.Expect(0, id, t0, i%2)
		g.add(sink.Arrival{ID: id, At: t0.Add(time.Millisecond), Status: 200})
	}
	l.Poll()
	for _, tc := range []struct {
		step                         int
		expected, delivered, missing int64
	}{
		{-1, 5, 3, 2},
		{0, 3, 3, 2}, // a, c, e arrived; the 2 missed are the run's, whatever the step
		{1, 2, 0, 2},
	} {
		f := l.Step(tc.step, time.Now())
		if f.Expected != tc.expected || f.Delivered != tc.delivered || f.Missed != tc.missing {
			t.Errorf("Step(%d) = %d expected, %d delivered, %d missed; want %d, %d, %d",
				tc.step, f.Expected, f.Delivered, f.Missed, tc.expected, tc.delivered, tc.missing)
		}
	}
}

// TestLedgerOverSink reads a real sink: New makes the ledger its reader,
// so more arrivals than a sink keeps for nobody (4096) wait for the first
// poll without any being missed.
func TestLedgerOverSink(t *testing.T) {
	const n = 5000
	s, err := sink.Start(sink.Options{ID: sink.IDRule{JSON: "id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	l := New([]string{"hook"}, []Source{s})
	t0 := time.Now()
	for i := range n {
		id := fmt.Sprintf("m-%d", i)
		l.Expect(0, id, t0, 0)
		resp, err := c.Post(s.URL()+"/hook", "application/json", strings.NewReader(`{"id":"`+id+`"}`))
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	l.Poll()
	if f := l.Step(0, time.Now()); f.Expected != n || f.Delivered != n || f.Lost != 0 || f.Missed != 0 {
		t.Errorf("Step(0) = %d expected, %d delivered, %d lost, %d missed; want %d, %d, 0, 0",
			f.Expected, f.Delivered, f.Lost, f.Missed, n, n)
	}
}

// A drain of 0, or one cut short before its quiet period passed, proves
// nothing lost: the missing ids are undelivered (nothing had arrived yet
// is not evidence either).
func TestDrainTooShortProvesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
	}{{"drain 0", 0, false}, {"interrupted at once", time.Minute, true}} {
		f := &fakeSink{}
		l := New([]string{"slack"}, []Source{f})
		l.Expect(0, "a", time.Now(), 0)
		ctx, cancel := context.WithCancel(context.Background())
		if tc.cancel {
			cancel()
		}
		_, complete := l.Drain(ctx, time.Now(), tc.timeout, QuietFor(tc.timeout), nil)
		cancel()
		if fig := l.Step(0, time.Now()); complete || fig.Lost != 0 || fig.Undelivered != 1 {
			t.Errorf("%s: complete %v, %+v; want incomplete, a undelivered", tc.name, complete, fig)
		}
	}
}

// An id still missing counts in the latency at its wait so far, so a
// percentile the missing ids reach is a lower bound with no upper bound,
// while one below them stays exact: 60 of 100 ids delivered after 10 ms
// and 40 missing 5 s after they were sent give p50 10 ms (exact: the
// missing rank above it) and p99 ≥ 5 s (it read 10 ms, the figure of the
// ids that made it).
func TestMissingIDsAreCensoredSamples(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	for i := range 100 {
		id := fmt.Sprint(i)
		l.Expect(0, id, t0, 0)
		if i < 60 {
			f.add(sink.Arrival{ID: id, At: t0.Add(10 * time.Millisecond), Status: 200})
		}
	}
	l.Poll()
	fig := l.Step(0, t0.Add(5*time.Second))
	if fig.Delivered != 60 || fig.Undelivered != 40 {
		t.Fatalf("figures = %+v, want 60 delivered, 40 undelivered", fig)
	}
	near := func(got, want float64) bool { return got >= 0.99*want && got <= 1.01*want }
	if lat := fig.Latency; !near(lat.P50, 10) || !near(lat.P99, 5000) || !near(lat.Max, 5000) {
		t.Errorf("latency = %+v, want p50 10 ms, p99 and max 5 s (the missing ids' wait)", lat)
	}
	if up, ok := fig.Upper["p50"]; !ok || up != fig.Latency.P50 {
		t.Errorf("upper p50 = %v (%v), want %v: exact", up, ok, fig.Latency.P50)
	}
	for _, p := range []string{"p90", "p95", "p99", "p999"} {
		if up, ok := fig.Upper[p]; ok {
			t.Errorf("upper %s = %v, want none: its rank falls among the missing ids", p, up)
		}
	}
	l.Expect(0, "late", t0, 1)
	f.add(sink.Arrival{ID: "late", At: t0.Add(time.Second), Status: 200})
	l.Poll()
	if got := l.Step(1, time.Now()); got.Upper != nil || got.Latency.P99 < 990 || got.Latency.P99 > 1010 {
		t.Errorf("step 1 = %+v, want its one id's 1 s latency, exact (no upper bounds)", got)
	}
}

// The ids in flight when a step ends (sent in its last milliseconds) make
// no percentile unknown when the rest arrived before them: 990 ids
// delivered after 50 ms and 10 sent 5 ms before the step's end give p99
// 50 ms, exact (its upper bound equal), not a lower bound a delivery
// latency threshold could not pass on.
func TestInFlightTailKeepsPercentilesBounded(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	end := t0.Add(time.Second)
	for i := range 1000 {
		id := fmt.Sprint(i)
		if i < 990 {
			l.Expect(0, id, t0, 0)
			f.add(sink.Arrival{ID: id, At: t0.Add(50 * time.Millisecond), Status: 200})
		} else {
			l.Expect(0, id, end.Add(-5*time.Millisecond), 0)
		}
	}
	l.Poll()
	fig := l.Step(0, end)
	if p99, up := fig.Latency.P99, fig.Upper["p99"]; p99 < 49 || p99 > 51 || up != p99 {
		t.Errorf("p99 %v, upper %v; want 50 ms, exact", p99, up)
	}
	if _, ok := fig.Upper["p999"]; ok {
		t.Errorf("upper p999 = %v, want none: rank 1000 of 1000 is a missing id's", fig.Upper["p999"])
	}
}

// Now counts a step's ids and the whole backlog as they arrive, and
// Backlog reads the queue at a past moment back from the send and arrival
// times: a warm-up id and step 0's ids queue, and each arrival takes one
// off at its own time.
func TestBacklogAndNow(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	l.Expect(0, "w", t0, -1)
	for i := range 4 {
		l.Expect(0, fmt.Sprint(i), t0.Add(time.Duration(i+1)*time.Second), 0)
	}
	f.add(sink.Arrival{ID: "w", At: t0.Add(1500 * time.Millisecond), Status: 200},
		sink.Arrival{ID: "0", At: t0.Add(2500 * time.Millisecond), Status: 200})
	if got, want := l.Now(0), (Count{Expected: 4, Delivered: 1, Backlog: 3}); got != want {
		t.Errorf("Now(0) = %+v, want %+v", got, want)
	}
	if got, want := l.Now(-1), (Count{Expected: 1, Delivered: 1, Backlog: 3}); got != want {
		t.Errorf("Now(-1) = %+v, want %+v", got, want)
	}
	// at 0.5 s: w sent; 1.2 s: w, 0; 2.2 s: 0, 1 (w arrived); 5 s: 1, 2, 3
	times := []time.Time{t0.Add(500 * time.Millisecond), t0.Add(1200 * time.Millisecond), t0.Add(2200 * time.Millisecond), t0.Add(5 * time.Second)}
	// and their waits: 0.5; 1.2 + 0.2; 1.2 + 0.2; 3 + 2 + 1 seconds.
	n, wait := l.Backlog(times...)
	if want := []int64{1, 2, 2, 3}; !slices.Equal(n, want) {
		t.Errorf("Backlog = %v, want %v", n, want)
	}
	for i, want := range []float64{0.5, 1.4, 1.4, 6} {
		if math.Abs(wait[i]-want) > 1e-9 {
			t.Errorf("Backlog's waits = %v, want %v at %d", wait, want, i)
		}
	}
}

// A drain says how it stands about once a second: the time since the load
// stopped, of its timeout, and the ids still missing.
func TestDrainTellsHowItStands(t *testing.T) { synctest.Test(t, testDrainTellsHowItStands) }

func testDrainTellsHowItStands(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	l.Expect(0, "a", t0, 0)
	l.Expect(0, "b", t0, 0)
	go func() {
		time.Sleep(1200 * time.Millisecond)
		f.add(sink.Arrival{ID: "a", At: time.Now(), Status: 200})
	}()
	var told []Draining
	l.Drain(context.Background(), t0, 2500*time.Millisecond, time.Minute, func(d Draining) { told = append(told, d) })
	if len(told) < 1 || len(told) > 3 {
		t.Fatalf("told %d times in a 2.5 s drain, want about 2: %+v", len(told), told)
	}
	first, last := told[0], told[len(told)-1]
	if first.Elapsed < time.Second || first.Timeout != 2500*time.Millisecond || first.Missing != 2 || first.Arrived != 0 {
		t.Errorf("first = %+v, want ≥ 1 s of 2.5 s, 2 missing, none arrived", first)
	}
	if len(told) > 1 && (last.Missing != 1 || last.Arrived != 1) {
		t.Errorf("last = %+v, want 1 missing, 1 arrived", last)
	}
}

// Await waits until each of the step's ids has arrived or waited as long
// as asked, not for the whole deadline; DeliveredBy counts the step's ids
// by their first arrival's time, however late they were read.
func TestAwaitAndDeliveredBy(t *testing.T) { synctest.Test(t, testAwaitAndDeliveredBy) }

func testAwaitAndDeliveredBy(t *testing.T) {
	f := &fakeSink{}
	l := New([]string{"slack"}, []Source{f})
	t0 := time.Now()
	l.Expect(0, "a", t0, 0)
	l.Expect(0, "b", t0, 0)
	l.Expect(0, "c", t0, 1) // another step: not awaited
	f.add(sink.Arrival{ID: "a", At: t0.Add(10 * time.Millisecond), Status: 200})
	l.Await(context.Background(), 0, 300*time.Millisecond, t0.Add(5*time.Second))
	if took := time.Since(t0); took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("Await took %v, want about 300ms: b waited that long, c is another step's", took)
	}
	f.add(sink.Arrival{ID: "b", At: t0.Add(400 * time.Millisecond), Status: 200})
	start := time.Now()
	l.Await(context.Background(), 0, time.Hour, start.Add(5*time.Second))
	if took := time.Since(start); took > time.Second {
		t.Errorf("Await with every id arrived took %v, want at once", took)
	}
	if got := []int64{l.DeliveredBy(0, t0), l.DeliveredBy(0, t0.Add(100*time.Millisecond)), l.DeliveredBy(0, t0.Add(time.Second)), l.DeliveredBy(1, t0.Add(time.Second))}; !slices.Equal(got, []int64{0, 1, 2, 0}) {
		t.Errorf("DeliveredBy = %v, want [0 1 2 0]", got)
	}
}
