//go:build linux

package sweep

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// removeWait bounds how long Remove retries a group that still has
// processes: they were killed, and leave it as they exit.
const removeWait = 2 * time.Second

// NewLimits creates a cgroup for a configuration's target and writes its
// CPU quota and memory limit (a zero CPUs or MemoryMB leaves that
// unlimited). It uses cgroup v2 when the unified hierarchy (/sys/fs/cgroup,
// or /sys/fs/cgroup/unified on a hybrid machine) has the cpu and memory
// controllers, and v1 otherwise (the /sys/fs/cgroup/cpu and
// /sys/fs/cgroup/memory hierarchies, plus /sys/fs/cgroup/cpuacct when it is
// mounted apart, so that the group's CPU can be read). The group is
// ceiling-<name>-<random>, at the top of each hierarchy.
//
// When no controller can be written (not root, read-only, none enabled),
// the error matches ErrNoController and says what was found. The caller
// removes the group with Remove.
func NewLimits(name string, c Config) (*Limits, error) {
	return newLimitsAt(cgroupRoot, name, c)
}

// newLimitsAt is NewLimits with hierarchies mounted under root.
func newLimitsAt(root, name string, c Config) (*Limits, error) {
	if math.IsNaN(c.CPUs) || math.IsInf(c.CPUs, 0) || c.CPUs < 0 || c.MemoryMB < 0 {
		return nil, fmt.Errorf("cgroup limits for %s: want CPUs and memory of 0 (no limit) or more", c.Name())
	}
	group, err := groupName(name)
	if err != nil {
		return nil, err
	}
	h, err := detect(root)
	if err != nil {
		return nil, fmt.Errorf("cgroup limits for %s: %w", c.Name(), err)
	}
	l := &Limits{config: c, v2: h.v2}
	for _, parent := range h.parents {
		dir := filepath.Join(parent, group)
		if err := os.Mkdir(dir, 0o755); err != nil {
			l.Remove()
			return nil, fmt.Errorf("cgroup limits for %s: %w", c.Name(), unusable(err))
		}
		l.dirs = append(l.dirs, dir)
	}
	if err := l.write(); err != nil {
		l.Remove()
		return nil, fmt.Errorf("cgroup limits for %s: %w", c.Name(), unusable(err))
	}
	return l, nil
}

// unusable marks an error that shows cgroups cannot be written here (no
// permission, read-only) as ErrNoController.
func unusable(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("%w: %w%s", ErrNoController, err, rootHint())
	}
	return err
}

// rootHint explains a permission error when not running as root.
func rootHint() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf(" (running as uid %d: cgroup limits need root)", os.Geteuid())
	}
	return ""
}

// hierarchies is what detect found: the parent directory of the new group
// in each hierarchy to use.
type hierarchies struct {
	v2      bool
	parents []string // v1: cpu, [cpuacct], memory
}

// detect finds the hierarchies to use: v2 if a unified hierarchy has cpu
// and memory (enabling them for its children if need be), else v1's cpu and
// memory hierarchies.
func detect(root string) (hierarchies, error) {
	var why []string
	for _, dir := range []string{root, filepath.Join(root, "unified")} {
		ctl, err := readFile(filepath.Join(dir, "cgroup.controllers"))
		if err != nil {
			continue
		}
		have := strings.Fields(ctl)
		if !slices.Contains(have, "cpu") || !slices.Contains(have, "memory") {
			why = append(why, fmt.Sprintf("v2 %s has controllers %q, not cpu and memory", dir, ctl))
			continue
		}
		if err := enable(dir); err != nil {
			why = append(why, fmt.Sprintf("v2 %s: %v", dir, err))
			continue
		}
		return hierarchies{v2: true, parents: []string{dir}}, nil
	}
	cpu, mem := filepath.Join(root, "cpu"), filepath.Join(root, "memory")
	switch {
	case !exists(filepath.Join(cpu, "cpu.cfs_quota_us")):
		why = append(why, fmt.Sprintf("v1: no cpu hierarchy (%s)", filepath.Join(cpu, "cpu.cfs_quota_us")))
	case !exists(filepath.Join(mem, "memory.limit_in_bytes")):
		why = append(why, fmt.Sprintf("v1: no memory hierarchy (%s)", filepath.Join(mem, "memory.limit_in_bytes")))
	default:
		parents := []string{cpu}
		if acct := filepath.Join(root, "cpuacct"); !exists(filepath.Join(cpu, "cpuacct.usage")) &&
			exists(filepath.Join(acct, "cpuacct.usage")) {
			parents = append(parents, acct) // mounted apart: the group's CPU is read there
		}
		return hierarchies{parents: append(parents, mem)}, nil
	}
	return hierarchies{}, fmt.Errorf("%w: %s%s", ErrNoController, strings.Join(why, "; "), rootHint())
}

