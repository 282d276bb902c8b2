//go:build !windows

package transport

import "syscall"

// outOfResources are the errors of a process out of descriptors or ports.
var outOfResources = []error{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL}
