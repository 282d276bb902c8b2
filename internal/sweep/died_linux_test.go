//go:build linux

package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// A dead target's row says "OOM-killed at" its limit only when its
// cgroup's memory controller counted an OOM kill and the target was
// killed by SIGKILL; otherwise it says how the target ended, with what the
// counters do show.
func TestRowDied(t *testing.T) {
	killed := control.Exit{Known: true, Code: 137, Signal: "SIGKILL", Shell: true}
	exited := control.Exit{Known: true, Code: 2}
	cases := []struct {
		name      string
		v2        bool
		files     map[string]string // in the group's memory directory
		exit      control.Exit
		memoryMB  int
		died, err string // want: the row's Died, and a part of its Error
	}{
		{"v1 OOM kill", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory.failcnt": "212\n"},
			killed, 4, "OOM-killed at 4 MiB", "its cgroup counted 1 OOM kill"},
		{"v2 OOM kills", true, map[string]string{"memory.events": "low 0\nhigh 0\nmax 40\noom 2\noom_kill 2\noom_group_kill 0\n"},
			killed, 2048, "OOM-killed at 2 GiB", "its cgroup counted 2 OOM kills"},
		{"killed, no OOM kill", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", "memory.failcnt": "0\n"},
			killed, 256, "killed by SIGKILL (its shell's exit status 137)", "killed by SIGKILL"},
		{"exited after an OOM kill in its group", false, map[string]string{"memory.oom_control": "oom_kill 1\n", "memory.failcnt": "9\n"},
			exited, 64, "exited with status 2, after an OOM kill in its group at 64 MiB", "exited with status 2"},
		{"an old kernel: no OOM count, the limit reached", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n", "memory.failcnt": "12\n"},
			killed, 64, "killed by SIGKILL (its shell's exit status 137)", "its memory reached the limit 12 times at 64 MiB (this kernel does not count OOM kills)"},
		{"no OOM kill without a memory limit", true, map[string]string{"memory.events": "max 0\noom_kill 1\n"},
			killed, 0, "OOM-killed (the shape sets no memory limit: the machine's memory ran out)", "its cgroup counted 1 OOM kill"},
		{"counters unreadable", false, map[string]string{},
			killed, 64, "killed by SIGKILL (its shell's exit status 137)", "its cgroup's memory counters could not be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := t.TempDir()
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(mem, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			group := &Limits{v2: c.v2, dirs: []string{t.TempDir(), mem}}
			if c.v2 {
				group.dirs = []string{mem}
			}
			out := filepath.Join(t.TempDir(), "result.json")
			os.WriteFile(out+".target.log", []byte("serving\nKilled\n"), 0o644)
			cpu, rss := 12.0, 3.9
			row := &Row{Name: "1w / 1c", ID: "1w-1c", MemoryMB: c.memoryMB, Throughput: 6.3, P95MS: 2.4, ErrorRate: 0.87, State: "OVERLOADED", CPUPct: &cpu, RSSMB: &rss, Result: out}
			row.died(&run.TargetDiedError{Exit: c.exit, When: "0.9s into the window"}, group, out)
			if row.State != TargetDied || row.Died != c.died || !strings.Contains(row.Error, c.err) || !strings.Contains(row.Error, "0.9s into the window of step 1") {
				t.Errorf("row: state %q, died %q, error %q; want TARGET DIED, %q, an error with %q", row.State, row.Died, row.Error, c.died, c.err)
			}
			if c.died != "" && !strings.HasPrefix(c.died, "OOM-killed") && strings.Contains(row.Died+row.Error, "OOM-killed") {
				t.Errorf("row says OOM-killed without the cgroup's count: %q, %q", row.Died, row.Error)
			}
			if row.Throughput != 0 || row.P95MS != 0 || row.ErrorRate != 0 || row.RSSMB == nil || *row.RSSMB != rss || row.LogTail != "serving\nKilled" {
				t.Errorf("row %+v: want the rates and latencies left out, its memory kept, the log's tail", row)
			}
			cells := row.cells()
			if cells[7] != "TARGET DIED ("+c.died+")" || cells[1] != "-" || cells[4] != "-" || cells[10] != "4 MB" {
				t.Errorf("cells %q: want the state with how, no rate nor p95, its memory", cells)
			}
		})
	}
}
