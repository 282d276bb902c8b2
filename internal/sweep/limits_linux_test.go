//go:build linux

package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/monitor"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fakeTree makes a directory that looks like /sys/fs/cgroup: the files
// are given relative to it, each with its content.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// written returns the files a Limits wrote in its groups (path relative to
// root: content), and empties the groups so that Remove can rmdir them as
// it would on a cgroup file system.
func written(t *testing.T, root string, l *Limits) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, d := range l.dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			got[rel] = string(b)
			os.Remove(p)
		}
	}
	return got
}

// groupRE matches a group's name made from the name "2w / 1c".
var groupRE = regexp.MustCompile(`^ceiling-2w-1c-[0-9a-f]{8}-pid[0-9]+$`)

func TestLimitsV1(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"unified/cgroup.controllers":   "\n",
		"cpu/cpu.cfs_quota_us":         "-1\n",
		"cpuacct/cpuacct.usage":        "0\n",
		"memory/memory.limit_in_bytes": "9223372036854771712\n",
	})
	l, err := newLimitsAt(root, "2w / 1c", Config{Workers: 2, CPUs: 0.5, MemoryMB: 64})
	if err != nil {
		t.Fatalf("newLimitsAt = %v", err)
	}
	group := filepath.Base(l.Path())
	if !groupRE.MatchString(group) {
		t.Errorf("group = %q, want ceiling-2w-1c-<8 hex digits>-pid<ceiling's pid>", group)
	}
	if l.V2() {
		t.Errorf("V2() = true, want v1 (the unified hierarchy has no controllers)")
	}
	want := []string{filepath.Join(root, "cpu", group), filepath.Join(root, "cpuacct", group), filepath.Join(root, "memory", group)}
	if diff := cmp.Diff(want, l.Dirs()); diff != "" {
		t.Errorf("Dirs() (-want +got):\n%s", diff)
	}
	if got, want := l.Path(), filepath.Join(root, "memory", group); got != want {
		t.Errorf("Path() = %q, want %q", got, want)
	}
	wantPrefix := "echo 0 > '" + filepath.Join(root, "cpu", group, "cgroup.procs") + "' && " +
		"echo 0 > '" + filepath.Join(root, "cpuacct", group, "cgroup.procs") + "' && " +
		"echo 0 > '" + filepath.Join(root, "memory", group, "cgroup.procs") + "' && exec "
	if got := l.Prefix(); got != wantPrefix {
		t.Errorf("Prefix() = %q, want %q", got, wantPrefix)
	}
	if err := l.Add(4242); err != nil {
		t.Fatalf("Add(4242) = %v", err)
	}
	got := written(t, root, l)
	wantFiles := map[string]string{
		"cpu/" + group + "/cpu.cfs_period_us":        "100000\n",
		"cpu/" + group + "/cpu.cfs_quota_us":         "50000\n",
		"cpu/" + group + "/cgroup.procs":             "4242\n",
		"cpuacct/" + group + "/cgroup.procs":         "4242\n",
		"memory/" + group + "/memory.limit_in_bytes": "67108864\n",
		"memory/" + group + "/cgroup.procs":          "4242\n",
	}
	if diff := cmp.Diff(wantFiles, got); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
	if err := l.Remove(); err != nil {
		t.Fatalf("Remove() = %v", err)
	}
	for _, d := range want {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Remove, stat %s = %v, want not exist", d, err)
		}
	}
	if err := l.Remove(); err != nil {
		t.Errorf("second Remove() = %v, want nil", err)
	}
}

