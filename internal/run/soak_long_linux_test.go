//go:build long && linux

package run

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// projections keeps, after each window of a soak, the projection of one
// figure and the end of the window it was made at.
type projections struct {
	figure string
	made   []float64
	at     []float64
}

func (p *projections) Start(*results.Result) error { return nil }
func (p *projections) Step(*Finished) error        { return nil }
func (p *projections) Stop(*results.Result) error  { return nil }
func (p *projections) Window(res *results.Result) error {
	for _, t := range res.Soak.Trends {
		if t.Figure == p.figure && t.Projection != nil && !t.Projection.Reached {
			p.made, p.at = append(p.made, res.Soak.HeldS), append(p.at, t.Projection.AtS)
		}
	}
	return nil
}

// soakOf parses and validates a plan of the soak's tests, with the test
// binary started again as its target ($BIN).
func soakOf(t *testing.T, text string, args ...any) *plan.Plan {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text = strings.ReplaceAll(fmt.Sprintf(text, args...), "$$BIN", bin)
	p, err := plan.Parse("plan.yaml", []byte(text))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, text)
	}
	return p
}

// memoryCgroup makes a cgroup v1 memory group limited to mib MiB, which
// the test's cleanup removes.
func memoryCgroup(t *testing.T, mib int) string {
	t.Helper()
	dir := filepath.Join("/sys/fs/cgroup/memory", fmt.Sprintf("ceiling-test-soak-%d", os.Getpid()))
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil || os.Geteuid() != 0 {
		t.Skip("the leak's truth needs a cgroup v1 memory controller, written as root")
	}
	testkit.RemoveCgroup(t, dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	limit := strconv.Itoa(mib << 20)
	for _, f := range []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(limit), 0o644); err != nil && f == "memory.limit_in_bytes" {
			t.Fatal(err)
		}
	}
	return dir
}

// A target that leaks 2 MB a second in a cgroup limited to 96 MiB: from
// 20 s on, every window projects its memory to the cgroup's limit within
// 10 % of when the kernel's OOM killer really kills it, and
// the run reports the kill: the target died, by the OOM killer, the soak
// stopped there, the outcome says so.
func TestSoakLeakProjectedToTheOOMKill(t *testing.T) {
	t.Parallel()
	cg := memoryCgroup(t, 96)
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	p := soakOf(t, `
target: http://%s
load: {rates: [20], warmup: 1s, soak: {for: 3m, window: 3s}}
monitor:
  command: 'echo 0 > %s/cgroup.procs && exec "$BIN"'
  env: {BIN: "$$BIN", %s: leak, %s: %q}
  ready_timeout: 10s
scenarios: [{request: {url: /}}]
`, addr, cg, soakTargetEnv, soakAddrEnv, addr)
	proj := &projections{figure: "target.cgroup_mb"}
	dir := t.TempDir()
	if d := os.Getenv("SOAK_TEST_KEEP"); d != "" {
		dir = d
	}
	s, err := Open(t.Context(), p, Options{Out: filepath.Join(dir, "result.json"), Outputs: []Output{proj}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context())
	if !errors.Is(err, failure.ErrTargetDied) || res == nil {
		t.Fatalf("Run = %v, want the target's death", err)
	}
	k := res.Soak
	died := -1.0
	for _, e := range k.Episodes {
		if e.Kind == results.EpisodeDied {
			died = e.StartS
		}
	}
	if died < 0 || !strings.Contains(k.Stopped, "OOM killer") || res.Outcome.Status != results.StatusCouldNotRun || !strings.Contains(res.Outcome.Summary(), "OOM killer") {
		t.Fatalf("soak stopped %q, episodes %+v, outcome %+v: want the OOM kill reported", k.Stopped, k.Episodes, res.Outcome)
	}
	checked := 0
	for i, made := range proj.made {
		t.Logf("after %3.0f s: reaches the limit at %5.1f s; killed at %.1f s (%+.1f%%)", made, proj.at[i], died, 100*(proj.at[i]-died)/died)
		if made < 20 {
			continue
		}
		checked++
		if math.Abs(proj.at[i]-died)/died > 0.10 {
			t.Errorf("after %.0f s the projection was %.1f s, the kill came at %.1f s: more than 10%% apart", made, proj.at[i], died)
		}
	}
	if checked < 3 {
		t.Errorf("%d projections made after 20 s, want several", checked)
	}
	for _, tr := range k.Trends {
		if tr.Figure == "target.cgroup_mb" {
			t.Logf("%s: %s, %s", tr.Name, tr.Verdict, tr.Why)
			if tr.Verdict != results.Drifting || math.Abs(tr.SlopePerH-7200)/7200 > 0.10 {
				t.Errorf("RSS trend %+v, want DRIFTING at about 7200 MB/h", tr)
			}
		}
	}
	t.Logf("outcome: %s", res.Outcome.Summary())
}

// A flat target that restarts once (its shell starts it again): its
// memory, CPU, descriptors and threads, and the error rate, are STABLE,
// and the restart is an episode at its time, not a trend.
func TestSoakRestartOnce(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	mark := filepath.Join(t.TempDir(), "restarted")
	p := soakOf(t, `
target: http://%s
load: {rates: [50], warmup: 1s, soak: {for: 90s, window: 3s}}
monitor:
  command: 'while :; do "$BIN"; sleep 0.2; done'
  env: {BIN: "$$BIN", %s: restart, %s: %q, %s: %q, %s: 20s}
  ready_timeout: 10s
scenarios: [{request: {url: /}}]
`, addr, soakTargetEnv, soakAddrEnv, addr, soakMarkEnv, mark, soakAfterEnv)
	s, err := Open(t.Context(), p, Options{Out: filepath.Join(t.TempDir(), "result.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	k := res.Soak
	b, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	exited, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		t.Fatal(err)
	}
	when := exited.Sub(k.StartedAt).Seconds()
	restarts := 0
	for _, e := range k.Episodes {
		t.Logf("episode: %s", e.Text)
		if e.Kind == results.EpisodeRestart {
			restarts++
			if math.Abs(e.StartS-when) > 2 {
				t.Errorf("restart listed at %.1f s, the target exited at %.1f s", e.StartS, when)
			}
		}
	}
	if restarts != 1 {
		t.Errorf("%d restarts listed, want 1", restarts)
	}
	for _, w := range k.Windows {
		if w.Target != nil && w.Target.RSSMB != nil && w.Ceiling != nil && w.Ceiling.RSSMB != nil {
			t.Logf("window %3.0f–%3.0f s: target RSS %.1f MB, ceiling's %.1f MB, heap %.1f MB", w.StartS, w.EndS, *w.Target.RSSMB, *w.Ceiling.RSSMB, w.Ceiling.HeapMB)
		}
	}
	for _, tr := range k.Trends {
		t.Logf("%s: %s, %s", tr.Name, tr.Verdict, tr.Why)
		// The target's own figures, and its errors: a restart makes none of
		// them a trend. Latency on a shared machine follows the machine's
		// other work as much as the target's, and ceiling's own warm-up is
		// the bench's to judge: both are logged only.
		judged := strings.HasPrefix(tr.Figure, "target.") || tr.Figure == "error_rate"
		if judged && tr.Verdict != results.Stable {
			t.Errorf("%s is %s: a flat target that restarted once, want STABLE", tr.Name, tr.Verdict)
		}
	}
}
