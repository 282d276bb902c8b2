//go:build linux

package monitor

import (
	"path/filepath"
	"testing"
)

// The lowest limit on a process's cgroups or their ancestors is its
// memory limit, v1 or v2; "max" and v1's huge "unlimited" are none; its
// OOM kills are counted where it is set.
func TestMemoryLimit(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	write(t, filepath.Join(proc, "1", "cgroup"), "7:memory:/app/web\n4:cpu,cpuacct:/app/web\n")
	write(t, filepath.Join(root, "memory", "app", "memory.limit_in_bytes"), "536870912\n")
	write(t, filepath.Join(root, "memory", "app", "web", "memory.limit_in_bytes"), "9223372036854771712\n")
	write(t, filepath.Join(root, "memory", "app", "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
	write(t, filepath.Join(root, "memory", "app", "memory.usage_in_bytes"), "300000000\n")
	write(t, filepath.Join(root, "memory", "app", "memory.stat"), "cache 5\ninactive_file 7\ntotal_inactive_file 100000000\n")
	write(t, filepath.Join(proc, "2", "cgroup"), "0::/svc\n")
	write(t, filepath.Join(root, "svc", "memory.max"), "268435456\n")
	write(t, filepath.Join(root, "svc", "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
	write(t, filepath.Join(root, "svc", "memory.current"), "200000000\n")
	write(t, filepath.Join(root, "svc", "memory.stat"), "anon 1\ninactive_file 50000000\n")
	write(t, filepath.Join(proc, "3", "cgroup"), "0::/free\n")
	write(t, filepath.Join(root, "free", "memory.max"), "max\n")
	tests := []struct {
		name   string
		pid    int
		cgroup string
		want   MemoryLimit
		ok     bool
		kills  int64
		used   int64
	}{
		{"v1, set on the parent", 1, "", MemoryLimit{536870912, filepath.Join(root, "memory", "app")}, true, 2, 200000000},
		{"v2", 2, "", MemoryLimit{268435456, filepath.Join(root, "svc")}, true, 1, 150000000},
		{"v2, max", 3, "", MemoryLimit{}, false, 0, 0},
		{"a cgroup named", 0, "/app/web", MemoryLimit{536870912, filepath.Join(root, "memory", "app")}, true, 2, 200000000},
		{"no such process", 9, "", MemoryLimit{}, false, 0, 0},
	}
	for _, tc := range tests {
		got, ok := memoryLimitAt(root, proc, tc.pid, tc.cgroup)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: memoryLimitAt = %+v, %v, want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
			continue
		}
		if kills, _ := got.OOMKills(); ok && kills != tc.kills {
			t.Errorf("%s: OOMKills() = %d, want %d", tc.name, kills, tc.kills)
		}
		if used, _ := got.Used(); ok && used != tc.used {
			t.Errorf("%s: Used() = %d, want %d (the usage less the inactive file pages)", tc.name, used, tc.used)
		}
	}
}

func TestOpenFileLimit(t *testing.T) {
	proc := t.TempDir()
	write(t, filepath.Join(proc, "1", "limits"), "Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax open files            1024                 1048576              files     \n")
	write(t, filepath.Join(proc, "2", "limits"), "Max open files            unlimited            unlimited            files     \n")
	for pid, want := range map[int]int{1: 1024, 2: 0, 3: 0} {
		if got, ok := openFileLimitAt(proc, pid); got != want || ok != (want > 0) {
			t.Errorf("openFileLimitAt(%d) = %d, %v, want %d", pid, got, ok, want)
		}
	}
}
