//go:build linux

package monitor

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// helperEnv makes the test binary, re-executed, act as a target instead of
// running tests: spin (burn one core) or alloc (hold MONITOR_TEST_MB MiB of
// touched memory, for MONITOR_TEST_FOR when set, else until killed).
const helperEnv = "MONITOR_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		testkit.ExitWithOwner()
		runHelper(h)
		os.Exit(0)
	}
	testkit.Own()
	// The process and restart tests wait on their children more than they
	// compute; the spinning ones hold their figures against the kernel's.
	flag.Parse()
	testkit.ParallelWaits(4)
	goleak.VerifyTestMain(m)
}

var spinSink uint64

func runHelper(mode string) {
	switch mode {
	case "spin":
		for {
			spinSink++
		}
	case "alloc":
		// MAP_POPULATE faults every page in without Go code touching
		// them, so a race-enabled build holds no shadow memory for them.
		mb, _ := strconv.Atoi(os.Getenv("MONITOR_TEST_MB"))
		b, err := syscall.Mmap(-1, 0, max(mb, 1)<<20, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_POPULATE)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("ready")
		if d, err := time.ParseDuration(os.Getenv("MONITOR_TEST_FOR")); err == nil {
			time.Sleep(d) // then exit: a target that ends on its own
			os.Exit(0)
		}
		time.Sleep(time.Minute) // the test kills it long before
		runtime.KeepAlive(b)
	}
}

// testBinary is the path of the running test binary.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable() = %v", err)
	}
	return exe
}

// startHelper re-executes the test binary as a helper target.
func startHelper(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testBinary(t))
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	testkit.Start(t, cmd)
	return cmd
}

// waitLines reads n lines from r, failing the test after timeout.
func waitLines(t *testing.T, r *bufio.Reader, n int, timeout time.Duration) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		for range n {
			if _, err := r.ReadString('\n'); err != nil {
				got <- err
				return
			}
		}
		got <- nil
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("read helper output: %v", err)
		}
	case <-time.After(timeout):
		t.Fatalf("helper not ready after %s", timeout)
	}
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
