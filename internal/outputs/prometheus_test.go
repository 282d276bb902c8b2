package outputs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// prometheus is a real Prometheus server on loopback, with the
// remote-write receiver on (Debian's prometheus package; .ci/run installs
// it).
type prometheus struct {
	base string
	cmd  *exec.Cmd
}

// startPrometheus starts one, scraping scrape (host:port) every 250 ms
// when it is not empty; the test ends it by its PID.
func startPrometheus(t *testing.T, scrape string) *prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (apt-get install prometheus; .ci/run does)")
	}
	dir := t.TempDir()
	cfg := "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
	if scrape != "" {
		cfg += fmt.Sprintf("scrape_configs: [{job_name: ceiling, scrape_interval: 250ms, static_configs: [{targets: [%q]}]}]\n", scrape)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver", "--log.level=warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	testkit.Group(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{base: "http://" + addr, cmd: cmd}
	t.Cleanup(p.stop)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus did not get ready within 60 s")
		}
	}
}

// stop ends the server it started, by its PID.
func (p *prometheus) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
}

// query runs an instant PromQL query and returns each series' value.
func (p *prometheus) query(t *testing.T, q string) []float64 {
	t.Helper()
	var out []float64
	for _, s := range p.api(t, "query", url.Values{"query": {q}}) {
		v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
		out = append(out, v)
	}
	return out
}

// series is one series of a query's answer: its value (an instant query)
// or values (a range query).
type series struct {
	Value  [2]any   `json:"value"`
	Values [][2]any `json:"values"`
}

