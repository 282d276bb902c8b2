//go:build unix

package run

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// The tests of events on the wall clock: a target the run starts (the
// demo target: this test binary, started again) or one of the test's that
// an event's command slows, and a prober that watches the target on
// connections of its own.

// demoRun is a run of rate/s for a step, with events, against the demo
// target that the run starts on port (monitor.command: this test binary,
// after prefix, a shell's words before it: "sleep 0.5 && exec " is a
// target slow to start), sharing its port with a copy of itself when
// reuse is set; slo is the plan's SLO, if any. It returns the result, the
// table and the run's error.
func demoRun(t *testing.T, port int, prefix string, reuse bool, rate int, step, slo, events string) (*results.Result, string, error) {
	t.Helper()
	p := parsePlan(t, `target: http://127.0.0.1:%d
load: {rates: [%d], step: %s, warmup: 500ms}
http: {timeout: 3s}
slo: %q
monitor:
  command: %q
  env: {BIN: %q, %s: "127.0.0.1:%d", %s: %q}
  ready: "http://127.0.0.1:%d/health"
  stop_grace: 2s
scenarios: [{request: {url: /health}}]
events:
%s`, port, rate, step, slo, prefix+`"$BIN"`, exe(t), demoEnv, port, demoReuseEnv, map[bool]string{true: "1"}[reuse], port, events)
	return runEvents(t, p)
}

// runEvents runs p on the wall clock, two minutes at most, and returns its
// result (which a run stopped by its target's death or a failed event
// has too), its table and its error.
func runEvents(t *testing.T, p *plan.Plan) (*results.Result, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, p, Options{Out: filepath.Join(t.TempDir(), "result.json")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	res, err := s.Run(ctx)
	if res == nil {
		t.Fatalf("Run = %v, and no result", err)
	}
	text := table(t, res)
	t.Log(text)
	return res, text, err
}

// exe is this test binary.
func exe(t *testing.T) string {
	t.Helper()
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// probe is what one fresh connection to the target saw: when it was
// opened, when it ended, and how ("ok", "refused", "reset", "error").
type probe struct {
	sent, done time.Time
	outcome    string
}

// startProber opens a fresh connection to addr every 5 to 20 ms and asks
// GET /health on it, each probe on a goroutine of its own (a stalled
// target does not slow the probing): a view of the target independent of
// ceiling's. stop ends it (at the latest, it ends by itself after two
// minutes) and returns every probe, in the order they were opened.
func startProber(t *testing.T, addr string) (stop func() []probe) {
	t.Helper()
	quit := make(chan struct{})
	var mu sync.Mutex
	var probes []probe
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(1, 2))
		for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); {
			wg.Go(func() {
				p := probe{sent: time.Now(), outcome: ask(addr)}
				p.done = time.Now()
				mu.Lock()
				probes = append(probes, p)
				mu.Unlock()
			})
			select {
			case <-quit:
				return
			case <-time.After(time.Duration(5+rng.IntN(16)) * time.Millisecond):
			}
		}
	}()
	return func() []probe {
		close(quit)
		<-done
		wg.Wait()
		slices.SortFunc(probes, func(a, b probe) int { return a.sent.Compare(b.sent) })
		return probes
	}
}

// ask opens a connection to addr, asks GET /health and reads the status
// line.
func ask(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "refused"
	}
	if err != nil {
		return "error"
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Write([]byte("GET /health HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"))
	var line string
	if err == nil {
		line, err = bufio.NewReader(c).ReadString('\n')
	}
	switch {
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return "reset"
	case err != nil || !strings.HasPrefix(line, "HTTP/1.1 200"):
		return "error"
	}
	return "ok"
}

// failedBetweenAnswers counts, by outcome, the probes that failed after
// the first answered one and before the last: those of a target that was
// up, not those before it started or after the run stopped it.
func failedBetweenAnswers(probes []probe) map[string]int {
	first, last := -1, -1
	for i, p := range probes {
		if p.outcome == "ok" {
			last = i
			if first < 0 {
				first = i
			}
		}
	}
	out := map[string]int{}
	for i := first + 1; i < last; i++ {
		if probes[i].outcome != "ok" {
			out[probes[i].outcome]++
		}
	}
	return out
}

// recovery writes an event's recovery, or why it has none.
func recovery(e results.Event) string {
	if e.RecoveryS == nil {
		return e.Recovery
	}
	return fmt.Sprintf("%.3f s", *e.RecoveryS)
}

