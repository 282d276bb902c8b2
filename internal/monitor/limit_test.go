//go:build linux

package monitor

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A CPU quota on a group or an ancestor caps the limit, in v2 and v1
// layouts, found from a cgroup path or from /proc/<pid>/cgroup; none, or
// one above the cores, leaves the cores.
func TestCPULimitQuota(t *testing.T) {
	cores := 100 * float64(onlineCPUs())
	root, proc := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "docker", "cpu.max"), "max 100000\n")
	write(t, filepath.Join(root, "docker", "half", "cpu.max"), "50000 100000\n")
	write(t, filepath.Join(root, "docker", "half", "inner", "cpu.max"), "max 100000\n")
	write(t, filepath.Join(root, "cpu,cpuacct", "v1", "quarter", "cpu.cfs_quota_us"), "25000\n")
	write(t, filepath.Join(root, "cpu,cpuacct", "v1", "quarter", "cpu.cfs_period_us"), "100000\n")
	write(t, filepath.Join(root, "cpu,cpuacct", "v1", "free", "cpu.cfs_quota_us"), "-1\n")
	write(t, filepath.Join(root, "cpu,cpuacct", "v1", "free", "cpu.cfs_period_us"), "100000\n")
	write(t, filepath.Join(root, "wide", "cpu.max"), strconv.Itoa(int(cores)*2000)+" 100000\n")
	write(t, filepath.Join(proc, "42", "cgroup"), "4:cpu,cpuacct:/v1/quarter\n1:memory:/v1/quarter\n")
	write(t, filepath.Join(proc, "43", "cgroup"), "0::/docker/half/inner\n")
	tests := []struct {
		name   string
		pid    int
		cgroup string
		want   float64
	}{
		{"v2 group with a quota", 0, "docker/half", 50},
		{"v2 quota on an ancestor", 0, filepath.Join(root, "docker", "half", "inner"), 50},
		{"v2 without a quota", 0, "docker", cores},
		{"v1 quota", 0, "/v1/quarter", 25},
		{"v1 quota, from the memory controller's path", 0, filepath.Join(root, "memory", "v1", "quarter"), 25},
		{"v1 without a quota", 0, "v1/free", cores},
		{"a quota above the cores", 0, "wide", cores},
		{"from /proc, v1", 42, "", 25},
		{"from /proc, v2", 43, "", 50},
		{"nothing readable", 0, "absent", cores},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// pids 42 and 43 are fake: their affinity is not readable here,
			// or is the whole machine's; either way the quota decides.
			got, why := cpuLimitAt(root, proc, tt.pid, tt.cgroup)
			if got != tt.want {
				t.Errorf("cpuLimitAt(%d, %q) = %v (%s), want %v", tt.pid, tt.cgroup, got, why, tt.want)
			}
		})
	}
}

// A process pinned to one CPU can use one core.
func TestCPULimitAffinity(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	cmd := exec.Command("sleep", "5")
	testkit.Group(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var one unix.CPUSet
	one.Set(0)
	if err := unix.SchedSetaffinity(cmd.Process.Pid, &one); err != nil {
		t.Skip("cannot set affinity:", err)
	}
	if got, why := cpuLimitAt(t.TempDir(), t.TempDir(), cmd.Process.Pid, ""); got != 100 || why != "CPU affinity" {
		t.Errorf("limit of a process pinned to CPU 0 = %v (%s), want 100 (CPU affinity)", got, why)
	}
}
