package testkit

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// OwnerEnv is the environment variable that names, by its PID, the test
// binary that owns a tree of processes: Own sets it, every process the
// tests start inherits it, whoever starts them (the code under test, a
// shell, another child), and ExitWithOwner ends a stand-in when that
// binary is gone.
const OwnerEnv = "CEILING_TESTKIT_OWNER"

// Own makes this process, a test binary about to run its tests, the owner
// of the processes they start (OwnerEnv), unless a process above it is
// already. Call it from TestMain.
func Own() {
	if os.Getenv(OwnerEnv) == "" {
		os.Setenv(OwnerEnv, strconv.Itoa(os.Getpid()))
	}
}

// ExitWithOwner is for a test binary re-executed as a stand-in (a target,
// an agent, ceiling itself) that the code under test may have started in
// a way no process group reaches (a command line's `&`): it exits the
// process, with status 1, within a tenth of a second of the owner's end
// (however it ended, kill -9 too). Without OwnerEnv it does nothing.
func ExitWithOwner() {
	pid, err := strconv.Atoi(os.Getenv(OwnerEnv))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return
	}
	go func() {
		for alive(pid) {
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprintf(os.Stderr, "testkit: the test binary (PID %d) is gone: exiting\n", pid)
		os.Exit(1)
	}()
}