// proberRecovery is a pause's recovery as probes saw it: from the first
// answer to a probe held by the pause (one that took over 300 ms) to the
// first probe sent after that answer which was answered within limit.
func proberRecovery(probes []probe, limit time.Duration) (time.Duration, bool) {
	var resumed time.Time
	for _, p := range probes {
		if p.outcome == "ok" && p.done.Sub(p.sent) > 300*time.Millisecond && (resumed.IsZero() || p.done.Before(resumed)) {
			resumed = p.done
		}
	}
	for _, p := range probes {
		if !resumed.IsZero() && !p.sent.Before(resumed) && p.outcome == "ok" && p.done.Sub(p.sent) <= limit {
			return p.sent.Sub(resumed), true
		}
	}
	return 0, false
}

// A pause of 1 s at 200/s: the requests sent during it wait, and their
// latency, counted from their intended times, shows the whole pause. The
// recovery is the catch-up after it, as a prober opening fresh
// connections all along sees it: from the moment the target answers
// again to the first probe sent after it that is answered within the
// SLO's p99.
func TestEventPause(t *testing.T) {
	long(t)
	// Recovery against an SLO, as for the restart: a sub-millisecond
	// baseline is too fine a limit under the race detector.
	port := testkit.FreePort(t)
	stop := startProber(t, fmt.Sprintf("127.0.0.1:%d", port))
	r, _, err := demoRun(t, port, "", false, 200, "6s", "p99<100ms,errors<1%", "  - {name: freeze, at: 1s, action: pause, for: 1s}\n")
	probes := stop()
	if err != nil || len(r.Events) != 1 {
		t.Fatalf("Run = %v, events %+v; want one", err, r.Events)
	}
	e, s := r.Events[0], r.Steps[0]
	t.Logf("event %+v; step p50 %.1f p99 %.1f max %.1f ms", e, s.LatencyMS.P50, s.LatencyMS.P99, s.LatencyMS.Max)
	if e.Error != "" || e.DurationS < 0.95 || e.DurationS > 1.5 || e.AtS < 0.95 || e.AtS > 1.3 {
		t.Errorf("event %+v: want the pause at 1 s, lasting 1 s", e)
	}
	if s.LatencyMS.Max < 900 || s.LatencyMS.P50 > 100 {
		t.Errorf("latency p50 %.1f, max %.1f ms: want the pause's second in the tail (max near 1 s), not in the median", s.LatencyMS.P50, s.LatencyMS.Max)
	}
	truth, ok := proberRecovery(probes, 100*time.Millisecond)
	if !ok {
		t.Fatalf("the prober saw no pause in %d probes", len(probes))
	}
	t.Logf("recovery: ceiling %s, the prober %.3f s", recovery(e), truth.Seconds())
	if w := e.Window; w == nil || w.P99MS < 800 || w.P99MS > 1500 || e.RecoveryS == nil || math.Abs(*e.RecoveryS-truth.Seconds()) > 0.15 {
		t.Errorf("window %+v, recovery %v (%s): want the window's p99 near 1 s and the recovery within 150 ms of the prober's %v", w, e.RecoveryS, e.Recovery, truth)
	}
	if len(s.Events) != 1 || s.Events[0] != "freeze" {
		t.Errorf("the step's events %v, want freeze", s.Events)
	}
}

// slowTarget is an HTTP target on loopback that answers at once, except
// for period after each SIGUSR1 that this test process receives (an
// event's command sends it: kill -USR1 <pid>), when each answer takes
// slow: a target whose recovery the test sets. It returns the target's
// URL and, when the test is done with it, when each slow period ended.
func slowTarget(t *testing.T, slow, period time.Duration) (string, func() []time.Time) {
	t.Helper()
	var until atomic.Int64 // unix ns
	var mu sync.Mutex
	var ends []time.Time
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGUSR1)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-sig:
				end := time.Now().Add(period)
				until.Store(end.UnixNano())
				mu.Lock()
				ends = append(ends, end)
				mu.Unlock()
			case <-quit:
				return
			}
		}
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if time.Now().UnixNano() < until.Load() {
			time.Sleep(slow)
		}
		w.Write([]byte("ok"))
	}))
	var once sync.Once
	stop := func() {
		once.Do(func() {
			srv.Close()
			close(quit)
			<-done
			signal.Stop(sig)
		})
	}
	t.Cleanup(stop)
	return srv.URL, func() []time.Time {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return ends
	}
}