func TestLimitsV1CoMounted(t *testing.T) {
	// cpu and cpuacct in one hierarchy (cpu,cpuacct): no separate group;
	// memsw present: the limit covers swap too.
	root := fakeTree(t, map[string]string{
		"cpu/cpu.cfs_quota_us":               "-1\n",
		"cpu/cpuacct.usage":                  "0\n",
		"cpuacct/cpuacct.usage":              "0\n",
		"memory/memory.limit_in_bytes":       "9223372036854771712\n",
		"memory/memory.memsw.limit_in_bytes": "9223372036854771712\n",
	})
	l, err := newLimitsAt(root, "x", Config{Workers: 1, CPUs: 0.001, MemoryMB: 1024})
	if err != nil {
		t.Fatalf("newLimitsAt = %v", err)
	}
	group := filepath.Base(l.Path())
	got := written(t, root, l)
	want := map[string]string{
		"cpu/" + group + "/cpu.cfs_period_us":              "100000\n",
		"cpu/" + group + "/cpu.cfs_quota_us":               "1000\n", // the kernel's least
		"memory/" + group + "/memory.limit_in_bytes":       "1073741824\n",
		"memory/" + group + "/memory.memsw.limit_in_bytes": "1073741824\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
	if err := l.Remove(); err != nil {
		t.Fatalf("Remove() = %v", err)
	}
}

func TestLimitsV2(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"cgroup.controllers":     "cpuset cpu io memory pids\n",
		"cgroup.subtree_control": "\n",
		"cpu/cpu.cfs_quota_us":   "-1\n", // a v1 hierarchy too: v2 wins
	})
	l, err := newLimitsAt(root, "2w / 1c / 512Mi", Config{Workers: 2, CPUs: 1.5, MemoryMB: 512})
	if err != nil {
		t.Fatalf("newLimitsAt = %v", err)
	}
	group := filepath.Base(l.Path())
	if !l.V2() || l.Path() != filepath.Join(root, group) || !strings.HasPrefix(group, "ceiling-2w-1c-512Mi-") {
		t.Errorf("V2() = %v, Path() = %q, want v2 and %s/ceiling-2w-1c-512Mi-<hex>", l.V2(), l.Path(), root)
	}
	if err := l.Add(7); err != nil {
		t.Fatalf("Add(7) = %v", err)
	}
	if got, want := l.Prefix(), "echo 0 > '"+filepath.Join(root, group, "cgroup.procs")+"' && exec "; got != want {
		t.Errorf("Prefix() = %q, want %q", got, want)
	}
	got := written(t, root, l)
	want := map[string]string{
		group + "/cpu.max":      "150000 100000\n",
		group + "/memory.max":   "536870912\n",
		group + "/cgroup.procs": "7\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "cgroup.subtree_control")); string(b) != "+cpu +memory\n" {
		t.Errorf("cgroup.subtree_control = %q, want the controllers enabled", b)
	}
	if err := l.Remove(); err != nil {
		t.Fatalf("Remove() = %v", err)
	}
}

func TestLimitsUnlimited(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"unified/cgroup.controllers":     "cpu memory\n",
		"unified/cgroup.subtree_control": "cpu memory\n",
	})
	l, err := newLimitsAt(root, "", Config{Workers: 1})
	if err != nil {
		t.Fatalf("newLimitsAt = %v", err)
	}
	if got, want := filepath.Dir(l.Path()), filepath.Join(root, "unified"); got != want || !strings.HasPrefix(filepath.Base(l.Path()), "ceiling-target-") {
		t.Errorf("Path() = %q, want %s/ceiling-target-<hex>", l.Path(), want)
	}
	if got := written(t, root, l); len(got) != 0 {
		t.Errorf("files written for no limits: %v, want none", got)
	}
	l.Remove()
}

func TestLimitsNoController(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"nothing", map[string]string{"x": ""}, "v1: no cpu hierarchy ("},
		{"v2 without memory", map[string]string{"cgroup.controllers": "cpu io\n"},
			`has controllers "cpu io", not cpu and memory; v1: no cpu hierarchy`},
		{"v1 without memory", map[string]string{"cpu/cpu.cfs_quota_us": "-1"}, "v1: no memory hierarchy ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeTree(t, tt.files)
			l, err := newLimitsAt(root, "x", Config{Workers: 1, CPUs: 1, MemoryMB: 512})
			if !errors.Is(err, ErrNoController) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("newLimitsAt = %v, %v; want ErrNoController saying %q", l, err, tt.want)
			}
			if want := "cgroup limits for 1w / 1c / 512Mi: no usable cgroup cpu and memory controller: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error = %q, want it to start %q", err, want)
			}
		})
	}
}

func TestLimitsReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a read-only directory anyway: tested as another user")
	}
	root := fakeTree(t, map[string]string{"cpu/cpu.cfs_quota_us": "-1", "memory/memory.limit_in_bytes": "1"})
	os.Chmod(filepath.Join(root, "cpu"), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "cpu"), 0o755) })
	_, err := newLimitsAt(root, "x", Config{Workers: 1, CPUs: 1, MemoryMB: 512})
	if !errors.Is(err, ErrNoController) || !strings.Contains(err.Error(), "cgroup limits need root") {
		t.Fatalf("newLimitsAt = %v, want ErrNoController saying root is needed", err)
	}
}

func TestUnusable(t *testing.T) {
	for _, err := range []error{
		&fs.PathError{Op: "mkdir", Path: "/sys/fs/cgroup/cpu/x", Err: syscall.EACCES},
		&fs.PathError{Op: "mkdir", Path: "/sys/fs/cgroup/cpu/x", Err: syscall.EPERM},
		&fs.PathError{Op: "open", Path: "/sys/fs/cgroup/cpu/x/cpu.cfs_quota_us", Err: syscall.EROFS},
	} {
		if got := unusable(err); !errors.Is(got, ErrNoController) || !errors.Is(got, err) {
			t.Errorf("unusable(%v) = %v, want ErrNoController wrapping it", err, got)
		}
	}
	einval := &fs.PathError{Op: "open", Path: "/sys/fs/cgroup/cpu/x/cpu.cfs_quota_us", Err: syscall.EINVAL}
	if got := unusable(einval); errors.Is(got, ErrNoController) {
		t.Errorf("unusable(%v) = %v, want it unchanged: a bad value is not a missing controller", einval, got)
	}
}

// TestLimitsEnforced runs a busy loop in a real group with half a CPU and
// 64 MiB, and checks that the group's CPU stays under the quota.
func TestLimitsEnforced(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skipf("cgroup limits need root; running as uid %d", os.Geteuid())
	}
	l, err := NewLimits("test", Config{Workers: 1, CPUs: 0.5, MemoryMB: 64})
	if errors.Is(err, ErrNoController) {
		t.Skipf("no cgroup controller here: %v", err)
	}
	if err != nil {
		t.Fatalf("NewLimits = %v", err)
	}
	t.Cleanup(func() {
		if err := l.Remove(); err != nil {
			t.Errorf("Remove() = %v", err)
		}
		for _, d := range l.Dirs() {
			if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after Remove, stat %s = %v, want not exist", d, err)
			}
		}
	})

	cmd := exec.Command("sh", "-c", l.Prefix()+"sh -c 'while :; do :; done'")
	testkit.Start(t, cmd) // killed before Remove: cleanups run last first
	pid := cmd.Process.Pid
	for _, d := range l.Dirs() {
		if !waitFor(5*time.Second, func() bool { return hasPid(d, pid) }) {
			t.Fatalf("process %d never joined %s", pid, d)
		}
	}

	src, err := monitor.Cgroup(l.Path())
	if err != nil {
		t.Fatalf("monitor.Cgroup(%q) = %v", l.Path(), err)
	}
	s0, err := src.Read()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	s1, err := src.Read()
	if err != nil {
		t.Fatal(err)
	}
	share := float64(s1.CPU-s0.CPU) / float64(s1.At.Sub(s0.At))
	t.Logf("busy loop under a 0.5 CPU quota (%s): %.1f %% of one core over %v", map[bool]string{true: "v2", false: "v1"}[l.V2()],
		100*share, s1.At.Sub(s0.At).Round(time.Millisecond))
	// Only an upper bound: a busy neighbour can lower the share, nothing
	// but a broken quota can raise it past 50 %.
	if share <= 0 || share > 0.70 {
		t.Errorf("CPU share = %.3f, want above 0 and below 0.70 (quota 0.5)", share)
	}

	limit := "memory.limit_in_bytes"
	if l.V2() {
		limit = "memory.max"
	}
	if got, _ := readFile(filepath.Join(l.Path(), limit)); got != strconv.Itoa(64<<20) {
		t.Errorf("%s = %q, want %d (64 MiB)", limit, got, 64<<20)
	}
}

