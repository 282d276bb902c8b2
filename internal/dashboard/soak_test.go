package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// During a soak the page shows the windows so far after each one, with
// the soak's section and its plots over time, under the running step; the
// running step's own line keeps its last RunningSeconds only.
func TestSoakWindows(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := NewOutput(s, Feed{Steps: 1})
	res := &results.Result{Schema: results.Schema, StartedAt: time.Now(), Unfinished: true, Steps: []results.Step{}}
	if err := o.Start(res); err != nil {
		t.Fatal(err)
	}
	for i := range 3 * RunningSeconds {
		o.Second(&run.Second{At: res.StartedAt.Add(time.Duration(i) * time.Second), Kinds: metrics.Counts{}})
	}
	o.mu.Lock()
	n := len(o.running.Series)
	o.mu.Unlock()
	if n > 2*RunningSeconds || n < RunningSeconds {
		t.Errorf("the running step keeps %d seconds, want %d to %d", n, RunningSeconds, 2*RunningSeconds)
	}
	k := &results.Soak{Schema: results.SoakSchema, ForS: 3600, HeldS: 600, WindowS: 60, BaseWindowS: 60, HorizonS: 3 * 3600, Trends: []results.Trend{}}
	for i := range 10 {
		k.Windows = append(k.Windows, results.SoakWindow{StartS: float64(60 * i), EndS: float64(60*i + 60), Seconds: 60, Completed: 600, OK: 600, Throughput: 10, LatencyMS: metrics.Latency{P50: 2, P99: 5}})
	}
	k.Trends = append(k.Trends, results.Trend{Figure: "p99_ms", Name: "p99", Unit: "ms", Windows: 10, Median: 5, Start: 5, End: 5, Verdict: results.Stable, Why: "+0 ms/h ± 0.1, R² 0.00"})
	res.Soak = k
	if err := o.Window(res); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		page := body(t, get(t, s.URL()))
		if strings.Contains(page, "What drifted") && strings.Contains(page, "Latency over the soak") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the soak's windows:\n%s", page)
		}
		time.Sleep(20 * time.Millisecond)
	}
	o.Stop(res)
}
