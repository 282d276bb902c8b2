package load

import (
	"context"
	"flag"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.uber.org/goleak"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/schedule"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// TestMain lets four of the parallel tests run at once, for they wait on
// short steps of loopback load more than they compute
// (testkit.ParallelWaits), and gives the scheduler a processor more than
// their event loops (up to two a test), each of which holds one while it
// waits in the kernel (testkit.LoopProcs).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.ParallelWaits(4)
	testkit.LoopProcs(2)
	goleak.VerifyTestMain(m)
}

// fake answers after delay(start), with the bubble's fake clock.
type fake struct {
	base  time.Time
	delay func(sinceBase time.Duration) time.Duration
	calls atomic.Int64
}

func (f *fake) Session() transport.Session { return f }
func (f *fake) Close()                     {}
func (f *fake) Do(_ *transport.Request, out *transport.Outcome) {
	f.calls.Add(1)
	time.Sleep(f.delay(time.Since(f.base)))
	*out = transport.Outcome{Kind: transport.OK, Status: 200, BytesIn: 100}
}

func constant(d time.Duration) func(time.Duration) time.Duration {
	return func(time.Duration) time.Duration { return d }
}

// compiled is an open-model plan of the scenarios, validated and compiled.
func compiled(tb testing.TB, scenarios ...plan.Scenario) *scenario.Set {
	tb.Helper()
	p := &plan.Plan{Load: plan.Load{Rates: []float64{1}}, Scenarios: scenarios}
	if err := p.Validate(); err != nil {
		tb.Fatal(err)
	}
	s, err := scenario.Compile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// oneRequest is a plan of one GET, compiled.
func oneRequest(tb testing.TB) *scenario.Set {
	return compiled(tb, plan.Scenario{Request: plan.Request{URL: "http://x.test/"}})
}

func newRunner(t testing.TB, f *fake, mod func(*Config)) *Runner {
	cfg := Config{Exchanger: f, Scenarios: oneRequest(t), Timeout: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	r := NewRunner(cfg)
	f.base = r.Base()
	return r
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestOpenHoldsRateAndMeasures20ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(20 * time.Millisecond)}
		r := newRunner(t, f, nil)
		res := r.Run(context.Background(), Step{Rate: 200, Warmup: time.Second, Length: 3 * time.Second})
		if res.Sent != 600 || res.Total.Completed() != 600 {
			t.Errorf("sent, completed = %d, %d, want 600, 600", res.Sent, res.Total.Completed())
		}
		if got := f.calls.Load(); got != 800 {
			t.Errorf("exchanges = %d, want 800 (200 of warm-up + 600 counted)", got)
		}
		lat := metrics.Summarize(res.Total.Latency)
		if !near(lat.P50, 20, 0.1) || !near(lat.P99, 20, 0.1) {
			t.Errorf("p50, p99 = %v, %v ms, want 20, 20", lat.P50, lat.P99)
		}
		if !near(res.Achieved(), 200, 1) {
			t.Errorf("achieved = %v/s, want 200", res.Achieved())
		}
		if res.Total.Late != 0 {
			t.Errorf("late = %d, want 0", res.Total.Late)
		}
		if len(res.Series) < 3 {
			t.Errorf("series has %d points, want ≥ 3", len(res.Series))
		}
	})
}

// A server that stalls for 1s in the middle of a step: the open model keeps
// sending on schedule, and every arrival during the stall waits for its end,
// so the p99 shows the stall (coordinated omission is not hidden).
func TestOpenStallShowsInP99(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stallFrom, stallTo := 2*time.Second, 3*time.Second
		f := &fake{delay: func(now time.Duration) time.Duration {
			if now >= stallFrom && now < stallTo {
				return stallTo - now
			}
			return 5 * time.Millisecond
		}}
		r := newRunner(t, f, nil)
		res := r.Run(context.Background(), Step{Rate: 100, Warmup: time.Second, Length: 4 * time.Second})
		lat := metrics.Summarize(res.Total.Latency)
		if lat.P99 < 900 || lat.P99 > 1000 {
			t.Errorf("p99 = %v ms, want ≈ 1000 (the stall)", lat.P99)
		}
		if lat.P50 > 10 {
			t.Errorf("p50 = %v ms, want ≈ 5", lat.P50)
		}
		if res.Total.Completed() != 400 {
			t.Errorf("completed = %d, want 400: the stall must not thin the schedule", res.Total.Completed())
		}
	})
}