// hasPid reports whether group dir lists pid in its cgroup.procs.
func hasPid(dir string, pid int) bool {
	s, err := readFile(filepath.Join(dir, "cgroup.procs"))
	return err == nil && slices.Contains(strings.Fields(s), strconv.Itoa(pid))
}

// waitFor polls cond every 10 ms until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// Without cgroups, a shape's CPUs are whole CPUs by affinity: the last
// ones ceiling may use, rounded up, and never all of them (that would
// enforce nothing).
func TestPin(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset here")
	}
	n := set.Count()
	if n < 2 {
		t.Skip("one CPU: nothing to pin to")
	}
	var last int
	for i := range 1024 {
		if set.IsSet(i) {
			last = i
		}
	}
	prefix, cpus, why := pin(0.5)
	if prefix != fmt.Sprintf("exec taskset -c %d ", last) || cpus != 1 || !strings.Contains(why, "0.5 rounded up to 1") || !strings.Contains(why, "memory not enforced") {
		t.Errorf("pin(0.5) = %q, %q", prefix, why)
	}
	if prefix, cpus, why := pin(float64(n)); prefix != "" || cpus != 0 || !strings.Contains(why, "not enforced") {
		t.Errorf("pin(all CPUs) = %q, %q; want nothing pinned, said so", prefix, why)
	}
}

// A group a killed ceiling left behind (its maker's pid no longer runs),
// with its target still running in it, is removed by the next sweep, the
// target killed; a group whose maker runs (another sweep now) is not.
func TestRemoveStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("cgroup limits need root; running as uid %d", os.Geteuid())
	}
	h, err := detect(cgroupRoot)
	if err != nil {
		t.Skipf("no cgroup controller here: %v", err)
	}
	gone := exec.Command("true")
	testkit.Group(t, gone)
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mkGroup := func(name string) []string {
		var dirs []string
		for _, p := range h.parents {
			d := filepath.Join(p, name)
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Skipf("cannot make a cgroup here: %v", err)
			}
			dirs = append(dirs, d)
			testkit.RemoveCgroup(t, d)
		}
		return dirs
	}
	stale := fmt.Sprintf("ceiling-test-stale-0123abcd-pid%d", gone.Process.Pid)
	live := fmt.Sprintf("ceiling-test-live-0123abcd-pid%d", os.Getppid()) // the go command: running
	staleDirs, liveDirs := mkGroup(stale), mkGroup(live)
	target := exec.Command("sleep", "60")
	testkit.Group(t, target)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	for _, d := range staleDirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(target.Process.Pid)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- target.Wait() }()
	removed, err := RemoveStale()
	if err != nil {
		t.Errorf("RemoveStale = %v", err)
	}
	if !slices.Contains(removed, stale) || slices.Contains(removed, live) {
		t.Errorf("removed %q, want %s and not %s", removed, stale, live)
	}
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Errorf("the stale group's target (pid %d) still runs", target.Process.Pid)
	}
	for _, d := range staleDirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale group %s: stat = %v, want removed", d, err)
		}
	}
	for _, d := range liveDirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a running sweep's group %s was removed: %v", d, err)
		}
	}
}
