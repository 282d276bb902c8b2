package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// gateway accepts each send (202) after answer() and hands its id to
// post, which delivers it to the sink at sinkURL; it stops posting when
// the test ends.
func gateway(t *testing.T, sinkURL string, answer func() time.Duration, post func(deliver func())) *httptest.Server {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	quit := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ID string }
		json.NewDecoder(r.Body).Decode(&in)
		time.Sleep(answer())
		wg.Add(1)
		post(func() {
			defer wg.Done()
			select {
			case <-quit:
				return
			default:
			}
			body, _ := json.Marshal(map[string]string{"text": in.ID})
			if resp, err := client.Post(sinkURL+"/hook", "application/json", bytes.NewReader(body)); err == nil {
				resp.Body.Close()
			}
		})
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(func() { srv.Close(); close(quit); wg.Wait() })
	return srv
}

// deliveryRun runs load against target with a sink on port, and returns
// the result.
func deliveryRun(t *testing.T, target string, port int, load string) *results.Result {
	t.Helper()
	text := fmt.Sprintf(`
target: %s
load: %s
vars: {msgid: "{{uuid}}"}
sinks: [{name: hook, listen: "127.0.0.1:%d", id: {json: text}, drain: 3s}]
scenarios:
  - request: {method: POST, url: /send, json: {id: "{{.msgid}}"}}
    expect: {status: [202]}
    delivery: {sink: hook, id: "{{.msgid}}"}
`, target, load, port)
	p, err := plan.Parse("plan.yaml", []byte(text))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), p, Options{})
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

// A gateway that posts every send to the sink exactly 1.5 s after
// accepting it, each on its own goroutine, can never fall behind: its
// backlog is the sends of the last 1.5 s, about 180 from 20 users, and
// moves by chance from instant to instant. Its step is HEALTHY, not
// "fell behind" (the rule on the window's two ends called it OVERLOADED).
func TestFixedDelayPipelineKeepsUp(t *testing.T) {
	port := testkit.FreePort(t)
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(7, 8))
	srv := gateway(t, fmt.Sprintf("http://127.0.0.1:%d", port),
		func() time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return time.Duration(r.IntN(20)) * time.Millisecond // with 150 ms of think time, 20 users send about 120 a second, unevenly
		},
		func(deliver func()) { time.AfterFunc(1500*time.Millisecond, deliver) })
	res := deliveryRun(t, srv.URL, port, fixedDelayLoad)
	for _, s := range res.Steps {
		if why := s.FellBehind(); why != "" || s.Verdict != results.Healthy {
			t.Errorf("%d users: verdict %s (%s), backlog samples %v; want HEALTHY: a fixed delay keeps up", s.VUs, s.Verdict, s.VerdictReason, s.Delivery.BacklogSamples)
		}
	}
	if d := res.Delivery; d == nil || d.Delivered != d.Expected || d.LatencyMS.P50 < 1490 || d.LatencyMS.P99 > 1600 {
		t.Errorf("delivery %+v: want every id, 1.5 s each", d)
	}
}

// Its twin: lanes that post one send at a time each, 4 × 20 ms = 200 a
// second at most, loaded 4 % over that. Their queue grows through the
// step: OVERLOADED, the delivery fell behind.
func TestLanesOverCapacityFallBehind(t *testing.T) {
	port := testkit.FreePort(t)
	queue := make(chan func(), 10000)
	stop := make(chan struct{})
	var lanes sync.WaitGroup
	for range 4 {
		lanes.Go(func() {
			for {
				select {
				case <-stop:
					return
				case deliver := <-queue:
					time.Sleep(20 * time.Millisecond)
					deliver()
				}
			}
		})
	}
	t.Cleanup(func() { close(stop); lanes.Wait() })
	srv := gateway(t, fmt.Sprintf("http://127.0.0.1:%d", port), func() time.Duration { return 0 }, func(deliver func()) { queue <- deliver })
	res := deliveryRun(t, srv.URL, port, "{rates: [208], step: 3s, warmup: 500ms}")
	s := res.Steps[0]
	// On a starved machine the generator may not hold the rate either, and
	// GENERATOR LIMITED, which says the load was not what was asked, comes
	// before OVERLOADED: the backlog's finding must still be there.
	why := s.FellBehind()
	if why == "" || s.Verdict != results.Overloaded && s.Verdict != results.GeneratorLimited {
		t.Errorf("verdict %s (%s), fell behind %q, backlog samples %v; want OVERLOADED: the lanes fell behind", s.Verdict, s.VerdictReason, why, s.Delivery.BacklogSamples)
	}
	if s.Verdict == results.GeneratorLimited {
		t.Logf("the generator could not hold the rate on this machine (%s); the lanes still fell behind: %s", s.VerdictReason, why)
	}
}

// A target watched only through its metrics endpoint has no CPU or memory
// figures: result.json leaves them out, the per-second series carries
// none, and the report draws no CPU or memory plot (they were drawn as
// flat lines at 0 % and 0 MB). A scenario that got no iteration in a step
// shows "-" in its row, not 0 ms and 0 B.
func TestUnmeasuredIsNotZero(t *testing.T) {
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE queue_depth gauge\nqueue_depth 3\n")
	}))
	defer metrics.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	text := fmt.Sprintf(`
target: %s
load: {rates: [50], step: 2s, warmup: 0s}
monitor: {prometheus: {url: %s, metrics: [queue_depth]}}
scenarios:
  - {name: home, request: {url: /}}
  - {name: rare, weight: 0.0001, request: {url: /rare}}
`, target.URL, metrics.URL)
	p, err := plan.Parse("plan.yaml", []byte(text))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st := res.Steps[0]
	if st.Target == nil || st.Target.Measured() || st.Target.Metrics["queue_depth"].Last != 3 {
		t.Fatalf("target %+v: want the metric, and no CPU or memory measured", st.Target)
	}
	for _, pt := range st.Series {
		if pt.TargetCPU != nil || pt.TargetRSS != nil {
			t.Fatalf("second %v has the target's CPU %v and RSS %v: nothing measured them", pt.T, *pt.TargetCPU, *pt.TargetRSS)
		}
	}
	data, _ := json.Marshal(st.Target)
	if strings.Contains(string(data), "cpu_pct") || strings.Contains(string(data), "rss_mb") {
		t.Errorf("result.json's target %s: want no cpu_pct or rss_mb", data)
	}
	var page, table bytes.Buffer
	if err := report.HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "Target CPU over time") || strings.Contains(page.String(), "Target memory (RSS) over time") {
		t.Errorf("the report plots the target's CPU or memory, which nothing measured")
	}
	if err := report.Text(&table, res); err != nil {
		t.Fatal(err)
	}
	rare := false
	for line := range strings.Lines(table.String()) {
		f := strings.Fields(line)
		if len(f) < 10 || f[1] != "rare" {
			continue
		}
		rare = true
		if want := []string{"1", "rare", "0%", "0", "-", "-", "-", "-", "-", "-"}; strings.Join(f, " ") != strings.Join(want, " ") {
			t.Errorf("the row of a scenario with no iteration: %q, want %q", f, want)
		}
	}
	if !rare {
		t.Errorf("no row for the scenario with no iteration:\n%s", table.String())
	}
}
