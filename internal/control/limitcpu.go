package control

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/monitor"
)

// LimitCPU writes a CPU quota of cpus cores on cgroup (as monitor.cgroup
// names it: the group itself, v2 cpu.max or v1 cpu.cfs_quota_us in the cpu
// hierarchy's group of the same place) and returns the function that
// writes back the quota it replaced: an event that starves the target of
// CPU for a while.
func LimitCPU(cgroup string, cpus float64) (restore func() error, err error) {
	if err := linuxOnly("limiting a cgroup's CPU"); err != nil {
		return nil, err
	}
	dirs := monitor.CPUQuotaDirs(cgroup)
	for _, d := range dirs {
		if filepath.Base(d) != filepath.Base(filepath.Clean(cgroup)) {
			continue // an ancestor's quota would limit more than the target
		}
		if b, err := os.ReadFile(filepath.Join(d, "cpu.max")); err == nil {
			old := strings.TrimSpace(string(b))
			period := 100000
			if f := strings.Fields(old); len(f) == 2 {
				if p, err := strconv.Atoi(f[1]); err == nil && p > 0 {
					period = p
				}
			}
			file := filepath.Join(d, "cpu.max")
			if err := os.WriteFile(file, fmt.Appendf(nil, "%d %d\n", int(cpus*float64(period)), period), 0o644); err != nil {
				return nil, fmt.Errorf("limit CPU: %w", err)
			}
			return func() error { return os.WriteFile(file, []byte(old+"\n"), 0o644) }, nil
		}
		if p, err := readInt(filepath.Join(d, "cpu.cfs_period_us")); err == nil && p > 0 {
			file := filepath.Join(d, "cpu.cfs_quota_us")
			old, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			if err := os.WriteFile(file, fmt.Appendf(nil, "%d\n", int64(cpus*float64(p))), 0o644); err != nil {
				return nil, fmt.Errorf("limit CPU: %w", err)
			}
			return func() error { return os.WriteFile(file, old, 0o644) }, nil
		}
	}
	return nil, fmt.Errorf("limit CPU: no cpu controller for cgroup %s (looked in %s)", cgroup, strings.Join(dirs[:min(len(dirs), 3)], ", "))
}

// readInt reads a file holding one integer, such as cpu.cfs_period_us.
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