// Past the worker cap, arrivals wait: they are counted late, and their
// response time includes the wait.
func TestOpenCapMakesLateArrivals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(100 * time.Millisecond)}
		r := newRunner(t, f, func(c *Config) { c.MaxWorkers = 5 }) // 50/s capacity
		res := r.Run(context.Background(), Step{Rate: 100, Length: 2 * time.Second})
		if res.Workers != 5 {
			t.Errorf("workers = %d, want 5", res.Workers)
		}
		if res.Total.Late < 50 {
			t.Errorf("late = %d, want most of 200", res.Total.Late)
		}
		if res.Total.MaxLag < 500*time.Millisecond {
			t.Errorf("max lag = %v, want ≥ 500ms", res.Total.MaxLag)
		}
		lat := metrics.Summarize(res.Total.Latency)
		svc := metrics.Summarize(res.Total.Service)
		if lat.P99 < 1000 || !near(svc.P99, 100, 1) {
			t.Errorf("response p99 = %v ms, service p99 = %v ms; want response ≫ service = 100", lat.P99, svc.P99)
		}
	})
}

// Past the connections the process can open (MaxConns), arrivals wait as
// past the worker cap, and the step says which cap held them (ConnLimit);
// a worker cap does not.
func TestOpenConnCapSaysSo(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		maxWorkers, maxConns int
		want                 int
	}{
		{"held by the connections", 0, 5, 5},
		{"held by the workers", 5, 50, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{delay: constant(100 * time.Millisecond)}
				r := newRunner(t, f, func(c *Config) { c.MaxWorkers, c.MaxConns = tt.maxWorkers, tt.maxConns })
				res := r.Run(context.Background(), Step{Rate: 100, Length: time.Second})
				if res.Workers != 5 || res.Total.Late < 25 || res.ConnLimit != tt.want {
					t.Errorf("workers %d, late %d, conn limit %d; want 5, most of 100, %d", res.Workers, res.Total.Late, res.ConnLimit, tt.want)
				}
			})
		})
	}
}

func TestOpenRamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(time.Millisecond)}
		r := newRunner(t, f, nil)
		st := Step{Ramp: &schedule.Linear{From: 0, To: 200}, Length: 2 * time.Second}
		res := r.Run(context.Background(), st)
		if res.Sent != 200 {
			t.Errorf("sent = %d, want 200 (mean 100/s over 2s)", res.Sent)
		}
		if st.TargetRate() != 100 {
			t.Errorf("TargetRate() = %v, want 100", st.TargetRate())
		}
	})
}

func TestOpenPoisson(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(time.Millisecond)}
		r := newRunner(t, f, func(c *Config) { c.Poisson = true; c.Seed = 3 })
		res := r.Run(context.Background(), Step{Rate: 500, Length: 4 * time.Second})
		if res.Sent < 1850 || res.Sent > 2150 {
			t.Errorf("sent = %d, want 2000 ± 150", res.Sent)
		}
	})
}

func TestClosed10UsersAt10ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(10 * time.Millisecond)}
		r := newRunner(t, f, nil)
		res := r.Run(context.Background(), Step{VUs: 10, Warmup: 500 * time.Millisecond, Length: 2 * time.Second})
		if !near(res.Achieved(), 1000, 10) {
			t.Errorf("achieved = %v/s, want 1000", res.Achieved())
		}
		if c := res.Total.Completed(); c < 1990 || c > 2010 {
			t.Errorf("completed = %d, want ≈ 2000", c)
		}
		if lat := metrics.Summarize(res.Total.Latency); !near(lat.P50, 10, 0.1) {
			t.Errorf("p50 = %v ms, want 10", lat.P50)
		}
	})
}

