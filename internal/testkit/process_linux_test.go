package testkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChild is the child of the process tests below, run only by them: it
// starts a grandchild, prints its PID, and waits (a minute at most) to be
// killed. As "child" it starts `sleep` with Start, as "control" with a
// bare exec.Command, as "owner" it starts the test binary as a stand-in
// with a bare exec.Command, owned by this child (OwnerEnv).
func TestChild(t *testing.T) {
	role := os.Getenv(roleEnv)
	var cmd *exec.Cmd
	switch role {
	case "child":
		cmd = exec.Command("sleep", "60")
		Start(t, cmd)
	case "control":
		cmd = exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	case "owner":
		cmd = exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"=stand-in", OwnerEnv+"="+strconv.Itoa(os.Getpid()))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	default:
		return // not a test of its own: the child the process tests start, in a role
	}
	fmt.Printf("grandchild %d\n", cmd.Process.Pid)
	time.Sleep(time.Minute)
}

// grandchild starts the test binary as TestChild in role, in a process
// group of its own, and returns the child and the PID of the grandchild it
// started.
func grandchild(t *testing.T, role string) (*exec.Cmd, int) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestChild$")
	child.Env = append(os.Environ(), roleEnv+"="+role)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	Group(t, child)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "grandchild ") {
				line <- sc.Text()
				break
			}
		}
		close(line)
		for sc.Scan() {
		}
	}()
	select {
	case l, ok := <-line:
		pid, err := strconv.Atoi(strings.TrimPrefix(l, "grandchild "))
		if !ok || err != nil {
			t.Fatalf("the child (%s) printed no grandchild PID", role)
		}
		return child, pid
	case <-time.After(10 * time.Second):
		t.Fatalf("the child (%s) printed no grandchild PID within 10s", role)
	}
	return nil, 0
}

// killChild kills the child with SIGKILL, as a killed go test kills a test
// binary, and waits for it.
func killChild(t *testing.T, child *exec.Cmd) {
	t.Helper()
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
}

// goneWithin reports whether the process pid is gone (or a zombie) within
// d, and how long it took.
func goneWithin(pid int, d time.Duration) (bool, time.Duration) {
	start := time.Now()
	for time.Since(start) < d {
		if !alive(pid) {
			return true, time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false, d
}

// A test binary killed with SIGKILL takes the processes it started with
// Start along: the grandchild is gone within 2 s of its parent. The
// control shows the test can tell: a grandchild started without Start
// outlives its killed parent.
func TestStartedProcessDiesWithTestBinary(t *testing.T) {
	t.Parallel()
	child, pid := grandchild(t, "child")
	if !alive(pid) {
		t.Fatalf("grandchild %d is not running before its parent is killed", pid)
	}
	killChild(t, child)
	if gone, took := goneWithin(pid, 2*time.Second); !gone {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d still runs 2s after its parent was killed", pid)
	} else {
		t.Logf("grandchild gone %s after its parent was killed", took)
	}
}

func TestBareProcessOutlivesTestBinary(t *testing.T) {
	t.Parallel()
	child, pid := grandchild(t, "control")
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	killChild(t, child)
	if gone, _ := goneWithin(pid, 500*time.Millisecond); gone {
		t.Fatalf("grandchild %d started without Start died with its parent: the test above proves nothing", pid)
	}
}

// A stand-in started where no process group reaches (a bare exec.Command
// of the code under test, a shell's `&`) exits within a second of the
// test binary that owns it, when it calls ExitWithOwner.
func TestStandInExitsWithOwner(t *testing.T) {
	t.Parallel()
	child, pid := grandchild(t, "owner")
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	killChild(t, child)
	if gone, took := goneWithin(pid, 2*time.Second); !gone {
		t.Fatalf("stand-in %d still runs 2s after its owner was killed", pid)
	} else {
		t.Logf("stand-in gone %s after its owner was killed", took)
	}
}
