package testkit

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// FullBacklog listens on 127.0.0.1 with an accept queue of one and never
// accepts, and returns its address: a target whose accept queue is full,
// so that the kernel drops the handshakes of every connection past the
// first. It is closed when the test ends.
func FullBacklog(tb testing.TB) string {
	tb.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		tb.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
}
