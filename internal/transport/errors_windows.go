package transport

import "syscall"

// outOfResources are the errors of a process out of socket handles or
// ports: Windows' socket errors (WSAEMFILE, WSAENOBUFS, which it returns
// when the ephemeral ports are spent, WSAEADDRNOTAVAIL), and the C
// library's.
var outOfResources = []error{
	syscall.Errno(10024), syscall.Errno(10055), syscall.Errno(10049),
	syscall.EMFILE, syscall.ENFILE,
}
