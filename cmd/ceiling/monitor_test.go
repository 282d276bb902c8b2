package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

type stepTarget struct {
	Warnings    []string `json:"warnings"`
	DurationS   float64  `json:"duration_s"`
	Interrupted bool     `json:"interrupted"`
	Target      *struct {
		CPUPct  float64 `json:"cpu_pct"`
		RSSMB   float64 `json:"rss_mb"`
		Samples int     `json:"samples"`
		Exited  bool    `json:"exited"`
		Died    string  `json:"died"`
	} `json:"target"`
	Series []struct {
		TargetRSS *float64 `json:"target_rss_mb"`
	} `json:"series"`
}

func readSteps(t *testing.T, path string) []stepTarget {
	t.Helper()
	var r struct {
		Steps []stepTarget `json:"steps"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.Steps
}

// ceiling starts the target itself (this binary's demo-target), waits for
// it, watches its CPU and RSS per step, and stops it at the end.
func TestMonitorCommand(t *testing.T) {
	t.Parallel()
	port := testkit.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := ceiling(t, "run", "--monitor-cmd", fmt.Sprintf("%s demo-target --addr 127.0.0.1:%d", os.Args[0], port),
		"--url", url+"/health", "--rate", "100", "--step", "2500ms", "--warmup", "0s", "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	st := readSteps(t, out)[0]
	if st.Target == nil || st.Target.Samples < 2 || st.Target.RSSMB < 1 || st.Target.Exited {
		t.Errorf("target = %+v, want readings with an RSS", st.Target)
	}
	annotated := 0
	for _, p := range st.Series {
		if p.TargetRSS != nil {
			annotated++
		}
	}
	if annotated == 0 {
		t.Errorf("no per-second point carries the target's RSS")
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond); err == nil {
		c.Close()
		t.Errorf("the target still listens after the run: it was not stopped")
	}
	if _, err := os.Stat(out + ".target.log"); err != nil {
		t.Errorf("no target log: %v", err)
	}
}

// A target that never becomes ready is exit 3 with a clear message.
func TestMonitorNeverReady(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.yaml")
	os.WriteFile(plan, []byte(fmt.Sprintf(`target: http://127.0.0.1:%d
load: {rates: [10], step: 1s}
monitor: {command: "sleep 30", ready_timeout: 1s}
scenarios: [{request: {url: /}}]
`, testkit.FreePort(t))), 0o644)
	cmd := ceiling(t, "run", plan, "--out", filepath.Join(dir, "r.json"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	code := exitCode(cmd.Run())
	if code != 3 || !strings.Contains(stderr.String(), "start the target") {
		t.Errorf("exit %d, stderr %q; want 3 and a message about starting the target", code, stderr.String())
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %v, want about the 1s ready timeout", time.Since(start))
	}
}

// A target that dies mid-run is reported, never a crash: the step under
// way ends at the death, and the run stops there (exit 3), its result
// written.
func TestMonitorTargetDies(t *testing.T) {
	t.Parallel()
	port := testkit.FreePort(t)
	out := filepath.Join(t.TempDir(), "r.json")
	script := fmt.Sprintf("%s demo-target --addr 127.0.0.1:%d & child=$!; sleep 2; kill $child; wait; exit 4", os.Args[0], port)
	cmd := ceiling(t, "run", "--monitor-cmd", script, "--url", fmt.Sprintf("http://127.0.0.1:%d/health", port),
		"--rate", "50,50,50", "--step", "1500ms", "--warmup", "0s", "--timeout", "300ms", "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	code := exitCode(cmd.Run())
	if code != 3 || !strings.Contains(stderr.String(), "the target died") || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("exit %d, want 3 with the target's death said; stderr:\n%s", code, stderr.String())
	}
	steps := readSteps(t, out)
	last := steps[len(steps)-1]
	said := strings.Contains(strings.Join(last.Warnings, " "), "the target died")
	if len(steps) == 3 || last.Target == nil || !last.Target.Exited || last.Target.Died != "exited with status 4" || !said {
		t.Errorf("%d steps, last step target %+v, warnings %q; want the run stopped at the death, reported as died", len(steps), last.Target, last.Warnings)
	}
	if !last.Interrupted || last.DurationS >= 1.5 {
		t.Errorf("last step partial %v after %.2fs: want it cut at the death", last.Interrupted, last.DurationS)
	}
}
