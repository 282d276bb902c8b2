//go:build linux

package monitor

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// measureCPU reads src twice, span apart, and returns the CPU used in
// percent of one core.
func measureCPU(t *testing.T, src Source, span time.Duration) (float64, Sample) {
	t.Helper()
	a, err := src.Read()
	if err != nil {
		t.Fatalf("Read() = %v", err)
	}
	time.Sleep(span)
	b, err := src.Read()
	if err != nil {
		t.Fatalf("Read() = %v", err)
	}
	return cpuPct(reading{at: a.At, sample: a}, reading{at: b.At, sample: b}), b
}

func watch(t *testing.T, pid int) Source {
	t.Helper()
	src, err := Process(pid)
	if err != nil {
		t.Fatalf("Process(%d) = %v", pid, err)
	}
	return src
}

// cpuSpan is how long the tests that measure a tree's CPU measure it: 50
// ticks of /proc's 10 ms, a resolution of 2 % of a core, well inside
// their bounds (the lower ones allow for busy neighbours, a share of the
// cores, which a longer span does not change).
const cpuSpan = 500 * time.Millisecond

// TestProcessCPU's cases measure the CPU their trees take, side by side
// with each other and the other spinning tests: their lower bounds only
// say that the spinning is counted.
func TestProcessCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		lo, hi   float64
		minProcs int
	}{
		// The lower bounds only say the spinning is counted (the shell that
		// waits for its children uses nothing itself): on a shared machine
		// busy neighbours, and the spinning cases beside it, can take most of
		// each core (a third of one was seen).
		{"one spinning shell", "while :; do :; done", 12, 140, 1},
		{"idle", "sleep 5", 0, 10, 1},
		{"two spinning children", `sh -c 'while :; do :; done' & sh -c 'while :; do :; done' & wait`, 20, 250, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			testkit.Start(t, cmd)
			src := watch(t, cmd.Process.Pid)
			// Let the children start: the tree holds its minProcs shells
			// (one thread each).
			for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
				s, err := src.Read()
				if err != nil {
					t.Fatalf("Read() = %v", err)
				}
				if s.Threads >= tc.minProcs {
					break
				}
				if time.Since(start) > 10*time.Second {
					t.Fatalf("after 10s: Read() = %+v, want %d processes", s, tc.minProcs)
				}
			}
			pct, s := measureCPU(t, src, cpuSpan)
			t.Logf("%s: CPU %.1f%%, threads %d, fds %d, RSS %.1f MiB", tc.name, pct, s.Threads, s.FDs, float64(s.RSSBytes)/mib)
			if pct < tc.lo || pct > tc.hi {
				t.Errorf("CPU = %.1f%%, want %.0f–%.0f%%", pct, tc.lo, tc.hi)
			}
			if !s.Alive || s.Threads < tc.minProcs || s.FDs < 3*tc.minProcs || s.RSSBytes <= 0 {
				t.Errorf("Read() = %+v, want alive, ≥ %d threads, ≥ %d fds, some RSS", s, tc.minProcs, 3*tc.minProcs)
			}
		})
	}
}

// TestProcessSpinningGoChild reads a spinning Go child's CPU, held
// against what the kernel charged it over the same moment: it gets what
// the tests and packages beside it leave it.
func TestProcessSpinningGoChild(t *testing.T) {
	t.Parallel()
	cmd := startHelper(t, "spin")
	pid := cmd.Process.Pid
	start, ticks0 := time.Now(), statTicks(t, pid)
	pct, _ := measureCPU(t, watch(t, pid), cpuSpan)
	truth := kernelPct(t, pid, start, ticks0)
	t.Logf("re-executed spinning test binary: CPU %.1f%% (the kernel's: %.1f%%)", pct, truth)
	// Two readings a few milliseconds inside the kernel's two: 15 points
	// of slack.
	if truth < 10 || math.Abs(pct-truth) > 15 {
		t.Errorf("CPU = %.1f%%, the kernel charged %.1f%%: want within 15 points (and the kernel's ≥ 10%%: the child spun)", pct, truth)
	}
}

// startAllocs starts the test binary holding mb MiB, n times under one
// shell, and waits until each has touched its memory.
func startAllocs(t *testing.T, mb, n int) int {
	t.Helper()
	script := ""
	for range n {
		script += shellQuote(testBinary(t)) + " & "
	}
	cmd := exec.Command("/bin/sh", "-c", script+"wait")
	cmd.Env = append(cmd.Environ(), helperEnv+"=alloc", "MONITOR_TEST_MB="+strconv.Itoa(mb))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	testkit.Start(t, cmd)
	waitLines(t, bufio.NewReader(out), n, 10*time.Second)
	return cmd.Process.Pid
}

// TestProcessRSS measures children holding a known amount of memory. The
// known amount is compared with the RSS above that of the same children
// holding 1 MiB (the Go runtime's own, larger in a race-enabled build).
func TestProcessRSS(t *testing.T) {
	rss := func(t *testing.T, mb, n int) float64 {
		s, err := watch(t, startAllocs(t, mb, n)).Read()
		if err != nil {
			t.Fatalf("Read() = %v", err)
		}
		return float64(s.RSSBytes) / mib
	}
	tests := []struct {
		name  string
		mb, n int
	}{
		{"one child of 100 MiB", 100, 1},
		{"two children of 100 MiB summed", 100, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, total := rss(t, 1, tc.n), rss(t, tc.mb, tc.n)
			got, want := total-base+float64(tc.n), float64(tc.mb*tc.n)
			t.Logf("%s: RSS %.1f MiB, of which %.1f MiB above the %.1f MiB of a 1 MiB baseline", tc.name, total, got, base)
			if got < want*0.8 || got > want*1.2 {
				t.Errorf("RSS held = %.1f MiB, want %.0f ± 20%%", got, want)
			}
		})
	}
}

