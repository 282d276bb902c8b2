package testkit

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RemoveCgroup makes the test's cleanup remove the cgroup directory dir,
// which the test made or is about to make (it need not exist yet, nor
// ever): it kills, with SIGKILL, every process still in it, waits up to 5 s
// for them to leave, removes it, and fails the test if it cannot.
func RemoveCgroup(tb testing.TB, dir string) {
	tb.Helper()
	tb.Cleanup(func() {
		var err error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			procs, _ := os.ReadFile(dir + "/cgroup.procs")
			for _, f := range strings.Fields(string(procs)) {
				if pid, perr := strconv.Atoi(f); perr == nil && pid > 0 {
					killPid(pid)
				}
			}
			if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
				return
			}
		}
		tb.Errorf("remove the test's cgroup %s: %v", dir, err)
	})
}
