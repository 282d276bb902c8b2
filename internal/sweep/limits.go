package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoController is matched (errors.Is) by NewLimits' error when the
// machine offers no cgroup CPU and memory controller ceiling can write: not
// root, a read-only /sys/fs/cgroup, a v2 hierarchy without cpu and memory
// enabled, or no cgroups at all. A caller then runs the target without
// cgroup limits: its CPU by affinity (whole CPUs), and its memory reported
// as not enforced.
var ErrNoController = errors.New("no usable cgroup cpu and memory controller")

// Limits is a cgroup created for one configuration's target, with its CPU
// quota and memory limit written: one group in a cgroup v2 hierarchy, or one
// in each v1 hierarchy it needs (cpu, cpuacct when mounted apart, memory).
type Limits struct {
	config Config
	v2     bool
	// dirs are the group's directories, one per hierarchy; in v1 the cpu
	// group first and the memory group last.
	dirs []string
}

// MemoryEvents are what a group's memory controller counted: how a target
// that died in it may have died.
type MemoryEvents struct {
	// OOMKills counts the processes the kernel's OOM killer killed in the
	// group (v1 memory.oom_control's oom_kill, Linux 4.13 and later; v2
	// memory.events' oom_kill); -1 when the kernel does not count them.
	OOMKills int64
	// LimitHits counts the times the group's memory use reached its limit
	// (v1 memory.failcnt; v2 memory.events' max), whether or not reclaim
	// then made room.
	LimitHits int64
}

// Config returns the configuration whose limits the group enforces.
func (l *Limits) Config() Config { return l.config }

// V2 reports whether the group is in a cgroup v2 (unified) hierarchy.
func (l *Limits) V2() bool { return l.v2 }

// Path returns the group as monitor.Cgroup reads it: the v2 group's
// directory, or the v1 memory group's (monitor then reads the CPU from the
// cpuacct group of the same name, which Limits creates too).
func (l *Limits) Path() string { return l.dirs[len(l.dirs)-1] }

// Dirs returns the group's directory in each hierarchy it was created in.
func (l *Limits) Dirs() []string { return append([]string(nil), l.dirs...) }

// Add moves process pid into the group (in every hierarchy). Its threads
// go with it, and the processes it starts afterwards are born in the group.
func (l *Limits) Add(pid int) error {
	for _, d := range l.dirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("add process %d to cgroup: %w", pid, err)
		}
	}
	return nil
}

// Prefix returns a shell prefix that moves the shell itself into the group
// and then execs what follows it, so that the target is in the group from
// its first instruction:
//
//	echo 0 > '/sys/fs/cgroup/cpu/ceiling-x/cgroup.procs' && echo 0 > ... && exec
//
// Writing 0 moves the writing process, whatever it is: the shell, or the
// subshell the command runs in ($$ would name the shell that started it,
// not a subshell).
//
// The caller appends one simple command (sh -c ... for anything else), and
// the shell running it must be root, as NewLimits' caller was.
func (l *Limits) Prefix() string {
	var b strings.Builder
	for _, d := range l.dirs {
		fmt.Fprintf(&b, "echo 0 > %s && ", shellQuote(filepath.Join(d, "cgroup.procs")))
	}
	b.WriteString("exec ")
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeFile writes one value to a cgroup file, as `echo value > file`.
func writeFile(path, value string) error {
	return os.WriteFile(path, []byte(value+"\n"), 0o644)
}
