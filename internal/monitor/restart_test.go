//go:build linux

package monitor

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// A shell that starts its server again after the server ended is a
// target that restarted once; a shell that runs short commands, none
// holding most of the tree's memory, never restarts.
//
// Each is read every 25 ms (what counts is the readings, each of which
// may see the main process gone, not their interval): the server until
// its restart is seen, then both for 40 readings more, the started-again
// server by then the tree's main process, the short commands each seen
// come and gone.
func TestProcessRestarts(t *testing.T) {
	t.Parallel()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{"a server started again", `MONITOR_TEST_FOR=1s "$BIN"; exec "$BIN"`, 1},
		{"short commands", `while :; do sleep 0.05; done`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			cmd.Env = append(os.Environ(), "BIN="+bin, helperEnv+"=alloc", "MONITOR_TEST_MB=16")
			testkit.Start(t, cmd)
			src := watch(t, cmd.Process.Pid)
			const every, after = 25 * time.Millisecond, 40
			var last Sample
			read := func() {
				t.Helper()
				s, err := src.Read()
				if err != nil {
					t.Fatalf("Read() = %v", err)
				}
				last = s
				time.Sleep(every)
			}
			start := time.Now()
			for read(); last.Restarts < tc.want; read() {
				if time.Since(start) > 20*time.Second {
					t.Fatalf("after %v: Read() = %+v, want %d restarts", time.Since(start).Round(time.Millisecond), last, tc.want)
				}
			}
			for range after {
				read()
			}
			if !last.Alive || last.Restarts != tc.want {
				t.Errorf("after %v: Read() = %+v, want alive with %d restarts", time.Since(start).Round(time.Millisecond), last, tc.want)
			}
		})
	}
}
