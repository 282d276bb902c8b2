package monitor

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MemoryLimit is the most memory a target may use before the kernel's
// OOM killer ends it: the lowest limit set on its cgroup or an ancestor
// (v2 memory.max, v1 memory.limit_in_bytes).
type MemoryLimit struct {
	// Bytes is the limit.
	Bytes int64
	// Dir is the cgroup directory that sets it, where its OOM kills are
	// counted (OOMKills).
	Dir string
}

// unlimited is the least a v1 limit reads when none is set (the largest
// multiple of the page size below 2^63).
const unlimited = 1 << 60

// MemoryLimitOf returns the memory limit of process pid's cgroups, or of
// cgroup (a path as monitor.cgroup takes it) when it is not empty; false
// when none is set or it cannot be read (on macOS and Windows, which have
// no cgroups).
func MemoryLimitOf(pid int, cgroup string) (MemoryLimit, bool) {
	return memoryLimitAt(cgroupMount, "/proc", pid, cgroup)
}

func memoryLimitAt(root, proc string, pid int, cgroup string) (MemoryLimit, bool) {
	var dirs []string
	switch {
	case cgroup != "":
		dirs = memoryDirs(root, cgroup)
	case pid > 0:
		dirs = procMemoryDirs(root, filepath.Join(proc, strconv.Itoa(pid), "cgroup"))
	}
	var best MemoryLimit
	for _, d := range dirs {
		if b, ok := memoryLimitIn(d); ok && (best.Bytes == 0 || b < best.Bytes) {
			best = MemoryLimit{Bytes: b, Dir: d}
		}
	}
	return best, best.Bytes > 0
}

// memoryDirs lists where a memory limit on cgroup path may be set: the
// group and its ancestors, in the v2 and the v1 memory layouts.
func memoryDirs(root, path string) []string {
	clean := filepath.Clean(path)
	rel := strings.TrimPrefix(clean, "/")
	if clean == root || strings.HasPrefix(clean, root+"/") {
		out := ancestors(root, clean)
		first, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(clean, root), "/"), "/")
		if first != "unified" && first != "memory" && !strings.Contains(first, "cpu") {
			return out
		}
		rel = rest
	}
	var out []string
	for _, base := range []string{root, filepath.Join(root, "unified"), filepath.Join(root, "memory")} {
		out = append(out, ancestors(base, filepath.Join(base, rel))...)
	}
	return out
}

// procMemoryDirs reads a /proc/<pid>/cgroup file: the v2 group ("0::/x")
// and the v1 memory controller's group ("7:memory:/x"), with ancestors.
func procMemoryDirs(root, file string) []string {
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
		case slices.Contains(strings.Split(ctl, ","), "memory"):
			base := filepath.Join(root, ctl)
			out = append(out, ancestors(base, filepath.Join(base, parts[2]))...)
		}
	}
	return out
}

// memoryLimitIn reads the memory limit set in dir, if one is.
func memoryLimitIn(dir string) (int64, bool) {
	if b, err := os.ReadFile(filepath.Join(dir, "memory.max")); err == nil {
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil && v > 0 // "max": none
	}
	v, err := readInt(filepath.Join(dir, "memory.limit_in_bytes"))
	return v, err == nil && v > 0 && v < unlimited
}

// OOMKills counts the processes the kernel's OOM killer has ended in the
// limit's cgroup so far (v2 memory.events, v1 memory.oom_control: the
// oom_kill line); false when the kernel does not count them there.
func (l MemoryLimit) OOMKills() (int64, bool) {
	for _, name := range []string{"memory.events", "memory.oom_control"} {
		b, err := os.ReadFile(filepath.Join(l.Dir, name))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// Used returns the memory the limit's cgroup holds that the kernel cannot
// reclaim without killing: its working set, the memory charged to it
// (v2 memory.current, v1 memory.usage_in_bytes) less the file pages not
// used lately (memory.stat's inactive_file, total_inactive_file in v1),
// which the kernel drops before it kills. It is what the limit is
// reached by: a process's RSS counts pages (its program's own file, for
// one) that are charged to another group, or to none. False when it
// cannot be read.
func (l MemoryLimit) Used() (int64, bool) {
	usage, err := readInt(filepath.Join(l.Dir, "memory.current"))
	inactive := "inactive_file"
	if err != nil {
		usage, err = readInt(filepath.Join(l.Dir, "memory.usage_in_bytes"))
		inactive = "total_inactive_file"
	}
	if err != nil {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(l.Dir, "memory.stat"))
	if err != nil {
		return usage, true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, inactive+" "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n <= usage {
				return usage - n, true
			}
		}
	}
	return usage, true
}

// OpenFileLimit returns process pid's limit on open file descriptors
// (its soft RLIMIT_NOFILE, `ulimit -n`, from /proc/<pid>/limits); false
// when it has none or it cannot be read (not Linux).
func OpenFileLimit(pid int) (int, bool) {
	return openFileLimitAt("/proc", pid)
}

func openFileLimitAt(proc string, pid int) (int, bool) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "limits"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "Max open files")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.Atoi(f[0]) // "unlimited" is no limit
		return n, err == nil && n > 0
	}
	return 0, false
}
