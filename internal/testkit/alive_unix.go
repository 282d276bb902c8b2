//go:build unix

package testkit

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// alive reports whether the process pid exists and is no zombie (a test
// binary killed but not yet reaped is gone). Without /proc a zombie counts
// as alive until it is reaped.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses and may
	// hold spaces and parentheses of its own.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
