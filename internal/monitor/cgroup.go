package monitor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupMount is where cgroup hierarchies are mounted.
const cgroupMount = "/sys/fs/cgroup"

// cgroup is a Source reading a cgroup's CPU and memory accounting files.
type cgroup struct {
	cpuFile, memFile string
	v2               bool
	last             time.Duration
	dead             bool
}

var _ Source = (*cgroup)(nil)

// Cgroup returns a Source for a cgroup, v1 or v2. The path is either full,
// under /sys/fs/cgroup (a v2 group, or a v1 controller's group such as
// /sys/fs/cgroup/memory/docker/abc, whose CPU is then read from the cpuacct
// hierarchy at the same place), or relative to the hierarchies' roots
// ("docker/abc", or "/docker/abc" as /proc/<pid>/cgroup writes it).
//
// v2 reads cpu.stat's usage_usec and memory.current; v1 reads
// cpuacct.usage and memory.usage_in_bytes. Both memory figures include the
// group's page cache. Threads and FDs stay 0. It needs Linux: elsewhere it
// returns an error matching errors.ErrUnsupported.
func Cgroup(path string) (Source, error) {
	if err := linuxOnly("watching a cgroup"); err != nil {
		return nil, fmt.Errorf("watch cgroup %s: %w", path, err)
	}
	return cgroupAt(cgroupMount, path)
}

// cgroupAt resolves path against hierarchies mounted under root.
func cgroupAt(root, path string) (*cgroup, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("watch cgroup: empty path")
	}
	var tried []string
	seen := map[string]bool{}
	for _, c := range cgroupCandidates(root, path) {
		if seen[c.cpuFile+"\x00"+c.memFile] {
			continue
		}
		seen[c.cpuFile+"\x00"+c.memFile] = true
		tried = append(tried, c.cpuFile, c.memFile)
		if isFile(c.cpuFile) && isFile(c.memFile) {
			if _, _, err := c.read(); err != nil {
				return nil, fmt.Errorf("watch cgroup %s: %w", path, err)
			}
			return c, nil
		}
	}
	return nil, fmt.Errorf("watch cgroup %s: no CPU and memory accounting found (looked for %s)",
		path, strings.Join(tried, ", "))
}

// cgroupCandidates lists the places path may name, most specific first.
func cgroupCandidates(root, path string) []*cgroup {
	v2 := func(dir string) *cgroup {
		return &cgroup{v2: true, cpuFile: filepath.Join(dir, "cpu.stat"), memFile: filepath.Join(dir, "memory.current")}
	}
	v1 := func(rel string) []*cgroup {
		var out []*cgroup
		for _, ctl := range []string{"cpuacct", "cpu,cpuacct", "cpuacct,cpu", "cpu"} {
			out = append(out, &cgroup{
				cpuFile: filepath.Join(root, ctl, rel, "cpuacct.usage"),
				memFile: filepath.Join(root, "memory", rel, "memory.usage_in_bytes"),
			})
		}
		return out
	}
	clean := filepath.Clean(path)
	if clean == root || strings.HasPrefix(clean, root+"/") {
		// A full path: a v2 group, or a v1 (or hybrid "unified") controller's.
		rel := strings.TrimPrefix(strings.TrimPrefix(clean, root), "/")
		out := []*cgroup{v2(clean)}
		first, rest, _ := strings.Cut(rel, "/")
		switch {
		case first == "unified":
			out = append(out, v2(filepath.Join(root, "unified", rest)))
		case strings.Contains(first, "cpu") || first == "memory":
			out = append(out, v1(rest)...)
		}
		return out
	}
	var out []*cgroup
	if filepath.IsAbs(clean) && clean != "/" && isDir(clean) {
		out = append(out, v2(clean)) // a v2 hierarchy mounted somewhere else
	}
	rel := strings.TrimPrefix(clean, "/")
	out = append(out, v1(rel)...)
	return append(out, v2(filepath.Join(root, rel)), v2(filepath.Join(root, "unified", rel)))
}

// Read implements Source.
func (c *cgroup) Read() (Sample, error) {
	at := time.Now()
	if c.dead {
		return Sample{At: at, CPU: c.last}, nil
	}
	cpu, mem, err := c.read()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) {
		c.dead = true // the group was removed: its container has gone
		return Sample{At: at, CPU: c.last}, nil
	}
	if err != nil {
		return Sample{}, fmt.Errorf("read cgroup: %w", err)
	}
	c.last = cpu
	return Sample{At: at, CPU: cpu, RSSBytes: mem, Alive: true}, nil
}

// read returns the group's cumulative CPU time and its memory use in bytes.
func (c *cgroup) read() (time.Duration, int64, error) {
	mem, err := readInt(c.memFile)
	if err != nil {
		return 0, 0, err
	}
	if !c.v2 {
		ns, err := readInt(c.cpuFile)
		return time.Duration(ns), mem, err
	}
	b, err := os.ReadFile(c.cpuFile)
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("parse %s: %w", c.cpuFile, err)
			}
			return time.Duration(us) * time.Microsecond, mem, nil
		}
	}
	return 0, 0, fmt.Errorf("parse %s: no usage_usec line", c.cpuFile)
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return v, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
