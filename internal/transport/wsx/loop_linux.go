package wsx

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/epoll"
)

// Loop is WebSocket over non-blocking sockets driven by one epoll set, in
// its caller's goroutine (see transport.SocketLoop): a frame is one write,
// its ack usually one read, and no goroutine waits in Go's network poller.
// The handshake is gorilla's, in Dial's goroutine; the socket is then
// handed to the loop, which reads and writes frames with its own codec
// (frame.go). It speaks ws:// only: wss:// stays on goroutines.
type Loop struct {
	d    *Dialer
	base time.Time
	ep   *epoll.Set
	rx   epoll.Receiver
	wall time.Duration // the wall clock's lead over the loop's offsets, read at each Poll
	rbuf []byte
	wbuf []byte
	rng  *rand.PCG // mask keys: a client must mask, with keys a proxy cannot guess; a load test's need not be secret
	gen  int32

	mu       sync.Mutex // guards incoming and shut: Dial adds from any goroutine
	incoming []*wsock
	shut     bool

	socks   []*wsock // by descriptor, nil if none: the socket's number is its descriptor
	downs   []*wsock // sockets that failed, reported at the next Poll
	stalled []*wsock // sockets with bytes the kernel has not taken yet
	h       transport.SocketHandler
	cur     *wsock // the socket being parsed
}

var _ transport.SocketLoop = (*Loop)(nil)

// wsock is one socket of the loop.
type wsock struct {
	fd      int
	owner   int
	gen     int32
	msg     message
	in      []byte // the start of a frame still coming
	out     []byte // bytes the kernel has not taken yet
	outAt   time.Duration
	wto     time.Duration // the write timeout
	rxAt    time.Duration // when the kernel received the last bytes read, or 0
	wantOut bool
	dead    bool
	err     error
}

// NewLoop returns an event loop that handshakes as d does, or an error
// when the system refuses it an epoll set.
func NewLoop(d *Dialer) (transport.SocketLoop, error) {
	ep, err := epoll.New()
	if err != nil {
		return nil, err
	}
	return &Loop{d: d, base: time.Now(), ep: ep, rbuf: make([]byte, 64<<10), rng: rand.NewPCG(uint64(time.Now().UnixNano()), 0x77_73_78)}, nil
}

// SetBase sets the time the loop's offsets count from.
func (l *Loop) SetBase(t time.Time) { l.base = t }

// Now is the time since the base.
func (l *Loop) Now() time.Duration { return time.Since(l.base) }

var errLoopClosed = errors.New("websocket loop closed")

// Dial handshakes with gorilla, then takes the socket's descriptor for the
// loop. The handshake's answer is read exactly to its end (headConn), so
// that frames a server sends at once stay in the socket for the loop.
func (l *Loop) Dial(ctx context.Context, c transport.SocketConfig, owner int) (int, error) {
	if !strings.HasPrefix(strings.ToLower(c.URL), "ws://") {
		return -1, errors.New("the websocket loop speaks ws:// only")
	}
	conn, err := l.d.handshake(ctx, c, newHeadConn)
	if err != nil {
		return -1, err
	}
	fd, err := detach(conn)
	if err != nil {
		return -1, err
	}
	epoll.Stamp(fd)
	s := &wsock{fd: fd, owner: owner, wto: c.WriteTimeout, msg: message{max: int64(c.MaxFrameBytes)}}
	if s.msg.max <= 0 {
		s.msg.max = 1 << 20
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		unix.Close(fd)
		return -1, errLoopClosed
	}
	l.incoming = append(l.incoming, s)
	return fd, nil
}