// slowRun runs rate/s against a slowTarget for a step, with events.
func slowRun(t *testing.T, url string, rate int, step, events string) *results.Result {
	t.Helper()
	p := parsePlan(t, `target: %s
load: {rates: [%d], step: %s, warmup: 500ms}
http: {timeout: 3s}
slo: "p99<100ms, errors<1%%"
scenarios: [{request: {url: /}}]
events:
%s`, url, rate, step, events)
	r, _, err := runEvents(t, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A target slow (200 ms an answer, over the SLO's p99 of 100 ms) for 700 ms
// after an event's command: the recovery is those 700 ms, to within the
// spacing of the exchanges and the command's own few milliseconds, not
// rounded to a second of the series; the window is what those 700 ms
// cost.
func TestEventRecoveryToTheMillisecond(t *testing.T) {
	long(t)
	const period = 700 * time.Millisecond
	url, ends := slowTarget(t, 200*time.Millisecond, period)
	r := slowRun(t, url, 200, "3s", fmt.Sprintf("  - {name: slow, at: 1s, run: \"kill -USR1 %d\"}\n", os.Getpid()))
	if n := len(ends()); n != 1 || len(r.Events) != 1 || r.Events[0].Error != "" {
		t.Fatalf("%d slow periods, events %+v: want one, done", n, r.Events)
	}
	e := r.Events[0]
	t.Logf("event lasted %.3f s, recovery %s, window %+v", e.DurationS, recovery(e), e.Window)
	if e.RecoveryS == nil || math.Abs(*e.RecoveryS-period.Seconds()) > 0.1 {
		t.Errorf("recovery %v (%s), want %v (±100 ms)", e.RecoveryS, e.Recovery, period)
	}
	if w := e.Window; w == nil || w.P50MS < 190 || w.P50MS > 400 || w.Completed < 100 || w.Completed > 180 || w.Failed != 0 {
		t.Errorf("window %+v: want the 140 exchanges of the slow 700 ms (±40), at about 200 ms", w)
	}
}

// Events a second apart, and one after which the target never left its
// SLO: each is measured on its own, until the next one began, and the
// last one near the step's end is measured to it: 300 ms, 300 ms and 0.
func TestEventRecoveryCloseEvents(t *testing.T) {
	long(t)
	url, ends := slowTarget(t, 200*time.Millisecond, 300*time.Millisecond)
	kill := fmt.Sprintf("kill -USR1 %d", os.Getpid())
	r := slowRun(t, url, 200, "3500ms", fmt.Sprintf(`  - {name: first, at: 1s, run: "%s"}
  - {name: second, at: 2s, run: "%s"}
  - {name: noop, at: 3s, run: "true"}
`, kill, kill))
	if n := len(ends()); n != 2 || len(r.Events) != 3 {
		t.Fatalf("%d slow periods, events %+v: want two, and three events", n, r.Events)
	}
	for i, want := range []float64{0.3, 0.3, 0} {
		e := r.Events[i]
		t.Logf("event %s: recovery %s, window %+v", e.Name, recovery(e), e.Window)
		if e.RecoveryS == nil || math.Abs(*e.RecoveryS-want) > 0.1 {
			t.Errorf("event %s: recovery %v (%s), want %.1f s (±100 ms)", e.Name, e.RecoveryS, e.Recovery, want)
		}
	}
	if e := r.Events[2]; e.RecoveryS != nil && *e.RecoveryS != 0 {
		t.Errorf("event noop: recovery %v, want 0: the target never left its SLO", *e.RecoveryS)
	}
}

// A target that never comes back (killed by a command, which does not
// start it again: its process group, the shell the run started and the
// server under it): its requests are refused from then on, recovery is
// null, "did not recover", a recovery< threshold fails, and the run could
// not be carried out: its target died, which the table says.
func TestEventNeverRecovers(t *testing.T) {
	long(t)
	r, text, err := demoRun(t, testkit.FreePort(t), "", false, 50, "3s", "recovery<2s", "  - {name: crash, at: 1s, run: \"kill -9 -{{.target.pgid}}\"}\n")
	if err != nil && !errors.Is(err, failure.ErrTargetDied) || len(r.Events) != 1 || r.Passed || r.Outcome.Status != results.StatusCouldNotRun {
		t.Fatalf("Run = %v, events %+v, outcome %+v; want the target dead (could_not_run)", err, r.Events, r.Outcome)
	}
	for _, kind := range []string{results.ReasonTargetDied, results.ReasonNotRecovered, results.ReasonThreshold} {
		if !slices.ContainsFunc(r.Outcome.Reasons, func(rs results.Reason) bool { return rs.Kind == kind }) {
			t.Errorf("outcome %+v lacks a reason of kind %s", r.Outcome, kind)
		}
	}
	if !strings.Contains(text, "COULD NOT RUN: step 1: the target died (killed by SIGKILL)") {
		t.Errorf("the table does not end with the outcome:\n%s", text)
	}
	if s := r.Steps[0]; s.Errors["refused"] < 50 {
		t.Errorf("errors %v: want the requests after the kill refused (about 100)", s.Errors)
	}
	if e := r.Events[0]; e.RecoveryS != nil || e.Recovery != "did not recover" {
		t.Errorf("event %+v: want recovery null, did not recover", e)
	}
	if !strings.Contains(text, "What each event cost") || !strings.Contains(text, "did not recover") {
		t.Errorf("the table does not say what the event cost:\n%s", text)
	}
}

// A restart of a command target (one that takes half a second to start):
// the requests during the gap fail (connections refused), and the target
// is back before the step ends.
func TestEventRestart(t *testing.T) {
	long(t)
	// Recovery is judged against an SLO, as a user would set one: without
	// it, the limit is the sub-millisecond p99 before the restart (plus
	// 5 ms), which a fresh process under the race detector can miss.
	r, _, err := demoRun(t, testkit.FreePort(t), "sleep 0.5 && exec ", false, 100, "6s", "p99<100ms,errors<1%", "  - {name: deploy, at: 1s, action: restart}\n")
	if err != nil || len(r.Events) != 1 || r.Events[0].Error != "" {
		t.Fatalf("Run = %v, events %+v; want the restart done", err, r.Events)
	}
	e, s := r.Events[0], r.Steps[0]
	t.Logf("errors %v; event %+v, window %+v", s.Errors, e, e.Window)
	if s.Errors["refused"] == 0 || e.Window == nil || e.Window.Failed == 0 || e.RecoveryS == nil {
		t.Errorf("errors %v, event window %+v, recovery %v (%s): want refused connections during the restart, then recovery", s.Errors, e.Window, e.RecoveryS, e.Recovery)
	}
	if last := s.Series[len(s.Series)-1]; last.Failed > 0 {
		t.Errorf("the step's last second %+v: want the target back", last)
	}
	if strings.Contains(strings.Join(s.Warnings, " "), "the target exited") {
		t.Errorf("a restarted target is reported as exited: %v", s.Warnings)
	}
}

// A rolling restart (the new copy started and ready before the old one
// stops) of a target that can share its port: no request fails.
func TestEventRolling(t *testing.T) {
	long(t)
	r, _, err := demoRun(t, testkit.FreePort(t), "", true, 100, "4s", "", "  - {name: deploy, at: 1s, action: rolling}\n")
	if err != nil || len(r.Events) != 1 || r.Events[0].Error != "" {
		t.Fatalf("Run = %v, events %+v; want the rolling restart done", err, r.Events)
	}
	if s := r.Steps[0]; s.Failed != 0 || s.Completed < 300 {
		t.Errorf("failed %d of %d (%v): want none", s.Failed, s.Completed, s.Errors)
	}
}

// A rolling deploy of a target whose new copy takes half a second to
// start. Both copies answer the ready URL, so its answer says nothing of
// the new one: the old copy is stopped only once the new copy's own
// socket listens on the port. A prober that opens a fresh connection
// every 5 to 20 ms all along is never refused, and no request of the
// load fails.
func TestEventRollingSlowStart(t *testing.T) {
	long(t)
	port := testkit.FreePort(t)
	stop := startProber(t, fmt.Sprintf("127.0.0.1:%d", port))
	r, _, err := demoRun(t, port, "sleep 0.5; exec ", true, 100, "4s", "", "  - {name: deploy, at: 1s, action: rolling}\n")
	probes := stop()
	failed := failedBetweenAnswers(probes)
	if err != nil || len(r.Events) != 1 || r.Events[0].Error != "" {
		t.Fatalf("Run = %v, events %+v; want the rolling deploy done", err, r.Events)
	}
	e, s := r.Events[0], r.Steps[0]
	t.Logf("%d probes; failed while the target was up: %v; event lasted %.3f s: %s", len(probes), failed, e.DurationS, e.Handover)
	if len(probes) < 100 || failed["refused"] != 0 {
		t.Errorf("%d probes, %d refused between the first and last answered: want none refused (the new copy listened before the old one stopped)", len(probes), failed["refused"])
	}
	if e.DurationS < 0.5 || !strings.Contains(e.Handover, fmt.Sprintf("listened on port %d itself", port)) {
		t.Errorf("event lasted %.3f s, handover %q: want it to wait for the new copy's half-second start, on its own socket", e.DurationS, e.Handover)
	}
	if s.Failed != 0 || s.Completed < 300 {
		t.Errorf("failed %d of %d (%v): want none", s.Failed, s.Completed, s.Errors)
	}
}

// A rolling deploy whose new copy never listens (the second start of the
// command only sleeps): the ready URL answers all along, from the old
// copy, but the new one is stopped after the ready timeout, the old one
// goes on serving, the event fails saying why, and the run passes.
func TestEventRollingNewCopyNeverListens(t *testing.T) {
	long(t)
	port := testkit.FreePort(t)
	flag := filepath.Join(t.TempDir(), "started")
	command := fmt.Sprintf(`if [ -e '%s' ]; then exec sleep 60; fi; touch '%s'; exec "$BIN"`, flag, flag)
	p := parsePlan(t, `target: http://127.0.0.1:%d
load: {rates: [100], step: 3s, warmup: 500ms}
http: {timeout: 3s}
monitor:
  command: %q
  env: {BIN: %q, %s: "127.0.0.1:%d", %s: "1"}
  ready: "http://127.0.0.1:%d/health"
  ready_timeout: 1s
  stop_grace: 2s
scenarios: [{request: {url: /health}}]
events:
  - {name: deploy, at: 500ms, action: rolling}
`, port, command, exe(t), demoEnv, port, demoReuseEnv, port)
	r, _, err := runEvents(t, p)
	if err != nil || !r.Passed || len(r.Events) != 1 {
		t.Fatalf("Run = %v, passed %v, events %+v: want the run passed, one event", err, r.Passed, r.Events)
	}
	e, s := r.Events[0], r.Steps[0]
	t.Logf("event lasted %.3f s: %s", e.DurationS, e.Error)
	if !strings.Contains(e.Error, fmt.Sprintf("did not listen on port %d within", port)) || e.DurationS < 0.9 || e.DurationS > 3 {
		t.Errorf("event %+v: want it failed after the 1 s ready timeout, saying the new copy did not listen on port %d", e, port)
	}
	if s.Failed != 0 || s.Completed < 250 {
		t.Errorf("failed %d of %d (%v): want none, the old copy serving on", s.Failed, s.Completed, s.Errors)
	}
}

// A command that fails is reported, with its exit code and output, and
// does not fail the run; required, it stops the run (failure.ErrEventFailed:
// could not run), the step kept.
func TestEventCommandFails(t *testing.T) {
	long(t)
	r, _, err := demoRun(t, testkit.FreePort(t), "", false, 50, "2s", "", "  - {name: migrate, at: 500ms, run: \"echo boom {{.target.pid}}; exit 3\"}\n")
	if err != nil || !r.Passed || len(r.Events) != 1 {
		t.Fatalf("Run = %v, passed %v, events %+v: want the run passed, the event reported", err, r.Passed, r.Events)
	}
	e := r.Events[0]
	if e.ExitCode == nil || *e.ExitCode != 3 || !strings.Contains(e.Output, "boom ") || !strings.Contains(e.Error, "exited with 3") {
		t.Errorf("event %+v: want exit 3, its output and the failure said", e)
	}
	r, _, err = demoRun(t, testkit.FreePort(t), "", false, 50, "2s", "", "  - {name: migrate, at: 500ms, run: \"exit 3\", required: true}\n")
	if !errors.Is(err, failure.ErrEventFailed) || len(r.Steps) != 1 || r.Passed || r.Outcome.Status != results.StatusCouldNotRun {
		t.Errorf("a required event that failed: Run = %v, %d steps, passed %v, outcome %s; want the event failed, the step kept, could not run", err, len(r.Steps), r.Passed, r.Outcome.Status)
	}
}

// A run command's {{.target.url}} goes in shell-quoted: a target URL that
// holds $(...) runs nothing, and the command sees the URL as written, as
// it does in $CEILING_TARGET_URL.
func TestEventCommandTemplateIsQuoted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	injected, seen := filepath.Join(dir, "INJECTED"), filepath.Join(dir, "seen")
	target := "http://127.0.0.1:1/x$(touch${IFS}" + injected + ")'`touch${IFS}" + injected + "`'"
	p := parsePlan(t, `target: %q
load: {rates: [20], step: 500ms, warmup: 0s}
scenarios: [{request: {url: "/ok"}}]
events:
  - {name: probe, at: 200ms, run: "echo {{.target.url}} > %s; echo \"$CEILING_TARGET_URL\" >> %s", required: true}
`, target, seen, seen)
	ex := answering(func(req *transport.Request, out *transport.Outcome) { status(req, out, 200, "ok") })
	s, err := Open(context.Background(), p, Options{Exchanger: ex})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(injected); err == nil {
		t.Errorf("the target URL's $(...) ran: %s exists", injected)
	}
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if want := target + "\n" + target + "\n"; string(got) != want {
		t.Errorf("the command saw\n%q\nwant the URL as written, twice:\n%q", got, want)
	}
}