// enable makes sure the cpu and memory controllers are enabled for the
// children of a v2 group (its cgroup.subtree_control).
func enable(dir string) error {
	file := filepath.Join(dir, "cgroup.subtree_control")
	on, err := readFile(file)
	if err != nil {
		return err
	}
	have := strings.Fields(on)
	if slices.Contains(have, "cpu") && slices.Contains(have, "memory") {
		return nil
	}
	if err := writeFile(file, "+cpu +memory"); err != nil {
		return fmt.Errorf("enable cpu and memory for its groups: %w", err)
	}
	return nil
}

// write writes the configuration's CPU quota and memory limit.
func (l *Limits) write() error {
	c := l.config
	quota := max(int64(math.Round(c.CPUs*cfsPeriod)), minQuota)
	bytes := int64(c.MemoryMB) << 20
	var files [][2]string // file, value, in order
	if l.v2 {
		dir := l.dirs[0]
		if c.CPUs > 0 {
			files = append(files, [2]string{filepath.Join(dir, "cpu.max"), fmt.Sprintf("%d %d", quota, cfsPeriod)})
		}
		if c.MemoryMB > 0 {
			files = append(files, [2]string{filepath.Join(dir, "memory.max"), strconv.FormatInt(bytes, 10)})
			if f := filepath.Join(dir, "memory.swap.max"); exists(f) {
				files = append(files, [2]string{f, "0"}) // the limit is on memory, not memory and swap
			}
		}
	} else {
		cpu, mem := l.dirs[0], l.dirs[len(l.dirs)-1]
		if c.CPUs > 0 {
			files = append(files,
				[2]string{filepath.Join(cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)},
				[2]string{filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10)})
		}
		if c.MemoryMB > 0 {
			files = append(files, [2]string{filepath.Join(mem, "memory.limit_in_bytes"), strconv.FormatInt(bytes, 10)})
			// With swap accounting (memsw, as the hierarchy's root shows),
			// the same limit on memory and swap: no swapping past it.
			if exists(filepath.Join(filepath.Dir(mem), "memory.memsw.limit_in_bytes")) {
				files = append(files, [2]string{filepath.Join(mem, "memory.memsw.limit_in_bytes"), strconv.FormatInt(bytes, 10)})
			}
		}
	}
	for _, f := range files {
		if err := writeFile(f[0], f[1]); err != nil {
			return fmt.Errorf("write %q: %w", f[1], err)
		}
	}
	return nil
}

// Remove removes the group from every hierarchy. It kills nothing: the
// caller stops the target first. A group whose processes are still exiting
// is busy; Remove tries again for up to two seconds. A group already gone
// is not an error, so Remove may be called more than once.
func (l *Limits) Remove() error {
	var errs []error
	deadline := time.Now().Add(removeWait)
	for i := len(l.dirs) - 1; i >= 0; i-- {
		for {
			err := os.Remove(l.dirs[i])
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				break
			}
			if errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond) // bounded by removeWait
				continue
			}
			errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
			break
		}
	}
	return errors.Join(errs...)
}

// MemoryEvents reads what the group's memory controller counted: OOM
// kills and hits of the limit. Read it before Remove.
func (l *Limits) MemoryEvents() (MemoryEvents, error) {
	if l.v2 {
		f := filepath.Join(l.dirs[0], "memory.events")
		ev, err := readKeyed(f)
		if err != nil {
			return MemoryEvents{}, err
		}
		kills, ok := ev["oom_kill"]
		if !ok {
			kills = -1
		}
		return MemoryEvents{OOMKills: kills, LimitHits: ev["max"]}, nil
	}
	mem := l.dirs[len(l.dirs)-1]
	ctl, err := readKeyed(filepath.Join(mem, "memory.oom_control"))
	if err != nil {
		return MemoryEvents{}, err
	}
	kills, ok := ctl["oom_kill"]
	if !ok {
		kills = -1 // before Linux 4.13: not counted
	}
	fail, err := readFile(filepath.Join(mem, "memory.failcnt"))
	if err != nil {
		return MemoryEvents{}, fmt.Errorf("read memory.failcnt: %w", err)
	}
	hits, err := strconv.ParseInt(fail, 10, 64)
	if err != nil {
		return MemoryEvents{}, fmt.Errorf("read memory.failcnt: %q is not a count", fail)
	}
	return MemoryEvents{OOMKills: kills, LimitHits: hits}, nil
}

