//go:build linux

package monitor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// writeFiles creates files (path → content) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCgroupFakeHierarchies(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"cpu,cpuacct/docker/abc/cpuacct.usage":         "2500000000\n",
		"memory/docker/abc/memory.usage_in_bytes":      "104857600\n",
		"unified/svc/cpu.stat":                         "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n",
		"unified/svc/memory.current":                   "52428800\n",
		"memory/only-memory/memory.usage_in_bytes":     "1\n",
		"cpu,cpuacct/bad/cpuacct.usage":                "not a number\n",
		"memory/bad/memory.usage_in_bytes":             "1\n",
		"v2nousage/cpu.stat":                           "user_usec 7\n",
		"v2nousage/memory.current":                     "8\n",
		"memory/docker/abc/cgroup.procs":               "",
		"cpu,cpuacct/docker/abc/cgroup.clone_children": "0\n",
	})
	elsewhere := t.TempDir()
	writeFiles(t, elsewhere, map[string]string{"cpu.stat": "usage_usec 7\n", "memory.current": "8\n"})
	tests := []struct {
		name    string
		path    string
		cpu     time.Duration
		mem     int64
		wantErr string
	}{
		{"v1 relative", "docker/abc", 2500 * time.Millisecond, 100 << 20, ""},
		{"v1 as /proc/pid/cgroup writes it", "/docker/abc", 2500 * time.Millisecond, 100 << 20, ""},
		{"v1 full memory path", filepath.Join(root, "memory/docker/abc"), 2500 * time.Millisecond, 100 << 20, ""},
		{"v1 full cpu path", filepath.Join(root, "cpu,cpuacct/docker/abc"), 2500 * time.Millisecond, 100 << 20, ""},
		{"v2 hybrid relative", "svc", 1500 * time.Millisecond, 50 << 20, ""},
		{"v2 hybrid full", filepath.Join(root, "unified/svc"), 1500 * time.Millisecond, 50 << 20, ""},
		{"v2 mounted elsewhere", elsewhere, 7 * time.Microsecond, 8, ""},
		{"no such group", "nope", 0, 0, "no CPU and memory accounting found"},
		{"memory only", "only-memory", 0, 0, "no CPU and memory accounting found"},
		{"unparsable", "bad", 0, 0, "parse"},
		{"v2 without usage_usec", filepath.Join(root, "v2nousage"), 0, 0, "no usage_usec"},
		{"empty", " ", 0, 0, "empty path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cgroupAt(root, tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("cgroupAt(%q) = %v, want an error with %q", tc.path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("cgroupAt(%q) = %v", tc.path, err)
			}
			s, err := c.Read()
			if err != nil || s.CPU != tc.cpu || s.RSSBytes != tc.mem || !s.Alive {
				t.Errorf("Read() = %+v, %v; want CPU %v, memory %d, alive", s, err, tc.cpu, tc.mem)
			}
		})
	}
}

func TestCgroupRemoved(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"unified/gone/cpu.stat":       "usage_usec 2000000\n",
		"unified/gone/memory.current": "4096\n",
	})
	c, err := cgroupAt(root, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "unified/gone")); err != nil {
		t.Fatal(err)
	}
	s, err := c.Read()
	if err != nil || s.Alive || s.CPU != 2*time.Second {
		t.Errorf("Read() after removal = %+v, %v; want not alive with CPU 2s kept", s, err)
	}
}

// selfCgroups returns the paths in /proc/self/cgroup: the v2 one (line
// "0::path") and the v1 cpuacct and memory ones.
func selfCgroups(t *testing.T) (v2 string, v1 []string) {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch ctl := parts[1]; {
		case parts[0] == "0" && ctl == "":
			v2 = parts[2]
		case strings.Contains(ctl, "cpuacct") || ctl == "memory":
			v1 = append(v1, parts[2])
		}
	}
	return v2, v1
}

// TestCgroupSelf reads the cgroup this test runs in, on this machine's own
// hierarchy, while a child it starts (and so in the same group) spins.
func TestCgroupSelf(t *testing.T) {
	t.Parallel()
	v2, v1 := selfCgroups(t)
	var src Source
	var used string
	var errs []string
	for _, path := range append(v1, v2) {
		if path == "" {
			continue
		}
		s, err := Cgroup(path)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		src, used = s, path
		break
	}
	if src == nil {
		t.Skipf("no cgroup of this process has both CPU and memory accounting here (v1 %q, v2 %q): %s",
			v1, v2, strings.Join(errs, "; "))
	}
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	testkit.Start(t, cmd)
	pct, s := measureCPU(t, src, cpuSpan)
	t.Logf("cgroup %q (%s): CPU %.1f%% with one spinning child, memory %.1f MiB", used, src.(*cgroup).cpuFile, pct, float64(s.RSSBytes)/mib)
	// The group holds at least the spinning child; it may hold more.
	if pct < 60 {
		t.Errorf("CPU = %.1f%%, want at least 60%% (a spinning child is in the group)", pct)
	}
	if !s.Alive || s.RSSBytes <= 0 {
		t.Errorf("Read() = %+v, want alive with some memory", s)
	}
}

// TestCgroupV2Self reads this process's v2 group, where it has one with
// CPU and memory accounting.
func TestCgroupV2Self(t *testing.T) {
	v2, _ := selfCgroups(t)
	if v2 == "" {
		t.Skip("this process is in no v2 cgroup")
	}
	var c *cgroup
	var errs []string
	for _, dir := range []string{filepath.Join(cgroupMount, v2), filepath.Join(cgroupMount, "unified", v2)} {
		got, err := cgroupAt(cgroupMount, dir)
		if err == nil && got.v2 {
			c = got
			break
		}
		errs = append(errs, fmt.Sprint(err))
	}
	if c == nil {
		t.Skipf("v2 group %q has no cpu.stat and memory.current here (v2 has no controllers on this machine): %s", v2, strings.Join(errs, "; "))
	}
	s, err := c.Read()
	if err != nil || s.CPU <= 0 || s.RSSBytes <= 0 {
		t.Errorf("Read() = %+v, %v; want some CPU and memory", s, err)
	}
}
