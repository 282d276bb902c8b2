//go:build linux

package control

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// helperEnv makes the test binary, re-executed, act as a target instead of
// running tests: serve (answer HTTP on CONTROL_TEST_ADDR after
// CONTROL_TEST_DELAY, with SO_REUSEPORT when CONTROL_TEST_REUSE is set).
const helperEnv = "CONTROL_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		testkit.ExitWithOwner()
		runHelper(h)
		os.Exit(0)
	}
	testkit.Own()
	// The parallel tests wait on the targets they start more than they
	// compute.
	flag.Parse()
	testkit.ParallelWaits(4)
	goleak.VerifyTestMain(m)
}

func runHelper(mode string) {
	switch mode {
	case "serve":
		delay, _ := time.ParseDuration(os.Getenv("CONTROL_TEST_DELAY"))
		time.Sleep(delay)
		fmt.Printf("pid %d\n", os.Getpid())
		fmt.Println("listening")
		ln, err := listenReuse(os.Getenv("CONTROL_TEST_ADDR"), os.Getenv("CONTROL_TEST_REUSE") != "")
		if err == nil {
			err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }))
		}
		fmt.Println(err)
	}
}

// listenReuse listens on addr, with SO_REUSEPORT when reuse is set: so
// that two processes can listen on one port, as the copies of a rolling
// deploy do.
func listenReuse(addr string, reuse bool) (net.Listener, error) {
	lc := net.ListenConfig{}
	if reuse {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
				return err
			}
			return serr
		}
	}
	return lc.Listen(context.Background(), "tcp", addr)
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

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
