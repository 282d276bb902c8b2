//go:build unix

package control

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// childPIDWait bounds the wait for the keeper shell's report of the
// command's own pid, which it writes as soon as it forked it.
const childPIDWait = 5 * time.Second

// shellCommand runs command through /bin/sh -c in a process group of its
// own, which Stop signals as a whole.
//
// The shell stays, as the group's keeper: it runs the command in the
// background and waits for it, and on Linux it gets SIGUSR2 when ceiling
// dies, however it dies (kill -9 too), on which it kills its whole group.
// A parent-death signal reaches only the process it is set on: on a shell
// that forked (`server; echo done`, `a & b & wait`), the server would
// outlive ceiling. The command's exit status is the shell's (a signal n
// as 128+n, as shells report it).
//
// The keeper writes the command's own pid ($!) to the pipe it is given as
// descriptor 3, which the command does not inherit: that is the target
// (the program itself for a single command, which the shell execs in its
// background child; the child shell of a compound one). The returned file
// is the pipe's write end, for the caller to close once the shell started.
func shellCommand(command string) (*exec.Cmd, *os.File) {
	keeper := "trap 'kill -KILL 0' USR2\n{ " + command + "\n} 3>&- &\necho $! >&3\nexec 3>&-\nwait $!"
	cmd := exec.Command("/bin/sh", "-c", keeper)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd.SysProcAttr, syscall.SIGUSR2)
	r, w, err := os.Pipe()
	if err != nil {
		return cmd, nil // the keeper's echo then fails, and the target is the shell
	}
	cmd.ExtraFiles = []*os.File{w}
	return cmd, r
}

// childPID reads the pid the keeper wrote (shellCommand), waiting at most
// childPIDWait; 0 when none came (the shell's pid then stands for it).
func childPID(r *os.File) int {
	if r == nil {
		return 0
	}
	defer r.Close()
	_ = r.SetReadDeadline(time.Now().Add(childPIDWait))
	var b [32]byte
	n, _ := io.ReadFull(r, b[:])
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// argvCommand runs a program directly, in a process group of its own, as
// shellCommand runs the shell; on Linux it is killed if ceiling dies.
func argvCommand(argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd.SysProcAttr, syscall.SIGKILL)
	return cmd
}

// kill sends SIGKILL to the target's process group.
func (t *Target) kill() {
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
}

func (t *Target) stop() error {
	pgid := t.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop target: %w", err)
	}
	deadline := time.NewTimer(t.grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	// Wait for the shell, then for the rest of its group.
	done := t.done
	for !t.Exited() || groupAlive(pgid) {
		select {
		case <-deadline.C:
			err := syscall.Kill(-pgid, syscall.SIGKILL)
			<-t.done
			if err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop target: %w", err)
			}
			return nil
		case <-done:
			done = nil // from now on, poll for the rest of the group
		case <-tick.C:
		}
	}
	return nil
}

// groupAlive reports whether a process of the group pgid is still running.
// Zombies do not count: a member orphaned by the shell's exit waits for
// PID 1 to reap it, which can take a while. Without /proc (macOS, the BSDs)
// zombies cannot be told apart and count as running, until reaped.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	all, err := procfs.AllProcs()
	if err != nil {
		return true
	}
	for _, p := range all {
		if st, err := p.Stat(); err == nil && st.PGRP == pgid && !gone(st) {
			return true
		}
	}
	return false
}

// gone reports whether a process has exited (a zombie waiting to be reaped,
// or dead).
func gone(st procfs.ProcStat) bool {
	return st.State == "Z" || st.State == "X" || st.State == "x"
}
