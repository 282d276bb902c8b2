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
func TestProcessRestarts(t *testing.T) {
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
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			cmd.Env = append(os.Environ(), "BIN="+bin, helperEnv+"=alloc", "MONITOR_TEST_MB=16")
			testkit.Start(t, cmd)
			src := watch(t, cmd.Process.Pid)
			var last Sample
			for range 25 {
				s, err := src.Read()
				if err != nil {
					t.Fatalf("Read() = %v", err)
				}
				last = s
				time.Sleep(100 * time.Millisecond)
			}
			if !last.Alive || last.Restarts != tc.want {
				t.Errorf("after 2.5 s: Read() = %+v, want alive with %d restarts", last, tc.want)
			}
		})
	}
}