// detach returns a non-blocking duplicate of conn's descriptor and closes
// conn: the duplicate keeps the connection open, and Go's poller no longer
// watches it.
func detach(conn *websocket.Conn) (int, error) {
	nc := conn.NetConn()
	if h, ok := nc.(*headConn); ok {
		nc = h.Conn
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		conn.Close()
		return -1, errors.New("websocket loop: not a TCP connection")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		conn.Close()
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		derr = err
	}
	conn.Close()
	if derr != nil {
		return -1, os.NewSyscallError("dup", derr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("setnonblock", err)
	}
	return fd, nil
}

// adopt moves the sockets Dial opened into the loop.
func (l *Loop) adopt() {
	l.mu.Lock()
	in := l.incoming
	l.incoming = nil
	l.mu.Unlock()
	for _, s := range in {
		l.gen++
		s.gen = l.gen
		for len(l.socks) <= s.fd {
			l.socks = append(l.socks, nil)
		}
		l.socks[s.fd] = s
		if err := l.ep.Ctl(unix.EPOLL_CTL_ADD, s.fd, unix.EPOLLIN|unix.EPOLLRDHUP, s.gen); err != nil {
			l.kill(s, err)
		}
	}
}

// sock returns socket id, adopting new ones if it is not known yet.
func (l *Loop) sock(id int) *wsock {
	if id < 0 {
		return nil
	}
	if id >= len(l.socks) || l.socks[id] == nil {
		l.adopt()
	}
	if id >= len(l.socks) {
		return nil
	}
	return l.socks[id]
}

var errDown = errors.New("websocket: socket closed")

// Send writes frame as a text frame on socket id.
func (l *Loop) Send(id int, frame []byte) error {
	s := l.sock(id)
	if s == nil || s.dead {
		return errDown
	}
	return l.write(s, opText, frame)
}

// maxUnsent bounds what a socket keeps that the kernel would not take:
// past it the target is not reading, and the socket goes down.
const maxUnsent = 4 << 20

// write writes a frame of op carrying p on s, keeping what the kernel does
// not take for when s drains.
func (l *Loop) write(s *wsock, op byte, p []byte) error {
	key := uint32(l.rng.Uint64())
	if len(s.out) > 0 {
		s.out = appendFrame(s.out, op, p, key)
		if len(s.out) > maxUnsent {
			err := errors.New("websocket: the target does not read (write buffer full)")
			l.kill(s, err)
			return err
		}
		return nil
	}
	l.wbuf = appendFrame(l.wbuf[:0], op, p, key)
	w, err := l.put(s, l.wbuf)
	if err == nil && w < len(l.wbuf) {
		s.out = append(s.out[:0], l.wbuf[w:]...)
		s.outAt = l.Now()
		l.stalled = append(l.stalled, s)
		l.want(s, true)
	}
	return err
}

// drain writes what s kept, when the kernel says it has room.
func (l *Loop) drain(s *wsock) {
	w, err := l.put(s, s.out)
	switch {
	case err != nil:
	case w == len(s.out):
		s.out = s.out[:0]
		l.want(s, false)
	case w > 0:
		s.out = s.out[:copy(s.out, s.out[w:])]
		s.outAt = l.Now() // it moves: the write timeout counts from here
	}
}

// put writes b on s until the kernel takes no more, and returns how much
// it took.
func (l *Loop) put(s *wsock, b []byte) (int, error) {
	w := 0
	for w < len(b) {
		n, errno := epoll.Write(s.fd, b[w:])
		switch errno {
		case 0:
			w += n
		case unix.EINTR:
		case unix.EAGAIN:
			return w, nil
		default:
			l.kill(s, errno)
			return w, errno
		}
	}
	return w, nil
}

// want sets whether s waits for room to write.
func (l *Loop) want(s *wsock, out bool) {
	if s.wantOut == out || s.dead {
		return
	}
	s.wantOut = out
	ev := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if out {
		ev |= unix.EPOLLOUT
	}
	if err := l.ep.Ctl(unix.EPOLL_CTL_MOD, s.fd, ev, s.gen); err != nil {
		l.kill(s, err)
	}
}

// kill marks s failed with err; its Down is reported by Poll.
func (l *Loop) kill(s *wsock, err error) {
	if s.dead {
		return
	}
	s.dead, s.err = true, err
	l.downs = append(l.downs, s)
}

// Poll waits up to d for the network and passes what came to h.
func (l *Loop) Poll(d time.Duration, h transport.SocketHandler) {
	l.h = h
	l.wall = epoll.WallLead(l.base)
	l.adopt()
	l.checkStalled()
	if len(l.downs) > 0 {
		d = 0
		l.reportDowns()
	}
	n := l.ep.Wait(d)
	for i := range n {
		ev := &l.ep.Events[i]
		fd := int(ev.Fd)
		if fd >= len(l.socks) || l.socks[fd] == nil || l.socks[fd].gen != ev.Pad || l.socks[fd].dead {
			continue
		}
		s := l.socks[fd]
		if ev.Events&unix.EPOLLOUT != 0 && len(s.out) > 0 {
			l.drain(s)
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 && !s.dead {
			l.read(s)
		}
	}
	l.reportDowns()
	l.h = nil
}

// checkStalled fails the sockets whose unsent bytes waited past their write
// timeout, and forgets those that drained.
func (l *Loop) checkStalled() {
	now := l.Now()
	kept := l.stalled[:0]
	for _, s := range l.stalled {
		switch {
		case s.dead || len(s.out) == 0:
		case s.wto > 0 && now-s.outAt > s.wto:
			l.kill(s, &net.OpError{Op: "write", Net: "tcp", Err: os.ErrDeadlineExceeded})
		default:
			kept = append(kept, s)
		}
	}
	clear(l.stalled[len(kept):])
	l.stalled = kept
}

// reportDowns closes the failed sockets and tells the handler.
func (l *Loop) reportDowns() {
	for len(l.downs) > 0 {
		s := l.downs[0]
		l.downs = l.downs[1:]
		l.socks[s.fd] = nil
		if l.h != nil {
			l.h.Down(s.fd, s.owner, s.err)
		}
		unix.Close(s.fd) // closing removes it from the epoll set
	}
	l.downs = nil
}

// readsPerEvent bounds the reads of one socket per event: a sender faster
// than the loop must not keep it from the others, from its sends and from
// its timeouts (epoll reports the socket again at the next wait).
const readsPerEvent = 4

// read reads what s has and passes its whole messages on.
func (l *Loop) read(s *wsock) {
	for range readsPerEvent {
		n, rx, errno := l.rx.Recv(s.fd, l.rbuf)
		switch {
		case errno == unix.EINTR:
			continue
		case errno == unix.EAGAIN:
			return
		case errno != 0:
			l.kill(s, errno)
			return
		case n == 0:
			l.kill(s, io.ErrUnexpectedEOF)
			return
		}
		s.rxAt = 0
		if rx != 0 {
			s.rxAt = time.Duration(rx) - l.wall
		}
		b := l.rbuf[:n]
		if len(s.in) > 0 {
			s.in = append(s.in, b...)
			b = s.in
		}
		l.cur = s
		used, err := s.msg.parse(b, l)
		l.cur = nil
		if err != nil {
			l.kill(s, err)
			return
		}
		if len(s.in) > 0 {
			s.in = s.in[:copy(s.in, b[used:])]
		} else {
			s.in = append(s.in, b[used:]...)
		}
		if n < len(l.rbuf) || s.dead {
			return // most likely all there was
		}
	}
}

// data passes a whole message of the socket being read to the handler,
// timed when the kernel received it.
func (l *Loop) data(p []byte) {
	at := l.Now()
	if rx := l.cur.rxAt; rx > 0 && rx < at {
		at = rx
	}
	l.h.Frame(l.cur.fd, l.cur.owner, p, at)
}

// control answers a ping with its pong.
func (l *Loop) control(op byte, p []byte) {
	if op == opPing && !l.cur.dead {
		_ = l.write(l.cur, opPong, p)
	}
}

// Sleep sleeps d without watching the network.
func (l *Loop) Sleep(d time.Duration) { epoll.Sleep(d) }

// Wake ends a Poll in progress.
func (l *Loop) Wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.shut {
		l.ep.Wake()
	}
}

// Close closes every socket and releases the loop.
func (l *Loop) Close() {
	l.mu.Lock()
	if l.shut {
		l.mu.Unlock()
		return
	}
	l.shut = true
	in := l.incoming
	l.incoming = nil
	l.mu.Unlock()
	for _, s := range in {
		unix.Close(s.fd)
	}
	for _, s := range l.socks {
		if s != nil {
			unix.Close(s.fd)
		}
	}
	l.socks, l.downs, l.stalled = nil, nil, nil
	l.ep.Close()
}

// headConn reads a handshake's answer exactly to its end, the blank line
// (CRLF or, as net/http accepts, a bare LF), never past it: it peeks at what came and takes no more than that. The
// frames a server sends right after the answer then stay in the socket for
// the loop, not in gorilla's read buffer.
type headConn struct {
	net.Conn
	rc   syscall.RawConn
	last uint32 // the last bytes taken, for an end split between reads
	done bool
}

func newHeadConn(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &headConn{Conn: c, rc: rc}
}

func (c *headConn) Read(p []byte) (int, error) {
	if c.done || len(p) == 0 {
		return c.Conn.Read(p)
	}
	n := 0
	var perr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, _, perr = unix.Recvfrom(int(fd), p, unix.MSG_PEEK)
		return perr != unix.EAGAIN
	})
	if err == nil && perr != nil {
		err = os.NewSyscallError("recvfrom", perr)
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	take := n
	for i := range n {
		// The blank line: "\n\r\n" or, as net/http also takes it, "\n\n".
		if p[i] == '\n' && (c.last&0xFF == '\n' || c.last&0xFFFF == 0x0A0D) {
			take, c.done = i+1, true
			break
		}
		c.last = c.last<<8 | uint32(p[i])
	}
	return io.ReadFull(c.Conn, p[:take])
}
