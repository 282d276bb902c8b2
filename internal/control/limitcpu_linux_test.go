//go:build linux

package control

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// cgroupMount is where cgroup hierarchies are mounted.
const cgroupMount = "/sys/fs/cgroup"

// LimitCPU writes a group's quota and puts the old one back; it never
// touches an ancestor's.
func TestLimitCPU(t *testing.T) {
	var dir, file, want string
	name := fmt.Sprintf("ceiling-test-limit-%d", time.Now().UnixNano())
	for _, c := range []struct{ dir, file, want string }{
		{filepath.Join(cgroupMount, name), "cpu.max", "20000 100000"},
		{filepath.Join(cgroupMount, "cpu", name), "cpu.cfs_quota_us", "20000"},
	} {
		testkit.RemoveCgroup(t, c.dir)
		if err := os.Mkdir(c.dir, 0o755); err == nil {
			if _, err := os.Stat(filepath.Join(c.dir, c.file)); err == nil {
				dir, file, want = c.dir, c.file, c.want
				break
			}
			os.Remove(c.dir)
		}
	}
	if dir == "" {
		t.Skip("no writable cgroup cpu controller here (not root, or none mounted)")
	}
	before, _ := os.ReadFile(filepath.Join(dir, file))
	restore, err := LimitCPU(dir, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, file))
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("%s = %q, want %q", file, got, want)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, file)); string(after) != string(before) {
		t.Errorf("restored %q, want %q", after, before)
	}
	if _, err := LimitCPU(filepath.Join(cgroupMount, "cpu", name+"-none"), 0.2); err == nil {
		t.Errorf("a group that does not exist was limited (an ancestor's quota?)")
	}
}