func TestClosedThink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(10 * time.Millisecond)}
		r := newRunner(t, f, func(c *Config) { c.Think = 90 * time.Millisecond })
		res := r.Run(context.Background(), Step{VUs: 5, Length: 2 * time.Second})
		if !near(res.Achieved(), 50, 3) {
			t.Errorf("achieved = %v/s, want 50 (5 users × 10/s)", res.Achieved())
		}
	})
}

// Cancelling stops new work at once and gives in-flight exchanges the grace.
func TestInterrupt(t *testing.T) {
	for _, st := range []Step{{Rate: 100, Length: 10 * time.Second}, {VUs: 4, Length: 10 * time.Second}} {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{delay: constant(50 * time.Millisecond)}
			r := newRunner(t, f, func(c *Config) { c.Grace = time.Second })
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(2*time.Second, cancel)
			start := time.Now()
			res := r.Run(ctx, st)
			if d := time.Since(start); d > 2100*time.Millisecond {
				t.Errorf("Run returned after %v, want ≈ 2s", d)
			}
			if !res.Interrupted {
				t.Errorf("Interrupted = false, want true")
			}
			if got := res.WindowEnd - res.WindowStart; got > 2100*time.Millisecond {
				t.Errorf("window = %v, want cut at the interrupt", got)
			}
			if res.Total.Completed() == 0 {
				t.Errorf("completed = 0, want the exchanges before the interrupt")
			}
			synctest.Wait()
		})
	}
}

func TestProgressTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(time.Millisecond)}
		var ticks, warming int
		r := newRunner(t, f, func(c *Config) {
			c.OnTick = func(p Progress) {
				ticks++
				if p.Warming {
					warming++
				}
			}
		})
		r.Run(context.Background(), Step{Rate: 10, Warmup: 2 * time.Second, Length: 3 * time.Second})
		if ticks < 4 || warming < 1 {
			t.Errorf("ticks, warming = %d, %d, want ≥ 4, ≥ 1", ticks, warming)
		}
	})
}

func TestMaxWorkersDefault(t *testing.T) {
	r := NewRunner(Config{Timeout: 10 * time.Second})
	for rate, want := range map[float64]int{1: 64, 100: 1000, 1e6: 20000} {
		if got, byConns := r.maxWorkers(rate); got != want || byConns {
			t.Errorf("maxWorkers(%v) = %d, %v, want %d, false", rate, got, byConns, want)
		}
	}
}

// The connections the process can open (MaxConns) cap the workers below
// the default and below a configured MaxWorkers, and never raise them.
func TestMaxWorkersCappedByConns(t *testing.T) {
	tests := []struct {
		name             string
		maxWorkers, maxC int
		rate             float64
		want             int
		byConns          bool
	}{
		{"default under the cap", 0, 5000, 100, 1000, false},
		{"default over the cap", 0, 5000, 1e6, 5000, true},
		{"configured over the cap", 8000, 5000, 1, 5000, true},
		{"configured under the cap", 300, 5000, 1e6, 300, false},
		{"no cap", 0, 0, 1e6, 20000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRunner(Config{Timeout: 10 * time.Second, MaxWorkers: tt.maxWorkers, MaxConns: tt.maxC})
			if got, by := r.maxWorkers(tt.rate); got != tt.want || by != tt.byConns {
				t.Errorf("maxWorkers(%v) = %d, %v, want %d, %v", tt.rate, got, by, tt.want, tt.byConns)
			}
		})
	}
}

// nop answers at once, so the benchmark measures ceiling's own work.
type nop struct{}

func (nop) Session() transport.Session                      { return nop{} }
func (nop) Close()                                          {}
func (nop) Do(_ *transport.Request, out *transport.Outcome) { out.Kind = transport.OK }