// readKeyed reads a cgroup file of "key value" lines (memory.events,
// memory.oom_control) into a map of its counts.
func readKeyed(path string) (map[string]int64, error) {
	text, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	out := map[string]int64{}
	for line := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// cfsPeriod is the CFS period written with a quota: 100 ms, the kernel's
// default. A quota of 0.5 CPU lets the group run 50 ms of every 100 ms.
const cfsPeriod = 100_000 // µs

// minQuota is the smallest CFS quota the kernel accepts: 1 ms.
const minQuota = 1000 // µs

// groupName returns the name of a new group: ceiling-<name>-<random>-pid<N>,
// the name reduced to letters, digits, '.', '_' and '-' and at most 48 of
// them, 8 random hex digits so that two sweeps never share a group, and the
// pid of the ceiling that made it (RemoveStale: a group whose maker is gone
// was left behind).
func groupName(name string) (string, error) {
	var b strings.Builder
	dash := false
	for _, r := range name {
		ok := r == '.' || r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		switch {
		case ok:
			b.WriteRune(r)
			dash = r == '-'
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	clean := strings.Trim(b.String(), "-.")
	if clean == "" {
		clean = "target"
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("name cgroup: %w", err)
	}
	return "ceiling-" + clean + "-" + hex.EncodeToString(rnd[:]) + "-pid" + strconv.Itoa(os.Getpid()), nil
}

// staleName matches a group's name and gives its maker's pid.
var staleName = regexp.MustCompile(`^ceiling-.+-[0-9a-f]{8}-pid([0-9]+)$`)

// RemoveStale removes the groups a ceiling that is no longer running left
// behind (it was killed before it could remove them: kill -9, a crash),
// killing what still runs in them, and returns their names. A group whose
// maker still runs (another sweep at the same time) is left alone, and so
// is one not named by this version (no maker's pid in its name) unless it
// is empty.
func RemoveStale() ([]string, error) {
	return removeStaleAt(cgroupRoot)
}

// removeStaleAt is RemoveStale with hierarchies mounted under root.
func removeStaleAt(root string) ([]string, error) {
	h, err := detect(root)
	if err != nil {
		return nil, nil // no cgroups here: nothing of ours can be left
	}
	var removed []string
	var errs []error
	for _, parent := range h.parents {
		entries, err := os.ReadDir(parent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), "ceiling-") {
				continue
			}
			dir := filepath.Join(parent, e.Name())
			m := staleName.FindStringSubmatch(e.Name())
			if m != nil {
				if pid, _ := strconv.Atoi(m[1]); pid == os.Getpid() || syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM) {
					continue // its maker runs: not stale
				}
			}
			procs, _ := readFile(filepath.Join(dir, "cgroup.procs"))
			if m == nil && procs != "" {
				continue // not ours to judge: it may be another tool's
			}
			for _, f := range strings.Fields(procs) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL) // a target its maker could not stop
				}
			}
			l := &Limits{dirs: []string{dir}, v2: h.v2}
			if err := l.Remove(); err != nil { // waits for the killed to leave, then rmdir
				errs = append(errs, err)
				continue
			}
			if !slices.Contains(removed, e.Name()) {
				removed = append(removed, e.Name())
			}
		}
	}
	return removed, errors.Join(errs...)
}

// readFile reads a cgroup file's value without its trailing newline.
func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// pin returns a shell prefix that runs the command on whole CPUs by
// affinity (taskset), the last ceil(cpus) of those ceiling may use, the
// CPUs that leaves the target, and what it enforces: the fallback when
// there is no cgroup to write. Memory is not enforced.
func pin(cpus float64) (prefix string, pinned float64, why string) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "", 0, "CPU and memory not enforced (" + err.Error() + ")"
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return "", 0, "CPU and memory not enforced (no taskset to pin the CPUs)"
	}
	var allowed []int
	for i := range 1024 {
		if set.IsSet(i) {
			allowed = append(allowed, i)
		}
	}
	n := int(math.Ceil(cpus))
	if cpus <= 0 || n >= len(allowed) {
		return "", 0, "CPU and memory not enforced (the shape asks for all of this machine's CPUs or more)"
	}
	list := make([]string, n)
	for i, c := range allowed[len(allowed)-n:] {
		list[i] = strconv.Itoa(c)
	}
	why = fmt.Sprintf("CPU by affinity to %d whole CPUs; memory not enforced", n)
	if float64(n) != cpus {
		why = fmt.Sprintf("CPU by affinity to whole CPUs (%s rounded up to %d); memory not enforced", formatCPUs(cpus), n)
	}
	return "exec taskset -c " + strings.Join(list, ",") + " ", float64(n), why
}