func TestProcessExit(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	testkit.Start(t, cmd)
	src := watch(t, cmd.Process.Pid)
	a, err := src.Read()
	if err != nil || !a.Alive {
		t.Fatalf("Read() = %+v, %v; want alive", a, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for range 2 {
		b, err := src.Read()
		if err != nil || b.Alive || b.CPU != a.CPU || b.RSSBytes != 0 {
			t.Errorf("Read() after exit = %+v, %v; want not alive, CPU %v kept, no RSS", b, err, a.CPU)
		}
	}
	if _, err := Process(cmd.Process.Pid); err == nil {
		t.Errorf("Process(exited pid) = nil error, want one")
	}
	if _, err := Process(0); err == nil {
		t.Errorf("Process(0) = nil error, want one")
	}
}

// TestProcessAccounting checks the bookkeeping that keeps a tree's CPU from
// going back when members leave it.
func TestProcessAccounting(t *testing.T) {
	p := &process{root: 1, known: map[int]member{}}
	read := func(ms ...member) uint64 {
		cur := map[int]member{}
		for i, m := range ms {
			cur[[]int{1, 2, 3}[i]] = m
		}
		return p.account(cur)
	}
	steps := []struct {
		name string
		got  uint64
		want uint64
	}{
		{"root, child, grandchild", read(member{1, 0, 10}, member{2, 1, 20}, member{3, 2, 30}), 60},
		{"grandchild reaped into child's cutime", read(member{1, 0, 10}, member{2, 1, 55}), 65},
		{"child exits, reaped by root", read(member{1, 0, 70}), 70},
	}
	for _, s := range steps {
		if s.got != s.want {
			t.Errorf("%s: total = %d ticks, want %d", s.name, s.got, s.want)
		}
	}
	// An orphan: the child dies unreaped and its own child is re-parented
	// away, both leaving at once; the grandchild's time must stay.
	p = &process{root: 1, known: map[int]member{}}
	read(member{1, 0, 10}, member{2, 1, 20}, member{3, 2, 30})
	if got := read(member{1, 0, 35}); got != 65 {
		t.Errorf("orphaned grandchild: total = %d ticks, want 65 (root 35 with child reaped + 30 retired)", got)
	}
	// A dip (a child reaped without passing its time on) never shows.
	p = &process{root: 1, known: map[int]member{}}
	read(member{1, 0, 10}, member{2, 1, 20})
	if got := read(member{1, 0, 12}); got != 30 {
		t.Errorf("dip: total = %d ticks, want 30", got)
	}
	if got := read(member{1, 0, 15}); got != 33 {
		t.Errorf("growth after a dip: total = %d ticks, want 33", got)
	}
}

// TestProcessReadCost reports what one reading costs; it asserts only a
// generous bound (1 % of a core at 1 Hz is 10 ms a reading).
func TestProcessReadCost(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	testkit.Start(t, cmd)
	src := watch(t, cmd.Process.Pid)
	const n = 20
	start := time.Now()
	for range n {
		if _, err := src.Read(); err != nil {
			t.Fatal(err)
		}
	}
	per := time.Since(start) / n
	t.Logf("one Process reading: %v wall", per)
	if per > 10*time.Millisecond {
		t.Errorf("one reading took %v, want under 10ms", per)
	}
}

// TestWatcherProcess watches a real spinning child for a moment (cpuSpan,
// a reading every 50 ms: ten or so). Its CPU is held against what the
// kernel charged the child over the same moment, read here on its own:
// on a shared machine the child gets what the neighbours leave it (54 %
// of a core was seen while another package's tests ran), and the watcher
// must say what it got, not that it spun.
func TestWatcherProcess(t *testing.T) {
	t.Parallel()
	cmd := startHelper(t, "spin")
	pid := cmd.Process.Pid
	w := NewWatcher(watch(t, pid), nil, 50*time.Millisecond)
	start, ticks0 := time.Now(), statTicks(t, pid)
	w.Start()
	time.Sleep(cpuSpan)
	w.Stop()
	end, truth := time.Now(), kernelPct(t, pid, start, ticks0)
	f := w.Window(start, end)
	t.Logf("watched a spinning child for %v at 50ms: %d samples, CPU %.1f%% (the kernel's: %.1f%%), RSS %.1f MiB, %d threads",
		cpuSpan, f.Samples, f.CPUPct, truth, f.RSSMB, f.Threads)
	// The watcher's span is its first reading to its last, up to a
	// reading short of the kernel's at each end: 20 points of slack.
	if f.Samples < 5 || truth < 10 || math.Abs(f.CPUPct-truth) > 20 || f.RSSMB <= 0 || f.Threads < 1 || f.Exited {
		t.Errorf("Window = %+v, the kernel charged %.1f%%: want ≥ 5 samples, CPU within 20 points of the kernel's (which must show the spinning: ≥ 10%%), some RSS and threads, not exited", f, truth)
	}
}

// kernelPct returns the CPU the kernel charged process pid since start,
// when it had charged it ticks0, in percent of one core.
func kernelPct(t *testing.T, pid int, start time.Time, ticks0 uint64) float64 {
	t.Helper()
	ticks := statTicks(t, pid)
	return 100 * float64(ticks-ticks0) / userHZ / time.Since(start).Seconds()
}

// statTicks reads the CPU ticks (user and system) the kernel has charged
// process pid, from /proc/<pid>/stat, apart from the package's reader.
func statTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's ")": state is the first, utime
	// the 12th, stime the 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return u + s
}