// BenchmarkIteration is the executor's and the scenario layer's own cost
// of one single-request iteration around the transport: clock reads,
// classification into the window, recording the exchange and the
// iteration. It must not allocate.
func BenchmarkIteration(b *testing.B) {
	r := NewRunner(Config{Exchanger: nop{}, Scenarios: oneRequest(b)})
	sr := r.newStepRun(Step{Length: time.Hour}, false)
	t := sr.tap(0)
	vu := r.vu(0)
	b.ReportAllocs()
	for b.Loop() {
		vu.Iterate(context.Background(), t, r.now(), 1)
	}
	if n := testing.AllocsPerRun(1000, func() { vu.Iterate(context.Background(), t, r.now(), 1) }); n != 0 {
		b.Fatalf("an iteration allocates %v times", n)
	}
}

// A step overdriven far past what its workers can carry (10,000/s asked,
// 20 workers × 50 ms = 400/s possible) ends on time: its window plus at
// most the drain. The arrivals it could not start before the window ended
// are counted as not sent, never sent late after it.
func TestOpenOverdrivenEndsOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(50 * time.Millisecond)}
		r := newRunner(t, f, func(c *Config) { c.MaxWorkers = 20; c.Timeout = time.Second })
		start := time.Now()
		res := r.Run(context.Background(), Step{Rate: 10000, Length: time.Second})
		if took, most := time.Since(start), time.Second+time.Second+2*time.Second; took > most {
			t.Errorf("step took %v, want at most the window + timeout + grace = %v", took, most)
		}
		if res.Sent+res.NotSent != 10000 || res.NotSent < 9000 {
			t.Errorf("sent %d, not sent %d; want 10000 in all, most not sent", res.Sent, res.NotSent)
		}
		if res.Started != res.Sent || res.Achieved() > 500 {
			t.Errorf("started %d of %d sent, achieved %v/s; want all started inside the window, ≈ 400/s", res.Started, res.Sent, res.Achieved())
		}
		r.Close()
	})
}

// The collector's seconds are timed from the step's start, so the one in
// which the window starts covers only a sliver of it (here 3 ms): that
// second is not extrapolated to a rate (at 200/s, the one response or none
// that ends in those 3 ms reads 333/s or 0/s); its responses count in the
// next second's rate, over both parts.
func TestSeriesRateNotFromASliver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(time.Millisecond)}
		r := newRunner(t, f, nil)
		res := r.Run(context.Background(), Step{Rate: 200, Warmup: 2*time.Second - 3*time.Millisecond, Length: 3 * time.Second})
		var covered, finished float64
		for _, p := range res.Series {
			if p.WindowS > 0 && p.WindowS < RateWindow.Seconds() || p.WindowS == 0 && p.Rate != 0 {
				t.Errorf("point at %.3fs: rate %.1f/s over %.3fs of the window, want a rate only over %v or more", p.T, p.Rate, p.WindowS, RateWindow)
			}
			if p.WindowS > 0 && !near(p.Rate, 200, 6) {
				t.Errorf("point at %.3fs: rate %.1f/s over %.3fs, want 200/s", p.T, p.Rate, p.WindowS)
			}
			covered += p.WindowS
			finished += p.Rate * p.WindowS
		}
		if !near(covered, 3, 0.01) || !near(finished, float64(res.Total.Finished), 0.01) {
			t.Errorf("points cover %.3fs of the window and %.1f responses, want 3s and the step's %d", covered, finished, res.Total.Finished)
		}
	})
}

// A step with NoSeries keeps no point a second, while its seconds still
// reach OnSecond and its totals count every exchange.
func TestNoSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{delay: constant(time.Millisecond)}
		seconds := 0
		r := newRunner(t, f, func(c *Config) {
			c.OnSecond = func(_ Step, p Point, _ *hdrhistogram.Histogram) {
				if !p.Warming {
					seconds++
				}
			}
		})
		res := r.Run(context.Background(), Step{Rate: 10, Length: 5 * time.Second, NoSeries: true})
		if res.Series != nil || seconds < 5 || res.Total.Completed() < 45 {
			t.Errorf("Run = %d points, %d seconds passed on, %d completed; want none, ≥ 5, ≥ 45", len(res.Series), seconds, res.Total.Completed())
		}
	})
}
