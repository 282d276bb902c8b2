package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// forwarder is a target that accepts POST /msg {"id"} with 202 and forwards
// each message to the sink from a pool of workers, each taking work; it
// drops every dropEvery-th message and sends every dupEvery-th twice.
func forwarder(t *testing.T, sinkURL string, workers int, work time.Duration, dropEvery, dupEvery int64) *httptest.Server {
	t.Helper()
	queue := make(chan string, 100000)
	var n atomic.Int64
	quit := make(chan struct{})
	client := &http.Client{Timeout: 5 * time.Second}
	for range workers {
		go func() {
			for {
				select {
				case <-quit:
					return
				case id := <-queue:
					time.Sleep(work)
					k := n.Add(1)
					if dropEvery > 0 && k%dropEvery == 0 {
						continue
					}
					times := 1
					if dupEvery > 0 && k%dupEvery == 0 {
						times = 2
					}
					for range times {
						body, _ := json.Marshal(map[string]string{"channel": "c", "text": id})
						if resp, err := client.Post(sinkURL+"/hooks/slack", "application/json", bytes.NewReader(body)); err == nil {
							resp.Body.Close()
						}
					}
				}
			}
		}()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ID string }
		json.NewDecoder(r.Body).Decode(&in)
		queue <- in.ID
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(func() { srv.Close(); close(quit) })
	return srv
}

func deliveryPlan(t *testing.T, target string, port int, drain string) string {
	return writePlan(t, fmt.Sprintf(`
target: %s
load: {rates: [200], step: 1s, warmup: 0s}
vars: {msgid: "{{uuid}}"}
sinks:
  - name: slack
    listen: 127.0.0.1:%d
    id: {json: text}
    drain: %s
scenarios:
  - name: send
    request: {method: POST, url: /msg, json: {id: "{{.msgid}}"}}
    expect: {status: [202]}
    delivery: {sink: slack, id: "{{.msgid}}"}
`, target, port, drain))
}

func freeLocalPort(t *testing.T) int {
	t.Helper()
	return testkit.FreePort(t)
}

// Every 10th message dropped and every 7th (unless dropped) sent twice:
// ceiling reports both shares (10 % and 1/7 − 1/70 ≈ 12.9 %) and lists the
// lost ids.
func TestDeliveryLostAndDuplicated(t *testing.T) {
	long(t)
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 4, 0, 10, 7)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "3s"), "--out", out, "--quiet")
	if code != ExitThreshold { // a tenth of the messages lost: the step does not pass
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	d := r.Delivery
	if d == nil || d.Expected < 190 || d.Expected > 210 {
		t.Fatalf("delivery = %+v, want ≈ 200 expected", d)
	}
	lostShare := float64(d.Lost) / float64(d.Expected)
	dupShare := float64(d.Duplicates) / float64(d.Expected)
	if lostShare < 0.08 || lostShare > 0.12 || dupShare < 0.11 || dupShare > 0.15 {
		t.Errorf("lost %d, duplicates %d of %d: want ≈ 10%% and ≈ 12.9%%", d.Lost, d.Duplicates, d.Expected)
	}
	if int64(len(d.LostIDs)) != d.Lost || d.Delivered+d.Lost != d.Expected {
		t.Errorf("lost ids %d of %d lost; delivered %d + lost %d != expected %d", len(d.LostIDs), d.Lost, d.Delivered, d.Lost, d.Expected)
	}
	if s := r.Steps[0].Delivery; s == nil || s.Expected != d.Expected {
		t.Errorf("step delivery = %+v, want the run's", s)
	}
	if len(r.Steps[0].Notes) == 0 {
		t.Errorf("no note that delivery fell behind")
	}
}

// A forwarder slower than the load builds a backlog that clears after the
// load stops: the drain time says how long that took. run judges
// delivered>= on what had arrived when the step ended, as find does, so
// the lagging step fails its SLO although everything arrived later; the
// table says "+N later" and shows the delivery latency.
func TestDeliveryDrainTime(t *testing.T) {
	t.Parallel()
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 1, 8*time.Millisecond, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "10s"), "--slo", "delivered>=99.9%", "--out", out)
	if code != ExitThreshold {
		t.Fatalf("exit %d, want %d (delivered>= judged at the step's end)\n%s\n%s", code, ExitThreshold, stdout, stderr)
	}
	r := readResult(t, out)
	d := r.Delivery
	if d == nil || d.Lost != 0 || d.Undelivered != 0 || d.DrainS < 0.2 || d.DrainS > 5 || d.DrainComplete == nil || !*d.DrainComplete {
		t.Errorf("delivery = %+v, want everything delivered after a drain of about a second", d)
	}
	if len(r.DeliverySeries) == 0 {
		t.Errorf("no delivery series")
	}
	s := r.Steps[0].Delivery
	if s == nil || s.AtStepEnd == nil || *s.AtStepEnd >= s.Delivered {
		t.Fatalf("step delivery = %+v, want fewer delivered at the step's end than after the drain", s)
	}
	if !strings.Contains(stdout, fmt.Sprintf("(+%d later)", s.Delivered-*s.AtStepEnd)) || !strings.Contains(stdout, "delivery p50/p99") {
		t.Errorf("table without the later deliveries or the delivery latency column:\n%s", stdout)
	}
	if !strings.Contains(stdout, "the backlog cleared") {
		t.Errorf("no drain sentence:\n%s", stdout)
	}
}

