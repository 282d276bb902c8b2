package load

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/httpx"
)

// loopRunner is a runner of one GET to url whose steps run on the event
// loop (off: on goroutines), with a real clock: these tests time a real
// server on loopback.
func loopRunner(t *testing.T, url string, off bool, mod func(*Config)) *Runner {
	t.Helper()
	hc := httpx.Config{Timeout: 5 * time.Second}
	ex := httpx.New(hc)
	t.Cleanup(ex.Close)
	cfg := Config{Exchanger: ex, Scenarios: compiled(t, plan.Scenario{Request: plan.Request{URL: url}}), Timeout: hc.Timeout, PreciseTimer: true}
	if !off {
		lp, err := httpx.NewLoop(hc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lp.Close)
		cfg.Loop = lp
	}
	if mod != nil {
		mod(&cfg)
	}
	r := NewRunner(cfg)
	t.Cleanup(r.Close)
	return r
}

// sleepServer answers after delay(time since it started).
func sleepServer(t *testing.T, delay func(time.Duration) time.Duration) string {
	t.Helper()
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := time.NewTimer(delay(time.Since(start)))
		defer d.Stop()
		select {
		case <-d.C:
		case <-r.Context().Done(): // the client gave up: the test's end need not wait for this answer
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// busy skips a test whose step the generator could not run on time: a
// shared machine, not the loop, made it late.
func busy(t *testing.T, res *Result) {
	t.Helper()
	if res.Total.MaxLag > 50*time.Millisecond {
		t.Skipf("the machine is busy: an arrival started %v late", res.Total.MaxLag)
	}
}

// asUsers has the loop drive virtual users (scenario.Set.OnLoop) rather
// than send one fixed request: the GET's URL is a template.
func asUsers(t *testing.T, url string) func(*Config) {
	return func(c *Config) {
		c.Scenarios = compiled(t, plan.Scenario{Request: plan.Request{URL: url + "/?n={{seq}}"}})
	}
}

// engines runs test once with each of the loop's ways to send, the fixed
// request itself and virtual users rendering it, on one loop and on two
// (each a lane of the step, on a thread of its own): every honesty test
// holds on as many loops as a machine has cores. The quick set runs two
// of the four (a fixed request on one loop, users on two), the long set
// (-tags long, which CI runs) all four, one after the other: each test
// must have the machine's cores to itself.
func engines(t *testing.T, test func(t *testing.T, e engineCase)) {
	for _, loops := range []int{1, 2} {
		for _, users := range []bool{false, true} {
			if !longTests && users != (loops == 2) {
				continue // the quick set: a fixed request on one loop, users on two
			}
			e := engineCase{users: users, loops: loops}
			t.Run(fmt.Sprintf("%s/%d loops", map[bool]string{false: "fixed", true: "users"}[users], loops), func(t *testing.T) {
				t.Parallel()
				test(t, e)
			})
		}
	}
}

// engineCase is one of engines' ways to send.
type engineCase struct {
	users bool
	loops int
}

// on is the runner's config for the loop's way to send.
func on(t *testing.T, url string, e engineCase, mod func(*Config)) func(*Config) {
	return func(c *Config) {
		if e.users {
			asUsers(t, url)(c)
		}
		for range e.loops - 1 {
			lp, err := httpx.NewLoop(httpx.Config{Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(lp.Close)
			c.MoreLoops = append(c.MoreLoops, lp)
		}
		if mod != nil {
			mod(c)
		}
	}
}

// The loop sends exactly the schedule and times each exchange from its
// intended start: 20 ms answers read 20 ms, sent as fixed requests or by
// virtual users.
func TestLoopOpenExactRateAnd20ms(t *testing.T) {
	t.Parallel()
	engines(t, testLoopOpenExactRateAnd20ms)
}

func testLoopOpenExactRateAnd20ms(t *testing.T, e engineCase) {
	url := sleepServer(t, func(time.Duration) time.Duration { return 20 * time.Millisecond })
	r := loopRunner(t, url, false, on(t, url, e, nil))
	st, want := Step{Rate: 200, Warmup: 500 * time.Millisecond, Length: 2 * time.Second}, int64(400)
	if !longTests {
		st.Warmup, st.Length, want = 200*time.Millisecond, time.Second, 200
	}
	if !r.UsesLoop(st) || r.fixedStep(st) == e.users {
		t.Fatalf("on the loop %v, as fixed requests %v; want true, %v", r.UsesLoop(st), r.fixedStep(st), !e.users)
	}
	res := r.Run(context.Background(), st)
	// An arrival due in the window's last moments is not sent when the
	// loop's thread wakes after the window's end, as on a machine whose
	// other tests took the core just then (seen once, 199 sent and 1 not):
	// once, the step is run again; twice, the loop drops arrivals.
	if res.NotSent > 0 && res.Sent+res.NotSent == want {
		t.Logf("sent %d, not sent %d (max lag %v): a busy moment at the window's end? once more", res.Sent, res.NotSent, res.Total.MaxLag)
		res = r.Run(context.Background(), st)
	}
	if res.Sent != want || res.Started != want || res.NotSent != 0 || res.Total.Completed() != want || res.Total.OK() != want {
		t.Fatalf("sent %d, started %d, not sent %d, completed %d, ok %d; want %d, %[6]d, 0, %[6]d, %[6]d",
			res.Sent, res.Started, res.NotSent, res.Total.Completed(), res.Total.OK(), want)
	}
	busy(t, res)
	lat := metrics.Summarize(res.Total.Latency)
	if lat.P50 < 20 || lat.P50 > 25 {
		t.Errorf("p50 = %v ms, want 20–25 (a 20 ms answer timed from its intended start)", lat.P50)
	}
	if !near(res.Achieved(), 200, 1) {
		t.Errorf("achieved = %v/s, want 200", res.Achieved())
	}
	if len(res.LaneCPU) != e.loops {
		t.Errorf("%d lanes' CPU, want %d", len(res.LaneCPU), e.loops)
	}
	if res.Workers < 4 || res.Workers > 40 {
		t.Errorf("connections = %d, want about 200/s × 20 ms = 4", res.Workers)
	}
}

// A server that stalls for 1 s (half a second in the quick set): the loop
// keeps sending on schedule, every arrival during the stall waits for its
// end, and the p99 shows it.
func TestLoopOpenStallShowsInP99(t *testing.T) {
	t.Parallel()
	engines(t, testLoopOpenStallShowsInP99)
}

func testLoopOpenStallShowsInP99(t *testing.T, e engineCase) {
	stallFrom, stall := 1500*time.Millisecond, time.Second
	st, want := Step{Rate: 100, Warmup: 500 * time.Millisecond, Length: 3 * time.Second}, int64(300)
	if !longTests {
		stallFrom, stall = 700*time.Millisecond, 500*time.Millisecond
		st.Warmup, st.Length, want = 200*time.Millisecond, 1500*time.Millisecond, 150
	}
	url := sleepServer(t, func(now time.Duration) time.Duration {
		if stallTo := stallFrom + stall; now >= stallFrom && now < stallTo {
			return stallTo - now
		}
		return 2 * time.Millisecond
	})
	r := loopRunner(t, url, false, on(t, url, e, nil))
	res := r.Run(context.Background(), st)
	if res.Total.Completed() != want {
		t.Errorf("completed = %d, want %d: the stall must not thin the schedule", res.Total.Completed(), want)
	}
	busy(t, res)
	lat := metrics.Summarize(res.Total.Latency)
	if ms := float64(stall.Milliseconds()); lat.P99 < 0.9*ms || lat.P99 > 1.1*ms {
		t.Errorf("p99 = %v ms, want ≈ %v (the stall)", lat.P99, ms)
	}
	if lat.P50 > 20 {
		t.Errorf("p50 = %v ms, want ≈ 2", lat.P50)
	}
}

// Past the connection cap arrivals queue: they are late, and their
// latency, from the intended start, holds the wait.
func TestLoopOpenCapMakesLateArrivals(t *testing.T) {
	t.Parallel()
	engines(t, testLoopOpenCapMakesLateArrivals)
}

func testLoopOpenCapMakesLateArrivals(t *testing.T, e engineCase) {
	url := sleepServer(t, func(time.Duration) time.Duration { return 100 * time.Millisecond })
	r := loopRunner(t, url, false, on(t, url, e, func(c *Config) { c.MaxWorkers = 5 })) // 50/s capacity
	// 100/s against 50/s: the queue grows by 50 arrivals a second, and the
	// last arrival waits about half the step.
	length, want := 2*time.Second, 200
	if !longTests {
		length, want = time.Second, 100
	}
	res := r.Run(context.Background(), Step{Rate: 100, Length: length})
	if res.Workers != 5 {
		t.Errorf("connections = %d, want 5", res.Workers)
	}
	if res.Total.Late < int64(want/4) || res.Total.MaxLag < length/4 {
		t.Errorf("late = %d, max lag %v; want most of %d, ≥ %v", res.Total.Late, res.Total.MaxLag, want, length/4)
	}
	if res.NotSent < int64(want/4) || res.Sent+res.NotSent != int64(want) {
		t.Errorf("sent %d + not sent %d, want %d with about half not sent", res.Sent, res.NotSent, want)
	}
}

// The connections the process can open (MaxConns) cap the loop's
// connections as MaxWorkers does, and the step says they held it.
func TestLoopOpenConnCapSaysSo(t *testing.T) {
	t.Parallel()
	url := sleepServer(t, func(time.Duration) time.Duration { return 100 * time.Millisecond })
	r := loopRunner(t, url, false, func(c *Config) { c.MaxConns = 5 })
	res := r.Run(context.Background(), Step{Rate: 100, Length: time.Second})
	if res.Workers != 5 || res.Total.Late < 25 || res.ConnLimit != 5 {
		t.Errorf("connections %d, late %d, conn limit %d; want 5, most of 100, 5", res.Workers, res.Total.Late, res.ConnLimit)
	}
}

// Closed model on the loop: each user's next request follows its last
// answer; 10 users at 10 ms make about 1000/s.
func TestLoopClosedUsers(t *testing.T) {
	t.Parallel()
	url := sleepServer(t, func(time.Duration) time.Duration { return 10 * time.Millisecond })
	r := loopRunner(t, url, false, nil)
	st := Step{VUs: 10, Length: time.Second}
	if !r.UsesLoop(st) {
		t.Fatal("a closed step of one fixed GET does not run on the loop")
	}
	res := r.Run(context.Background(), st)
	if res.Workers != 10 || res.Total.Failed() != 0 {
		t.Fatalf("users %d, failed %d; want 10, 0", res.Workers, res.Total.Failed())
	}
	if tp := res.Throughput(); tp < 400 || tp > 1000 {
		t.Errorf("throughput = %v/s, want ≤ 1000 and not far under it", tp)
	}
	if lat := metrics.Summarize(res.Total.Latency); lat.P50 < 10 || lat.P50 > 20 {
		t.Errorf("p50 = %v ms, want ≈ 10", lat.P50)
	}
	if !loopRunner(t, url, false, func(c *Config) { c.Think = time.Millisecond }).UsesLoop(st) {
		t.Error("users that think do not run on the loop (as virtual users, see TestLoopUsersThink)")
	}
}

// An answer that never comes ends as a timeout at the transport's timeout;
// a stopped run gives up on what is in flight within the grace.
func TestLoopTimeoutAndInterrupt(t *testing.T) {
	t.Parallel()
	url := sleepServer(t, func(time.Duration) time.Duration { return 1500 * time.Millisecond })
	r := loopRunner(t, url, false, func(c *Config) { c.Timeout = 300 * time.Millisecond; c.Grace = 200 * time.Millisecond })
	res := r.Run(context.Background(), Step{Rate: 20, Length: 500 * time.Millisecond})
	if got := res.Total.Kinds[transport.Timeout]; got != 10 || res.Total.Completed() != 10 {
		t.Errorf("timeouts %d of %d, want 10 of 10", got, res.Total.Completed())
	}
	r2 := loopRunner(t, url, false, func(c *Config) { c.Grace = 200 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res = r2.Run(ctx, Step{Rate: 20, Length: 10 * time.Second})
	if d := time.Since(start); d > 2*time.Second || !res.Interrupted {
		t.Errorf("an interrupted step returned after %v (interrupted %v), want within the grace", d, res.Interrupted)
	}
}

// The loop and the goroutines measure the same server alike. The quick set
// leaves it to TestEnginesAgree, whose fixed request is this comparison
// with every counter besides.
func TestLoopMatchesGoroutines(t *testing.T) {
	t.Parallel()
	if !longTests {
		t.Skip("a long test (TestEnginesAgree compares the engines in the quick set): go test -tags long runs it")
	}
	url := sleepServer(t, func(time.Duration) time.Duration { return 5 * time.Millisecond })
	var p50 [2]float64
	for i, off := range []bool{false, true} {
		r := loopRunner(t, url, off, nil)
		res := r.Run(context.Background(), Step{Rate: 300, Length: time.Second})
		if res.Sent != 300 || res.Total.OK() != 300 {
			t.Fatalf("off %v: sent %d, ok %d; want 300, 300", off, res.Sent, res.Total.OK())
		}
		busy(t, res)
		p50[i] = metrics.Summarize(res.Total.Latency).P50
	}
	if !near(p50[0], p50[1], 2) {
		t.Errorf("p50 on the loop %v ms, on goroutines %v ms: want within 2 ms", p50[0], p50[1])
	}
}

// Above PreciseBelow the loop wakes every half millisecond and reads every
// answer that came, timed when the kernel received it: the schedule holds
// and 20 ms answers still read 20 ms.
func TestLoopCoarseWakes(t *testing.T) {
	t.Parallel()
	if raceOn {
		t.Skip("at 2100/s the race detector slows this test's own server past its 20 ms")
	}
	url := sleepServer(t, func(time.Duration) time.Duration { return 20 * time.Millisecond })
	r := loopRunner(t, url, false, nil)
	res := r.Run(context.Background(), Step{Rate: 2100, Warmup: 200 * time.Millisecond, Length: time.Second})
	if res.Sent+res.NotSent != 2100 || res.Total.OK() != res.Sent {
		t.Fatalf("sent %d, ok %d, not sent %d; want 2100 in all, all ok", res.Sent, res.Total.OK(), res.NotSent)
	}
	// Arrivals due in the window's last moments are not sent when the
	// machine wakes the loop after the window's end (as on goroutines):
	// counted, not lost; more than a few means the generator fell behind.
	if res.NotSent > 5 {
		t.Skipf("the generator fell behind (%d arrivals not sent): a busy machine, or the race detector", res.NotSent)
	}
	busy(t, res)
	if lat := metrics.Summarize(res.Total.Latency); lat.P50 < 20 || lat.P50 > 23 {
		t.Errorf("p50 = %v ms, want 20–23", lat.P50)
	}
}

// The open loop wakes about every fifth arrival, within a quarter of a
// millisecond and one.
func TestCoarsePeriod(t *testing.T) {
	for _, tc := range []struct {
		peak float64
		want time.Duration
	}{
		{0, time.Millisecond},
		{2500, time.Millisecond},
		{5000, time.Millisecond},
		{7500, 666666 * time.Nanosecond},
		{10000, 500 * time.Microsecond},
		{12500, 400 * time.Microsecond},
		{20000, 250 * time.Microsecond},
		{100000, 250 * time.Microsecond},
	} {
		if got := coarsePeriod(tc.peak); got != tc.want {
			t.Errorf("coarsePeriod(%v) = %v, want %v", tc.peak, got, tc.want)
		}
	}
}

// An overdriven step against a target whose accept queue is full (it
// never accepts; the kernel drops the handshakes past one) ends on time:
// nothing is sent after its window (the largest lag is under the step),
// the loop returns within the step, the timeout and a second, and the
// handshakes never answered are connect failures, not timeouts.
func TestLoopOverdrivenStepEndsOnTime(t *testing.T) {
	t.Parallel()
	url := "http://" + testkit.FullBacklog(t) + "/"
	hc := httpx.Config{Timeout: 500 * time.Millisecond}
	lp, err := httpx.NewLoop(hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lp.Close)
	ex := httpx.New(hc)
	t.Cleanup(ex.Close)
	// Thousands of connections where the descriptor limit allows: the
	// storm of connects that made a loop late; 400 elsewhere.
	conns := 400
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur >= 12000 {
		conns = 8000
	}
	r := NewRunner(Config{Exchanger: ex, Loop: lp, Scenarios: compiled(t, plan.Scenario{Request: plan.Request{URL: url}}),
		Timeout: hc.Timeout, Grace: 2 * time.Second, MaxConns: conns})
	t.Cleanup(r.Close)
	const length = time.Second
	start := time.Now()
	res := r.Run(context.Background(), Step{Rate: 50000, Length: length})
	took := time.Since(start)
	if took > length+hc.Timeout+time.Second {
		t.Errorf("the step took %v, want at most %v", took, length+hc.Timeout+time.Second)
	}
	if res.Total.MaxLag >= length {
		t.Errorf("max lag %v: an exchange started after its window (%v)", res.Total.MaxLag, length)
	}
	if res.Total.Kinds[transport.Connect] == 0 || res.Total.Kinds[transport.Connect] < res.Total.Kinds[transport.Timeout] {
		t.Errorf("classes %v: want the unmade connections as connect, most of them", res.Total.Kinds)
	}
	if res.Sent+res.NotSent != 50000 || res.NotSent == 0 {
		t.Errorf("sent %d, not sent %d: want 50000 in all, most never sent", res.Sent, res.NotSent)
	}
}

// Two loops share a step evenly, in both models: each ends within 10 % of
// half its exchanges, and their counts add up to the step's.
func TestLoopsShareTheWork(t *testing.T) {
	t.Parallel()
	url := sleepServer(t, func(time.Duration) time.Duration { return 5 * time.Millisecond })
	for _, st := range []Step{{Rate: 400, Length: 500 * time.Millisecond}, {VUs: 8, Length: 500 * time.Millisecond}} {
		r := loopRunner(t, url, false, on(t, url, engineCase{loops: 2}, nil))
		res := r.Run(context.Background(), st)
		if len(res.LaneExchanges) != 2 {
			t.Fatalf("%+v: %d lanes, want 2", st, len(res.LaneExchanges))
		}
		a, b := res.LaneExchanges[0], res.LaneExchanges[1]
		half := float64(a+b) / 2
		if math.Abs(float64(a)-half) > 0.1*half || a+b < res.Total.Completed() {
			t.Errorf("%+v: the lanes ended %d and %d exchanges (the step counted %d); want each within 10 %% of half", st, a, b, res.Total.Completed())
		}
	}
}
