package monitor

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// CPULimit returns the most CPU a target can use, in percent of one core,
// and what sets it: the CPUs the process may run on (its affinity: taskset,
// cpusets; without a pid, the machine's online CPUs), narrowed by a CPU
// quota (cgroup v2 cpu.max, v1 cpu.cfs_quota_us ÷ cpu.cfs_period_us) on its
// cgroup or any ancestor. cgroup "" reads pid's own cgroups (from
// /proc/<pid>/cgroup); a cgroup path (as for Cgroup) is read instead. What
// cannot be read is left out: on macOS and Windows, which have no /sys,
// cgroups or affinity to read here, the limit is runtime.NumCPU cores.
func CPULimit(pid int, cgroup string) (pct float64, why string) {
	return cpuLimitAt(cgroupMount, "/proc", pid, cgroup)
}

func cpuLimitAt(root, proc string, pid int, cgroup string) (float64, string) {
	cores := onlineCPUs()
	pct, why := 100*float64(cores), "cores"
	if pid > 0 {
		if n := affinity(pid); n > 0 && n < cores {
			pct, why = 100*float64(n), "CPU affinity"
		}
	}
	var dirs []string
	switch {
	case cgroup != "":
		dirs = quotaDirs(root, cgroup)
	case pid > 0:
		dirs = procQuotaDirs(root, filepath.Join(proc, strconv.Itoa(pid), "cgroup"))
	}
	for _, d := range dirs {
		if q, ok := quotaAt(d); ok && q < pct {
			pct, why = q, "CPU quota of "+d
		}
	}
	return pct, why
}

// quotaDirs lists the directories where a quota on cgroup path may be
// written: the group and its ancestors, in v2 and v1 layouts.
func quotaDirs(root, path string) []string {
	clean := filepath.Clean(path)
	rel := strings.TrimPrefix(clean, "/")
	if clean == root || strings.HasPrefix(clean, root+"/") {
		// A full path: a v2 group, or a v1 controller's (memory's, say),
		// whose quota is in the cpu controller at the same place.
		out := ancestors(root, clean)
		first, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(clean, root), "/"), "/")
		if first != "unified" && !strings.Contains(first, "cpu") && first != "memory" {
			return out
		}
		rel = rest
	}
	var out []string
	for _, base := range []string{root, filepath.Join(root, "unified"), filepath.Join(root, "cpu"), filepath.Join(root, "cpu,cpuacct"), filepath.Join(root, "cpuacct,cpu")} {
		out = append(out, ancestors(base, filepath.Join(base, rel))...)
	}
	return out
}

// onlineCPUs counts the machine's online CPUs (/sys/devices/system/cpu/online,
// such as "0-3,6"); runtime.NumCPU, which counts ceiling's own affinity,
// when that cannot be read.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		c := a
		var err2 error
		if isRange {
			c, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || c < a {
			return runtime.NumCPU()
		}
		n += c - a + 1
	}
	if n == 0 {
		return runtime.NumCPU()
	}
	return n
}

// procQuotaDirs reads a /proc/<pid>/cgroup file: the v2 group ("0::/x")
// and the v1 cpu controller's group ("4:cpu,cpuacct:/x"), with ancestors.
func procQuotaDirs(root, file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch ctl := parts[1]; {
		case parts[0] == "0" && ctl == "":
			out = append(out, ancestors(root, filepath.Join(root, parts[2]))...)
			out = append(out, ancestors(filepath.Join(root, "unified"), filepath.Join(root, "unified", parts[2]))...)
		case slices.Contains(strings.Split(ctl, ","), "cpu"):
			base := filepath.Join(root, ctl)
			out = append(out, ancestors(base, filepath.Join(base, parts[2]))...)
		}
	}
	return out
}

// ancestors returns dir and its parents down to (and without) base.
func ancestors(base, dir string) []string {
	var out []string
	for d := filepath.Clean(dir); d != filepath.Clean(base) && strings.HasPrefix(d, filepath.Clean(base)+"/"); d = filepath.Dir(d) {
		out = append(out, d)
	}
	return out
}

// quotaAt reads a CPU quota in dir, in percent of one core: cpu.max ("max
// 100000" means none) or cpu.cfs_quota_us (-1 means none) over
// cpu.cfs_period_us.
func quotaAt(dir string) (float64, bool) {
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			q, err1 := strconv.ParseFloat(f[0], 64)
			p, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && q > 0 && p > 0 {
				return 100 * q / p, true
			}
		}
		return 0, false
	}
	q, err1 := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return 100 * float64(q) / float64(p), true
}

// CPUQuotaDirs lists the directories where a CPU quota on cgroup (a path
// as for Cgroup) may be written, which CPULimit reads: the group and its
// ancestors, in the v2 layout and in v1's cpu hierarchy.
func CPUQuotaDirs(cgroup string) []string { return quotaDirs(cgroupMount, cgroup) }