// A drain that runs out while the forwarder is still delivering does not
// call the rest lost: they are undelivered, drain_complete is false, the
// sentence says arrivals were still coming, and the ids are listed as
// missing, not lost.
func TestDeliveryUndeliveredWhenDrainEnds(t *testing.T) {
	t.Parallel()
	port := freeLocalPort(t)
	// One worker × 20 ms: 50/s against 200/s for a second leaves about
	// 150 queued, three seconds of work; the drain allows one.
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 1, 20*time.Millisecond, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "1s"), "--out", out)
	if code != ExitThreshold { // its one step fell behind: OVERLOADED, so no step passed
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	d := readResult(t, out).Delivery
	if d == nil || d.Lost != 0 || d.Undelivered == 0 || d.DrainComplete == nil || *d.DrainComplete {
		t.Fatalf("delivery = %+v, want none lost, some undelivered, drain_complete false", d)
	}
	if want := fmt.Sprintf("%d still missing when the", d.Undelivered); !strings.Contains(stdout, want) || !strings.Contains(stdout, "arrivals were still coming") {
		t.Errorf("stdout lacks %q and that arrivals were still coming:\n%s", want, stdout)
	}
	if !strings.Contains(stdout, "missing ids (first ") || strings.Contains(stdout, "lost ids") {
		t.Errorf("ids still queued listed as lost, not missing:\n%s", stdout)
	}
}

// A forwarder of 50 a second behind a load of 200 a second, with a drain
// too short for its queue: the ids still missing count in the delivery
// percentiles at their wait so far, which makes p99 a lower bound
// ("≥"), and delivery_p99<5s fails on it (it passed on the p99 of the ids
// that made it, about 1.5 s). The step's backlog grew by about 150 (200
// accepted, 50 delivered): it is OVERLOADED, though every ack was fast.
// The live line shows the deliveries and the backlog, and the drain says
// how it ended.
func TestDeliveryPercentilesCountTheMissing(t *testing.T) {
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 1, 20*time.Millisecond, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "1s"), "--slo", "delivery_p99<5s", "--out", out)
	if code != ExitThreshold {
		t.Fatalf("exit %d, want %d: delivery_p99<5s cannot pass with ids missing\n%s\n%s", code, ExitThreshold, stdout, stderr)
	}
	r := readResult(t, out)
	d := r.Delivery
	if d == nil || d.Missing() < 50 || d.LatencyMS.P99 < 1000 {
		t.Fatalf("delivery = %+v, want about 100 missing, p99 ≥ 1 s (the drain)", d)
	}
	if _, bounded := d.LatencyUpperMS["p99"]; bounded {
		t.Errorf("latency_upper_ms = %v, want no p99 bound with half the ids missing", d.LatencyUpperMS)
	}
	if th := r.Thresholds[0]; th.OK || !th.AtLeast {
		t.Errorf("threshold = %+v, want failed on a lower bound", th)
	}
	if !strings.Contains(stdout, "FAIL delivery_p99<5s (worst step: ≥ ") || !strings.Contains(stdout, "p99 ≥ ") {
		t.Errorf("the table does not say p99 is a lower bound:\n%s", stdout)
	}
	s := r.Steps[0]
	sd := s.Delivery
	if sd.BacklogStart == nil || sd.BacklogEnd == nil {
		t.Fatalf("step delivery = %+v, want the backlog at the window's start and end", sd)
	}
	if grew := *sd.BacklogEnd - *sd.BacklogStart; grew < 100 || grew > 200 {
		t.Errorf("backlog %d → %d, want it to grow by about 150 (200 accepted, 50 delivered)", *sd.BacklogStart, *sd.BacklogEnd)
	}
	switch {
	case s.GeneratorLimited: // a busy machine: that verdict comes first
		t.Logf("verdict %s (%s): this machine was too busy to judge the delivery", s.Verdict, s.VerdictReason)
	case s.Verdict != "OVERLOADED" || !strings.Contains(s.VerdictReason, "delivery fell behind"):
		t.Errorf("verdict %s (%s), want OVERLOADED: delivery fell behind", s.Verdict, s.VerdictReason)
	}
	if !regexp.MustCompile(`step 1/1 .* delivered \d+/\d+  backlog \d+`).MatchString(stderr) {
		t.Errorf("the live line does not show deliveries and backlog:\n%s", stderr)
	}
	if want := fmt.Sprintf("deliveries: %d still missing when the wait ended", d.Missing()); !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// A forwarder faster than the load keeps the backlog flat: the step is
