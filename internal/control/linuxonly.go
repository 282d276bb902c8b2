package control

import (
	"errors"
	"runtime"
)

// linuxOnly returns nil on Linux and elsewhere an error saying that what
// (such as "limiting a cgroup's CPU") needs Linux: the process trees and
// cgroups acted on are read in /proc and /sys/fs/cgroup, which only Linux
// has. The error matches errors.ErrUnsupported.
func linuxOnly(what string) error {
	if runtime.GOOS == "linux" {
		return nil
	}
	return linuxOnlyError(what)
}

// linuxOnlyError is linuxOnly's error: what needs Linux.
type linuxOnlyError string

func (e linuxOnlyError) Error() string { return string(e) + " is supported on Linux only" }

// Is makes errors.Is(err, errors.ErrUnsupported) true.
func (e linuxOnlyError) Is(target error) bool { return target == errors.ErrUnsupported }