// api runs a query of the HTTP API (query or query_range) and returns its
// series; an error fails the test.
func (p *prometheus) api(t *testing.T, endpoint string, v url.Values) []series {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/" + endpoint + "?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []series `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("%s %s: %v %s", endpoint, v.Get("query"), err, r.Error)
	}
	return r.Data.Result
}

// target is a loopback server that answers after 2 ms.
func target(t *testing.T) string {
	t.Helper()
	return testkit.NewTarget(t, testkit.TargetConfig{Delay: 2 * time.Millisecond}).URL
}

// hooks are a test's: onStep is called after each step with its number,
// outputs with the run's outputs once they started, before the run.
type hooks struct {
	onStep func(int)
	// afterStep runs after a step's outputs have it, before the next
	// step (and before the outputs finish).
	afterStep func(*results.Step)
	outputs   func(*Outputs)
	tagged    bool // the scenario is tagged tier: gold, and tier is a label
}

// runWith runs a plan of one GET at rates, steps of step, with the output
// flags f, and returns its result and outputs. The target is watched: it
// is this process.
func runWith(t *testing.T, url string, f *Flags, step time.Duration, h hooks, rates ...float64) (*results.Result, *Outputs) {
	t.Helper()
	p := &plan.Plan{
		Target:    url,
		Load:      plan.Load{Rates: rates, Step: plan.Duration{Duration: step}, Warmup: &plan.Duration{Duration: 200 * time.Millisecond}},
		Scenarios: []plan.Scenario{{Name: "home", Request: plan.Request{URL: "/"}}},
		Monitor:   plan.Monitor{PID: os.Getpid()},
	}
	if h.tagged {
		p.Scenarios[0].Tags, p.Labels = map[string]string{"tier": "gold"}, []string{"tier"}
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	var opts run.Options
	o, err := f.Apply(p, &opts)
	if err != nil {
		t.Fatal(err)
	}
	if h.outputs != nil {
		h.outputs(o)
	}
	if h.onStep != nil || h.afterStep != nil {
		n := 0
		opts.Outputs = append(opts.Outputs, stepHook(func(st *results.Step) {
			n++
			if h.onStep != nil {
				h.onStep(n)
			}
			if h.afterStep != nil {
				h.afterStep(st)
			}
		}))
	}
	s, err := run.Open(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	return res, o
}

// A run's series reach a real Prometheus by remote write: the requests
// counted there are result.json's, each step's p99 is its own, and the
// per-second p99s of a step bracket it.
func TestPrometheusRemoteWrite(t *testing.T) {
	t.Parallel()
	prom := startPrometheus(t, "")
	// Steps of a second: two seconds each (the tick at 1 s, the rest at
	// the end), what the dashboard's irate needs of each step's series.
	res, o := runWith(t, target(t), &Flags{Outputs: []string{"prometheus=" + prom.base + "/api/v1/write"}}, time.Second, hooks{tagged: true}, 50, 100)
	id := o.RunID()
	var completed int64
	for i, st := range res.Steps {
		completed += st.Completed
		if !allArrivals(&st, 50*float64(i+1)) {
			t.Errorf("step %d: completed %d, not sent %d", i+1, st.Completed, st.NotSent)
		}
	}
	got := prom.query(t, fmt.Sprintf(`sum(max_over_time(%s{run_id=%q}[10m]))`, RequestsTotal, id))
	if len(got) != 1 || int64(got[0]) != completed {
		t.Errorf("Prometheus has %v requests of run %s, result.json %d", got, id, completed)
	}
	for _, st := range res.Steps {
		label := stepLabelOf(&st)
		p99 := prom.query(t, fmt.Sprintf(`%s{run_id=%q,step=%q,quantile="0.99"}`, StepLatencySeconds, id, label))
		if len(p99) != 1 || math.Abs(p99[0]*1e3-st.LatencyMS.P99) > 1e-6 {
			t.Errorf("step %s: p99 in Prometheus %v s, in result.json %v ms", label, p99, st.LatencyMS.P99)
		}
		lo := prom.query(t, fmt.Sprintf(`min_over_time(%s{run_id=%q,step=%q,quantile="0.99"}[10m])`, LatencySeconds, id, label))
		hi := prom.query(t, fmt.Sprintf(`max_over_time(%s{run_id=%q,step=%q,quantile="0.99"}[10m])`, LatencySeconds, id, label))
		// HDR precision: 3 significant digits.
		if len(lo) != 1 || len(hi) != 1 || st.LatencyMS.P99 < lo[0]*1e3*0.999 || st.LatencyMS.P99 > hi[0]*1e3*1.001 {
			t.Errorf("step %s: p99 %v ms outside its seconds' p99s [%v, %v] s", label, st.LatencyMS.P99, lo, hi)
		}
	}
	tiers := prom.query(t, fmt.Sprintf(`sum(max_over_time(%s{run_id=%q,tier="gold"}[10m]))`, TagIterationsTotal, id))
	if len(tiers) != 1 || int64(tiers[0]) != completed {
		t.Errorf("tier=gold iterations in Prometheus %v, want %d", tiers, completed)
	}
	for _, q := range []string{TargetRate, AchievedRate, StepIndex, LateTotal, IterationsTotal} {
		if v := prom.query(t, fmt.Sprintf(`max_over_time(%s{run_id=%q}[10m])`, q, id)); len(v) == 0 {
			t.Errorf("%s: no series in Prometheus", q)
		}
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	// Every query of the Grafana dashboard answers, over the run.
	from, to := res.StartedAt, *res.EndedAt
	for _, q := range dashboardQueries(t) {
		if n := prom.queryRange(t, concreteQuery(q, id), from, to); n == 0 {
			t.Errorf("the dashboard's query has no answer over the run: %s", concreteQuery(q, id))
		}
	}
}

// allArrivals is whether a step's arrivals, want of them, were all
// completed, but for at most two at its end that a busy machine kept the
// scheduler from sending before the window closed: those are counted as
// not sent, as an arrival that misses its window is.
func allArrivals(st *results.Step, want float64) bool {
	return st.Completed+st.NotSent == int64(want) && st.NotSent <= 2
}

// queryRange runs a PromQL range query over [from, to] at 1 s and
// returns how many values came back.
func (p *prometheus) queryRange(t *testing.T, q string, from, to time.Time) int {
	t.Helper()
	v := url.Values{"query": {q}, "start": {strconv.FormatInt(from.Unix(), 10)}, "end": {strconv.FormatInt(to.Unix()+1, 10)}, "step": {"1"}}
	n := 0
	for _, s := range p.api(t, "query_range", v) {
		n += len(s.Values)
	}
	return n
}

// A backend that goes away mid-run changes nothing in the run's figures:
// every arrival is sent and answered on time, and the batches it missed
// are counted in a warning.
func TestPrometheusDownMidRun(t *testing.T) {
	t.Parallel()
	prom := startPrometheus(t, "")
	// The queue cannot drain with the backend down: the outputs' close
	// waits its drain time out, which this run shortens from drainTimeout
	// (5 s) so as not to spend it.
	const drain = 500 * time.Millisecond
	start := time.Now()
	res, _ := runWith(t, target(t), &Flags{Outputs: []string{"prometheus=" + prom.base + "/api/v1/write"}}, 500*time.Millisecond,
		hooks{
			outputs: func(o *Outputs) { o.sinks[0].(*remote).drain = drain },
			onStep: func(n int) {
				if n == 1 {
					prom.stop()
				}
			},
		}, 100, 100, 100)
	for _, st := range res.Steps {
		if st.Sent != st.Completed || st.Failed != 0 || !allArrivals(&st, 50) {
			t.Errorf("step %d: sent %d, completed %d, failed %d, not sent %d; want 50 sent and completed, none failed", st.Index+1, st.Sent, st.Completed, st.Failed, st.NotSent)
		}
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "were not stored") {
		t.Errorf("warnings %q, want one on the batches not stored", res.Warnings)
	}
	// Three 0.7 s steps, then at most the drain time for the queue.
	if d := time.Since(start); d > 3*700*time.Millisecond+drain+10*time.Second {
		t.Errorf("the run took %v with the backend down", d)
	}
}

// --metrics-listen serves the same series for a Prometheus that scrapes.
func TestMetricsListen(t *testing.T) {
	f := &Flags{Listen: "127.0.0.1:0"}
	var opts run.Options
	p := &plan.Plan{Target: "http://127.0.0.1:1", Scenarios: []plan.Scenario{{Request: plan.Request{URL: "/"}}}, Load: plan.Load{Rates: []float64{1}}}
	o, err := f.Apply(p, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	e := o.sinks[0].(*exporter)
	o.Second(&run.Second{Step: 0, Label: "10/s", At: time.Now(), TargetRate: 10, Rate: 9, WindowS: 1, Scenarios: []string{"home"}})
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, resp.Header.Get("Content-Type"))
	buf := make([]byte, 1<<16)
	n, _ := resp.Body.Read(buf)
	body := string(buf[:n])
	for _, want := range []string{
		"# TYPE ceiling_requests_total counter",
		`ceiling_target_rate{run_id="` + o.RunID() + `",step="10/s"} 10`,
		`ceiling_achieved_rate{run_id="` + o.RunID() + `",step="10/s"} 9`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if !strings.HasPrefix(b.String(), "text/plain") {
		t.Errorf("content type %q", b.String())
	}
	o2, err := (&Flags{Listen: ":0"}).Apply(p, &run.Options{})
	if err != nil {
		t.Fatalf("a port alone: %v", err)
	}
	defer o2.Close()
	if a := o2.sinks[0].(*exporter).Addr(); !strings.HasPrefix(a, "127.0.0.1:") {
		t.Errorf("a port alone listens on %s, want loopback", a)
	}
}

// A real Prometheus scraping --metrics-listen gets the run's series.
func TestMetricsListenScraped(t *testing.T) {
	// Prometheus scrapes a new target first some 5 s after it starts (its
	// service discovery hands the static targets over on a 5 s tick), then
	// every 250 ms, or later on a busy machine. So it starts before this
	// test waits for a parallel slot (-parallel is GOMAXPROCS, 2 on a
	// 2-core machine), and most of those seconds pass while other tests
	// hold the slots. Nor does the run wait for that first scrape: once
	// the step is over, the listener keeps serving its final figures
	// until the outputs finish, so wait (bounded) for a scrape that saw
	// them.
	addr := freeAddr(t)
	prom := startPrometheus(t, addr)
	t.Parallel()
	// This Prometheus scrapes this run alone (job ceiling).
	query := fmt.Sprintf(`max_over_time(%s{job="ceiling",outcome="ok"}[10m])`, RequestsTotal)
	var got []float64
	settled := func(st *results.Step) {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if got = prom.query(t, query); len(got) == 1 && got[0] >= float64(st.Completed) {
				return
			}
		}
		if len(prom.query(t, `up{job="ceiling"} == 1`)) != 1 {
			t.Error("prometheus did not scrape --metrics-listen within 30 s")
		}
	}
	res, _ := runWith(t, target(t), &Flags{Listen: addr}, time.Second, hooks{afterStep: settled}, 50)
	if len(got) != 1 || got[0] != float64(res.Steps[0].Completed) {
		t.Errorf("scraped ok requests %v, result.json %d: want the same count", got, res.Steps[0].Completed)
	}
}

// stepHook is an output that calls a function with each finished step,
// after the outputs before it in run.Options.Outputs took it.
type stepHook func(*results.Step)

func (h stepHook) Start(*results.Result) error { return nil }
func (h stepHook) Step(f *run.Finished) error  { h(f.Step); return nil }
func (h stepHook) Stop(*results.Result) error  { return nil }