// HEALTHY, its backlog at the window's end a few posts at most, and every
// percentile exact.
func TestDeliveryKeptUp(t *testing.T) {
	t.Parallel()
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 4, 0, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "3s"), "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	s := r.Steps[0]
	sd := s.Delivery
	if sd == nil || sd.BacklogEnd == nil || *sd.BacklogEnd > 10 || sd.Missing() != 0 || sd.LatencyUpperMS != nil {
		t.Fatalf("step delivery = %+v, want all delivered, a backlog of a few at most", sd)
	}
	if s.Verdict == "OVERLOADED" {
		t.Errorf("verdict %s (%s), want no overload: the forwarder kept up", s.Verdict, s.VerdictReason)
	}
	if strings.Contains(stdout, "≥") {
		t.Errorf("a percentile shown as a lower bound with nothing missing:\n%s", stdout)
	}
}

// The send → delivery latency runs from the iteration's intended start and
// is never clamped: a target that posts to the sink 30 ms after it got the
// message, and answers only 50 ms later, delivers in ≥ 30 ms (it read as
// 0 when measured from the answer), and delivery_p50<10ms fails on it.
func TestDeliveryLatencyBeforeAnswer(t *testing.T) {
	port := freeLocalPort(t)
	sinkURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 5 * time.Second}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ID string }
		json.NewDecoder(r.Body).Decode(&in)
		time.Sleep(30 * time.Millisecond)
		body, _ := json.Marshal(map[string]string{"text": in.ID})
		if resp, err := client.Post(sinkURL+"/hooks/slack", "application/json", bytes.NewReader(body)); err == nil {
			resp.Body.Close()
		}
		time.Sleep(50 * time.Millisecond)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "2s"), "--rate", "20", "--slo", "delivery_p50<10ms", "--out", out, "--quiet")
	if code != ExitThreshold {
		t.Fatalf("exit %d, want %d (delivery_p50<10ms fails)\n%s\n%s", code, ExitThreshold, stdout, stderr)
	}
	d := readResult(t, out).Delivery
	if d == nil || d.Delivered == 0 || d.LatencyMS.P50 < 30 {
		t.Errorf("delivery = %+v, want send→delivery p50 ≥ 30 ms", d)
	}
}

// find waits for an overloaded step's backlog before the next probe, so
// the backlog is not charged to it, and finds the forwarder's capacity
// (one worker × 20 ms: at most 50/s) by delivery.
func TestFindSettlesDeliveries(t *testing.T) {
	long(t)
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 1, 20*time.Millisecond, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", deliveryPlan(t, srv.URL, port, "10s"),
		"--slo", "delivered>=90%", "--start", "20", "--max", "400", "--precision", "30%", "--out", out, "--quiet")
	if code != ExitOK {
		if strings.Contains(stdout, "generator limit reached") {
			t.Skipf("this machine was too busy to hold the rates (another test's load?):\n%s", stdout)
		}
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Edge == nil || r.Edge.Rate < 20 || r.Edge.Rate > 55 {
		t.Fatalf("edge = %+v, want at most the forwarder's 50/s\n%s", r.Edge, stdout)
	}
	t.Log(stdout)
	settled := false
	for i, s := range r.Steps {
		if i > 0 && r.Steps[i-1].SLOPassed != nil && !*r.Steps[i-1].SLOPassed && s.SettleS > 0.2 {
			settled = true
		}
		if i == 0 && s.SettleS != 0 {
			t.Errorf("step 1 settle_s = %v, want 0", s.SettleS)
		}
	}
	if !settled {
		for _, s := range r.Steps {
			t.Logf("step %d: rate %v delivered %+v settle %v", s.Index+1, s.TargetRate, s.Delivery, s.SettleS)
		}
		t.Errorf("no step after a failed one waited for the backlog\n%s", stdout)
	}
}

// Ids an earlier step lost are still missing when find settles before the
// next step: that step says so.
func TestFindWarnsOfMissingEarlierDeliveries(t *testing.T) {
	long(t)
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 2, 0, 10, 0) // drops every 10th
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", deliveryPlan(t, srv.URL, port, "2s"),
		"--slo", "delivered>=50%", "--start", "20", "--max", "40", "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if len(r.Steps) < 2 {
		t.Fatalf("%d steps, want at least 2", len(r.Steps))
	}
	warned := slices.ContainsFunc(r.Steps[1].Warnings, func(w string) bool { return strings.Contains(w, "had not reached the sinks") })
	if !warned || r.Steps[1].SettleS < 0.9 {
		t.Errorf("step 2: settle_s %v, warnings %q; want a wait of the quiet second and a warning about step 1's lost ids", r.Steps[1].SettleS, r.Steps[1].Warnings)
	}
}

