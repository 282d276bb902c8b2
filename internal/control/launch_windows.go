package control

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// argvCommand runs a program directly, in a process group of its own, as
// shellCommand runs cmd.exe.
func argvCommand(argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	return cmd
}

// shellCommand runs command through cmd.exe /d /s /c (as Node does: /d skips
// AutoRun commands, /s keeps command as written between the outer quotes)
// in a process group of its own, so that a Ctrl-C in ceiling's console does
// not reach it; ceiling stops it itself. cmd.exe does not parse its command
// line as other programs do, so the line is written whole (SysProcAttr.CmdLine)
// rather than built from escaped arguments.
func shellCommand(command string) (*exec.Cmd, *os.File) {
	shell := os.Getenv("ComSpec")
	if shell == "" {
		shell = "cmd.exe"
	}
	cmd := exec.Command(shell)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       syscall.EscapeArg(shell) + ` /d /s /c "` + command + `"`,
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP,
	}
	return cmd, nil
}

// childPID has nothing to read on Windows: the target is the shell.
func childPID(*os.File) int { return 0 }

// stop kills the shell at once: Windows has no SIGTERM, and a process group
// cannot be killed as a whole, so the processes the shell started are not
// reached.
func (t *Target) stop() error {
	if err := t.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		select {
		case <-t.done:
			return nil // it had exited already (TerminateProcess then fails with access denied)
		case <-time.After(t.grace):
			return fmt.Errorf("stop target: %w", err)
		}
	}
	<-t.done
	return nil
}

// kill kills the shell (the processes it started are not reached).
func (t *Target) kill() {
	_ = t.cmd.Process.Kill()
}
