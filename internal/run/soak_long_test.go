//go:build long

package run

import (
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// soakHere soaks a loopback server of the test's for length in windows of
// window, at rate, and returns the result.
func soakHere(t *testing.T, h http.Handler, rate float64, length, window time.Duration) *results.Result {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	p := &plan.Plan{
		Target: srv.URL,
		Load: plan.Load{Rates: []float64{rate}, Warmup: &plan.Duration{Duration: time.Second},
			Soak: &plan.Soak{For: plan.Duration{Duration: length}, Window: plan.Duration{Duration: window}}},
		Scenarios: []plan.Scenario{{Request: plan.Request{URL: "/"}}},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), p, Options{Out: filepath.Join(t.TempDir(), "result.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func trendNamed(t *testing.T, res *results.Result, fig string) results.Trend {
	t.Helper()
	for _, tr := range res.Soak.Trends {
		if tr.Figure == fig {
			return tr
		}
	}
	t.Fatalf("no trend of %s", fig)
	return results.Trend{}
}

// A target whose every answer takes 4 ms more for each second it has
// served: its p99 grows linearly, at 14,400 ms/h, and the soak finds that
// slope within 15 %, DRIFTING. (The growth is steep enough that a busy
// machine's own delays, tens of milliseconds, do not hide it.)
func TestSoakP99GrowsLinearly(t *testing.T) {
	t.Parallel()
	var start time.Time
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(5*time.Millisecond + time.Duration(time.Since(start).Seconds()*float64(4*time.Millisecond)))
		w.Write([]byte("ok"))
	})
	start = time.Now()
	res := soakHere(t, h, 40, time.Minute, 5*time.Second)
	for _, w := range res.Soak.Windows {
		t.Logf("window %v–%v s: p99 %v ms, %d completed", w.StartS, w.EndS, w.LatencyMS.P99, w.Completed)
	}
	p99 := trendNamed(t, res, "p99_ms")
	t.Logf("p99: %s, %s", p99.Verdict, p99.Why)
	if p99.Verdict != results.Drifting || math.Abs(p99.SlopePerH-14400)/14400 > 0.15 {
		t.Errorf("p99 trend %+v, want DRIFTING at 14,400 ms/h ± 15%%", p99)
	}
}

// A target that fails every request for 2 s every 12 s: each burst is an
// episode with its times, and their period is found, 12 s.
func TestSoakErrorBurstPeriod(t *testing.T) {
	t.Parallel()
	var start time.Time
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if s := int(time.Since(start).Seconds()) % 12; s >= 8 && s < 10 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	})
	start = time.Now()
	res := soakHere(t, h, 40, 50*time.Second, 5*time.Second)
	k := res.Soak
	bursts := 0
	for _, e := range k.Episodes {
		t.Logf("episode: %s", e.Text)
		if e.Kind == results.EpisodeErrors {
			bursts++
		}
	}
	for _, rc := range k.Recurring {
		t.Logf("recurring: %s every %.2f s (± %.2f s), %d times", rc.Kind, rc.PeriodS, rc.JitterS, rc.Count)
	}
	if bursts < 4 || len(k.Recurring) == 0 || k.Recurring[0].Kind != results.EpisodeErrors || math.Abs(k.Recurring[0].PeriodS-12) > 1.5 {
		t.Errorf("%d bursts, recurring %+v: want 4 bursts every 12 s", bursts, k.Recurring)
	}
}