// With --repeat, each repeat's deliveries are its own: a forwarder that
// delivers about half of each step's messages by the step's end shows that
// share in every repeat (it read 1900/2000 in a second repeat that had
// delivered 90 %, carrying the first repeat's settled ids), and the step
// sums the repeats' expected ids.
func TestDeliveryPerRepeat(t *testing.T) {
	long(t)
	port := freeLocalPort(t)
	// one worker × 10 ms: 100/s against 200/s, so about half by each step's end
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 1, 10*time.Millisecond, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "run", deliveryPlan(t, srv.URL, port, "10s"), "--repeat", "2", "--slo", "delivered>=90%", "--out", out)
	if code != ExitThreshold {
		t.Fatalf("exit %d, want 1: about half delivered by each step's end\n%s\n%s", code, stdout, stderr)
	}
	s := readResult(t, out).Steps[0]
	if s.Repeat == nil || s.Repeat.Passed != 0 {
		t.Errorf("repeat %+v: want no repeat passing delivered>=90%% (each delivered about half by its end)", s.Repeat)
	}
	if d := s.Delivery; d == nil || d.Expected < 300 || d.AtStepEnd == nil || float64(*d.AtStepEnd) > 0.8*float64(d.Expected) {
		t.Errorf("delivery %+v, want both repeats' ids expected and about half at the steps' ends", d)
	}
}

// A forwarder of one worker × 10 ms delivers at most 100 messages a second.
// A step above that accepts faster than it delivers and its backlog grows
// through the step, which fails it even when most of its messages arrive
// by its end (delivered>=60% held up to about 150/s): find's edge is at
// or below the forwarder's capacity.
func TestFindEdgeAtDeliveryCapacity(t *testing.T) {
	long(t)
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 1, 10*time.Millisecond, 0, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", deliveryPlan(t, srv.URL, port, "10s"),
		"--slo", "delivered>=60%", "--start", "60", "--max", "160", "--precision", "10%", "--out", out, "--quiet")
	if code != ExitOK {
		if strings.Contains(stdout, "generator limit reached") {
			t.Skipf("this machine was too busy to hold the rates (another test's load?):\n%s", stdout)
		}
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Edge == nil || r.Edge.Rate < 60 || r.Edge.Rate > 105 {
		t.Fatalf("edge = %+v, want at most the forwarder's 100/s\n%s", r.Edge, stdout)
	}
	for _, s := range r.Steps {
		if s.TargetRate > 110 && !strings.Contains(s.VerdictReason, "delivery fell behind") {
			t.Errorf("step %d at %v/s: verdict %s (%s), want delivery fell behind", s.Index+1, s.TargetRate, s.Verdict, s.VerdictReason)
		}
	}
}

// A find with a delivery latency term judges each step once its ids have
// arrived or waited as long as the term allows: the ids in flight when a
// 1 s step ends (a tenth of them, with deliveries taking 100 ms) would
// otherwise leave its p99 without an upper bound, and no step could pass
// delivery_p99<2s however well the target kept up.
func TestFindJudgesDeliveryLatencyOnceKnown(t *testing.T) {
	t.Parallel()
	port := freeLocalPort(t)
	srv := forwarder(t, fmt.Sprintf("http://127.0.0.1:%d", port), 8, 100*time.Millisecond, 0, 0) // 80/s
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := ceiling(t, context.Background(), "find", deliveryPlan(t, srv.URL, port, "10s"),
		"--slo", "delivery_p99<2s", "--start", "10", "--max", "20", "--out", out, "--quiet")
	if code != ExitOK {
		if strings.Contains(stdout, "generator limit reached") {
			t.Skipf("this machine was too busy to hold the rates (another test's load?):\n%s", stdout)
		}
		t.Fatalf("exit %d, want 0: every step kept up with deliveries of about 100 ms\n%s\n%s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Edge == nil || r.Edge.Rate != 20 {
		t.Errorf("edge = %+v, want 20/s (the search's max, far under the forwarder's 80/s)\n%s", r.Edge, stdout)
	}
	inFlight := false
	for _, s := range r.Steps {
		d := s.Delivery
		if d == nil || d.AtStepEnd == nil || d.Delivered != d.Expected {
			t.Fatalf("step %d delivery %+v: want every id delivered", s.Index+1, d)
		}
		inFlight = inFlight || *d.AtStepEnd < d.Expected
	}
	if !inFlight {
		t.Errorf("no step had ids in flight at its end: the test proves nothing\n%s", stdout)
	}
}
