package epoll

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Set is an epoll set with an eventfd that Wake writes: a wait in
// progress, or the next one, ends at once.
type Set struct {
	ep, wake int
	pwait2   bool
	wakebuf  [8]byte
	// Events holds what the last Wait returned; the wake-up is never among
	// them.
	Events [128]unix.EpollEvent
}

// wakePad marks the eventfd's event: no socket's Pad is ever -1.
const wakePad = -1

// New returns an empty set, or the error of a system without epoll.
func New() (*Set, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, os.NewSyscallError("eventfd", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake), Pad: wakePad}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return &Set{ep: ep, wake: wake, pwait2: true}, nil
}

// Ctl adds (op EPOLL_CTL_ADD) or changes (EPOLL_CTL_MOD) what fd is
// watched for; its events carry fd and pad (never -1) back.
func (s *Set) Ctl(op, fd int, events uint32, pad int32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: pad}
	if err := unix.EpollCtl(s.ep, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Wait waits up to d (at most 2 ms, so that a caller's clock checks are
// never far apart) for events, and returns how many are in Events. It
// waits to the nanosecond where the kernel has epoll_pwait2 (5.11), else to
// the millisecond, rounded up. An interrupted wait returns nothing: the
// caller polls again. A Wake is consumed and not counted.
func (s *Set) Wait(d time.Duration) int {
	n := s.wait(max(d, 0))
	for i := 0; i < n; i++ {
		if s.Events[i].Pad == wakePad {
			_, _ = unix.Read(s.wake, s.wakebuf[:])
			n--
			s.Events[i] = s.Events[n]
			i--
		}
	}
	return n
}

func (s *Set) wait(d time.Duration) int {
	if s.pwait2 {
		d = min(d, 2*time.Millisecond)
		ts := unix.NsecToTimespec(int64(d))
		n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(s.ep), uintptr(unsafe.Pointer(&s.Events[0])),
			uintptr(len(s.Events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if errno != unix.ENOSYS {
			if errno != 0 {
				return 0
			}
			return int(n)
		}
		s.pwait2 = false
	}
	n, err := unix.EpollWait(s.ep, s.Events[:], int((d+time.Millisecond-1)/time.Millisecond))
	if err != nil {
		return 0
	}
	return n
}

// Wake ends a Wait in progress, or the next one. It is safe from any
// goroutine.
func (s *Set) Wake() {
	one := [8]byte{1}
	_, _ = unix.Write(s.wake, one[:])
}

// Close releases the set (not the descriptors in it).
func (s *Set) Close() {
	unix.Close(s.wake)
	unix.Close(s.ep)
}

// Receiver reads sockets with recvmsg, asking for the kernel's receive
// time of each read (the socket needs SO_TIMESTAMPNS, see Stamp), so that
// an answer read late is still timed when it arrived. Its buffers are
// reused: one Receiver per goroutine.
type Receiver struct {
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

// Stamp asks the kernel to stamp fd's reads with their receive time.
func Stamp(fd int) { _ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }

// Recv reads what fd has into b without waiting, and returns the kernel's
// receive time of those bytes as wall-clock nanoseconds (0 when it did not
// say).
func (r *Receiver) Recv(fd int, b []byte) (n int, rxWall int64, errno unix.Errno) {
	r.iov.Base = &b[0]
	r.iov.SetLen(len(b))
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	nr, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&r.msg)), unix.MSG_DONTWAIT)
	if errno == 0 && uint64(r.msg.Controllen) >= uint64(unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{})))) {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&r.oob[0]))
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS {
			rxWall = (*unix.Timespec)(unsafe.Pointer(&r.oob[unix.CmsgLen(0)])).Nano()
		}
	}
	return int(nr), rxWall, errno
}

// Sleep sleeps d without watching the network: at high rates a loop sends
// what is due, sleeps, and reads every answer that came in one wait, a
// wake-up per d instead of one per answer.
func Sleep(d time.Duration) {
	req, rem := unix.NsecToTimespec(int64(d)), unix.Timespec{}
	for { // a signal (Go preempts with one) cuts it short: sleep the rest
		_, _, errno := unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&rem)), 0)
		if errno != unix.EINTR {
			return
		}
		req = rem
	}
}

// Write writes b to the non-blocking fd without telling Go's scheduler:
// the call never blocks, and a scheduled system call would have the
// runtime's monitor take the processor away (and another thread woken to
// hold it) whenever the kernel's loopback work takes over 20 µs, which at
// tens of thousands of requests a second was a context switch every few
// requests.
func Write(fd int, b []byte) (int, unix.Errno) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	return int(n), errno
}

// WallLead is the wall clock's lead over offsets from base, read now: a
// Recv time minus it is an offset from base.
func WallLead(base time.Time) time.Duration {
	now := time.Now()
	return time.Duration(now.UnixNano()) - now.Sub(base)
}
