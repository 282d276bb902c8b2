//go:build linux

// Command uring answers one question: would an io_uring event loop beat
// ceiling's epoll loop (internal/transport/httpx/loop_linux.go) at
// generating closed-model HTTP/1.1 load on this machine? It is a
// measurement tool, not product code: it is not part of the ceiling
// binary, and it keeps only what both loops must do.
//
// It keeps -conns keep-alive connections to -url busy for -duration, one
// GET in flight on each (a closed model), in ONE goroutine locked to its
// thread, and counts the answers (Content-Length or chunked, no pipelining)
// in one of these loops, chosen by -mode:
//
//	epoll     non-blocking sockets in an epoll set, as ceiling does it: per
//	          wake one epoll_pwait2 (2 ms at most), then for each ready
//	          socket one recvmsg and, when its answer is whole, one write
//	          of the next request (raw system calls, as ceiling makes them).
//	uring     io_uring: a SEND of the request and a RECV into the
//	          connection's buffer per connection; each loop turn reaps every
//	          completion, queues the next SEND+RECV of every connection whose
//	          answer is whole (or another RECV if it is not), and submits
//	          them all with ONE io_uring_enter that also waits (2 ms at most).
//	uring-ms  the same, but each connection has one multishot RECV armed
//	          for good, reading into buffers the kernel picks from a provided
//	          buffer ring (IORING_REGISTER_PBUF_RING): per request one SEND
//	          to submit, no RECV to re-arm.
//
// Both io_uring modes mark the SEND IOSQE_CQE_SKIP_SUCCESS: a completed send
// posts nothing, only a failed one does. -defer sets the ring up with
// IORING_SETUP_SINGLE_ISSUER|IORING_SETUP_DEFER_TASKRUN (completions are
// run only when this thread asks, in io_uring_enter); -sqpoll with a kernel
// thread polling the submission queue.
//
// At the end it prints one JSON line: the mode, the requests completed with
// a 2xx answer, the errors, and the process's own user and system CPU time
// (getrusage RUSAGE_SELF: every thread, the kernel's work done on its
// behalf in its context included), per request. bench/uring.sh runs it
// against a private nginx; -serve points it at a Go server of its own for a
// quick correctness check (-url's path /chunked answers chunked there).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	target := flag.String("url", "http://127.0.0.1:18080/", "http:// URL (IPv4)")
	conns := flag.Int("conns", 50, "connections, one request in flight on each")
	duration := flag.Duration("duration", 10*time.Second, "how long to run")
	mode := flag.String("mode", "epoll", "epoll, uring or uring-ms")
	entries := flag.Int("entries", 0, "io_uring submission queue entries (0: a power of 2 >= 2*conns, at least 256)")
	deferRun := flag.Bool("defer", false, "io_uring: IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN")
	sqpoll := flag.Int("sqpoll", -1, "io_uring: IORING_SETUP_SQPOLL, its kernel thread pinned to this CPU (-1: off)")
	serve := flag.Bool("serve", false, "start a Go HTTP server on 127.0.0.1:0 and load it instead of -url's host (a correctness check: its CPU counts in the figures)")
	flag.Parse()
	res, err := run(*target, *conns, *duration, *mode, *entries, *deferRun, *sqpoll, *serve)
	if err != nil {
		fmt.Fprintln(os.Stderr, "uring:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	if res.Errors > 0 || res.Requests == 0 {
		os.Exit(2)
	}
}

type result struct {
	Mode     string  `json:"mode"`
	Defer    bool    `json:"defer,omitempty"`
	SQPoll   int     `json:"sqpoll_cpu,omitempty"`
	Conns    int     `json:"conns"`
	Seconds  float64 `json:"seconds"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	UserS    float64 `json:"user_s"`
	SysS     float64 `json:"sys_s"`
	USPerReq float64 `json:"us_cpu_per_req"`
	ReqS     float64 `json:"req_s"`
	Turns    int64   `json:"loop_turns"` // epoll_wait or io_uring_enter calls
}

// conn is one keep-alive connection: the answer read so far is buf[:have].
type conn struct {
	fd   int
	buf  []byte
	have int
	dead bool
}

// gen is the state both loops share.
type gen struct {
	conns    []*conn
	req      []byte
	requests int64 // 2xx answers
	errors   int64 // other answers, and connections that failed
	live     int
}

func run(target string, n int, d time.Duration, mode string, entries int, deferRun bool, sqpoll int, serve bool) (*result, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("-url %q: want http://host:port/path", target)
	}
	if serve {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/chunked" { // a flush before the end: chunked
				w.Write([]byte("o"))
				w.(http.Flusher).Flush()
			}
			w.Write([]byte("ok\n"))
		}))
		u.Host = ln.Addr().String()
	}
	addr, err := net.ResolveTCPAddr("tcp4", u.Host)
	if err != nil {
		return nil, err
	}
	path := u.RequestURI()
	g := &gen{req: []byte("GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"), live: n}
	sa := &unix.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	for range n {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		if err := unix.Connect(fd, sa); err != nil {
			return nil, fmt.Errorf("connect %s: %w", addr, err)
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		g.conns = append(g.conns, &conn{fd: fd, buf: make([]byte, 4096)})
	}

	runtime.LockOSThread()
	start := time.Now()
	var turns int64
	switch mode {
	case "epoll":
		turns, err = g.epoll(start.Add(d))
	case "uring", "uring-ms":
		if entries == 0 {
			entries = 256
			for entries < 2*n {
				entries *= 2
			}
		}
		turns, err = g.uring(start.Add(d), uint32(entries), mode == "uring-ms", deferRun, sqpoll)
	default:
		err = fmt.Errorf("-mode %q: want epoll, uring or uring-ms", mode)
	}
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	user := float64(ru.Utime.Nano()) / 1e9
	sys := float64(ru.Stime.Nano()) / 1e9
	res := &result{Mode: mode, Defer: deferRun, Conns: n, Seconds: secs, Requests: g.requests,
		Errors: g.errors, UserS: user, SysS: sys, ReqS: float64(g.requests) / secs, Turns: turns}
	if sqpoll >= 0 {
		res.SQPoll = sqpoll
	}
	if g.requests > 0 {
		res.USPerReq = (user + sys) * 1e6 / float64(g.requests)
	}
	return res, nil
}

// fail counts a broken connection and shuts it down (which also ends any
// io_uring receive still armed on it). The loops skip dead connections.
func (g *gen) fail(c *conn) {
	if c.dead {
		return
	}
	c.dead = true
	g.errors++
	g.live--
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	_ = unix.Close(c.fd)
}

// got looks at c's answer so far: true when it is whole (and counted), so
// the next request can go; false when more is needed or c failed.
func (g *gen) got(c *conn) bool {
	n, status, err := parse(c.buf[:c.have])
	switch {
	case err != nil || n > 0 && n != c.have: // garbage, or bytes nobody asked for
		g.fail(c)
		return false
	case n == 0:
		if c.have == len(c.buf) { // a long answer: room for more
			c.buf = append(c.buf, make([]byte, len(c.buf))...)
		}
		return false
	}
	c.have = 0
	if status >= 200 && status < 300 {
		g.requests++
	} else {
		g.errors++
	}
	return true
}

var (
	errAnswer = errors.New("not an HTTP/1.x answer this tool reads")
	crlf      = []byte("\r\n")
)

// parse returns the length of the whole answer at the start of b and its
// status, or 0 if b does not hold all of it yet. It reads Content-Length
// and chunked bodies (without trailers): enough for nginx's `return 200`
// and Go's net/http, not a general HTTP parser.
func parse(b []byte) (n, status int, err error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return 0, 0, nil
	}
	if end < 12 || !bytes.HasPrefix(b, []byte("HTTP/1.")) {
		return 0, 0, errAnswer
	}
	if status, err = strconv.Atoi(string(b[9:12])); err != nil {
		return 0, 0, errAnswer
	}
	length, chunked := -1, false
	head := b[:end+2]
	head = head[bytes.Index(head, crlf)+2:] // past the status line
	for len(head) > 0 {
		i := bytes.Index(head, crlf)
		line := head[:i]
		head = head[i+2:]
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, 0, errAnswer
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil {
				return 0, 0, errAnswer
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		}
	}
	body := end + 4
	switch {
	case chunked:
		n, err = chunks(b, body)
		return n, status, err
	case length < 0 && (status == 204 || status == 304):
		length = 0
	case length < 0:
		return 0, 0, errAnswer // read-until-close: not for keep-alive
	}
	if len(b) < body+length {
		return 0, 0, nil
	}
	return body + length, status, nil
}

// chunks returns where the chunked body starting at b[i:] ends, 0 if it is
// not all there yet.
func chunks(b []byte, i int) (int, error) {
	for {
		j := bytes.Index(b[i:], crlf)
		if j < 0 {
			return 0, nil
		}
		sz, _, _ := bytes.Cut(b[i:i+j], []byte(";"))
		size, err := strconv.ParseInt(string(bytes.TrimSpace(sz)), 16, 32)
		if err != nil || size < 0 {
			return 0, errAnswer
		}
		i += j + 2
		if len(b) < i+int(size)+2 {
			return 0, nil
		}
		if size == 0 { // the last chunk; no trailers
			if b[i] != '\r' || b[i+1] != '\n' {
				return 0, errAnswer
			}
			return i + 2, nil
		}
		i += int(size) + 2
	}
}

// ---------------------------------------------------------------------------
// epoll, as ceiling's loop does it.

func (g *gen) epoll(deadline time.Time) (turns int64, err error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, os.NewSyscallError("epoll_create1", err)
	}
	defer unix.Close(ep)
	for i, c := range g.conns {
		if err := unix.SetNonblock(c.fd, true); err != nil {
			return 0, err
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return 0, os.NewSyscallError("epoll_ctl", err)
		}
		g.send(c)
	}
	events := make([]unix.EpollEvent, len(g.conns))
	var msg unix.Msghdr
	var iov unix.Iovec
	ts := unix.NsecToTimespec(int64(2 * time.Millisecond))
	for g.live > 0 && time.Now().Before(deadline) {
		nr, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&events[0])),
			uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		turns++
		if errno != 0 {
			if errno == unix.EINTR {
				continue
			}
			return turns, os.NewSyscallError("epoll_pwait2", errno)
		}
		for _, ev := range events[:nr] {
			c := g.conns[ev.Fd]
			if c.dead {
				continue
			}
			b := c.buf[c.have:]
			iov.Base = &b[0]
			iov.SetLen(len(b))
			msg.Iov = &iov
			msg.SetIovlen(1)
			n, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT)
			switch {
			case errno == unix.EAGAIN:
				continue
			case errno != 0 || n == 0:
				g.fail(c)
				continue
			}
			c.have += int(n)
			if g.got(c) {
				g.send(c)
			}
		}
	}
	return turns, nil
}

// send writes the request on a non-blocking socket (it always fits).
func (g *gen) send(c *conn) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&g.req[0])), uintptr(len(g.req)))
	if errno != 0 || int(n) != len(g.req) {
		g.fail(c)
	}
}

// ---------------------------------------------------------------------------
// io_uring, with raw system calls. The structures are the kernel's
// (include/uapi/linux/io_uring.h).

const (
	opSend = 26 // IORING_OP_SEND
	opRecv = 27 // IORING_OP_RECV

	sqeBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT
	sqeSkipSuccess  = 1 << 6 // IOSQE_CQE_SKIP_SUCCESS
	recvMultishot   = 1 << 1 // IORING_RECV_MULTISHOT, in sqe.ioprio

	setupSQPoll       = 1 << 1  // IORING_SETUP_SQPOLL
	setupSQAff        = 1 << 2  // IORING_SETUP_SQ_AFF
	setupSingleIssuer = 1 << 12 // IORING_SETUP_SINGLE_ISSUER
	setupDeferTaskrun = 1 << 13 // IORING_SETUP_DEFER_TASKRUN

	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP
	featExtArg     = 1 << 8 // IORING_FEAT_EXT_ARG

	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS
	enterSQWakeup  = 1 << 1 // IORING_ENTER_SQ_WAKEUP
	enterExtArg    = 1 << 3 // IORING_ENTER_EXT_ARG
	sqNeedWakeup   = 1 << 0 // IORING_SQ_NEED_WAKEUP, in the SQ ring's flags

	cqeFBuffer = 1 << 0 // IORING_CQE_F_BUFFER
	cqeFMore   = 1 << 1 // IORING_CQE_F_MORE

	registerPbufRing = 22 // IORING_REGISTER_PBUF_RING

	offSQRing = 0          // IORING_OFF_SQ_RING
	offSQEs   = 0x10000000 // IORING_OFF_SQES
)

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufGroup    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	_           uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// getEventsArg is struct io_uring_getevents_arg: the wait's timeout.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// ring is an io_uring instance with its rings mapped. Head and tail words
// the kernel also touches are read and written with sync/atomic.
type ring struct {
	fd      int
	sqHead  *uint32
	sqTail  *uint32
	sqFlags *uint32
	sqMask  uint32
	sqes    []sqe
	tail    uint32 // our SQ tail, published at enter
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []cqe
	sqpoll  bool
	ts      unix.Timespec
	arg     getEventsArg
}

func word(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }

func newRing(entries uint32, flags uint32, sqCPU int) (*ring, error) {
	p := params{flags: flags}
	if sqCPU >= 0 {
		p.flags |= setupSQPoll | setupSQAff
		p.sqThreadCPU = uint32(sqCPU)
		p.sqThreadIdle = 1000 // ms
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, os.NewSyscallError("io_uring_setup", errno)
	}
	if p.features&featSingleMmap == 0 || p.features&featExtArg == 0 {
		return nil, errors.New("io_uring: kernel lacks IORING_FEAT_SINGLE_MMAP or EXT_ARG")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	mem, err := unix.Mmap(int(fd), offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	sqeMem, err := unix.Mmap(int(fd), offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	r := &ring{
		fd:      int(fd),
		sqHead:  word(mem, p.sqOff.head),
		sqTail:  word(mem, p.sqOff.tail),
		sqFlags: word(mem, p.sqOff.flags),
		sqMask:  *word(mem, p.sqOff.ringMask),
		sqes:    unsafe.Slice((*sqe)(unsafe.Pointer(&sqeMem[0])), p.sqEntries),
		cqHead:  word(mem, p.cqOff.head),
		cqTail:  word(mem, p.cqOff.tail),
		cqMask:  *word(mem, p.cqOff.ringMask),
		cqes:    unsafe.Slice((*cqe)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries),
		sqpoll:  sqCPU >= 0,
		ts:      unix.NsecToTimespec(int64(2 * time.Millisecond)),
	}
	r.tail = atomic.LoadUint32(r.sqTail)
	// The SQ index array maps slot i to SQE i, once and for all.
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[p.sqOff.array])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.arg.ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
	return r, nil
}

// get returns a cleared SQE to fill, submitting what is queued first if the
// queue is full (it never is when entries >= 2 × connections).
func (r *ring) get() *sqe {
	for r.tail-atomic.LoadUint32(r.sqHead) > r.sqMask {
		r.enter(0)
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s
}

// enter publishes the queued SQEs and submits them, waiting for at least
// minComplete completions (2 ms at most): one system call per loop turn.
func (r *ring) enter(minComplete uint32) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	toSubmit := r.tail - atomic.LoadUint32(r.sqHead)
	flags := uintptr(enterExtArg)
	if minComplete > 0 {
		flags |= enterGetEvents
	}
	if r.sqpoll {
		// The kernel thread submits; wake it if it went to sleep.
		if atomic.LoadUint32(r.sqFlags)&sqNeedWakeup != 0 {
			flags |= enterSQWakeup
		}
		if minComplete == 0 && flags&enterSQWakeup == 0 {
			return nil
		}
	}
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete),
		flags, uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg))
	switch errno {
	case 0, unix.ETIME, unix.EINTR, unix.EAGAIN, unix.EBUSY:
		return nil
	}
	return os.NewSyscallError("io_uring_enter", errno)
}

// bufRing is a provided buffer ring (group 0) for multishot receives.
type bufRing struct {
	mem   []byte // the ring: n × struct io_uring_buf; the tail is the u16 at byte 14
	bufs  []byte // n buffers of size bytes
	size  int
	mask  uint16
	tail  uint16
	dirty bool
}

func newBufRing(r *ring, n, size int) (*bufRing, error) {
	mem, err := unix.Mmap(-1, 0, n*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	br := &bufRing{mem: mem, bufs: make([]byte, n*size), size: size, mask: uint16(n - 1)}
	reg := struct {
		ringAddr    uint64
		ringEntries uint32
		bgid        uint16
		flags       uint16
		resv        [3]uint64
	}{ringAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), ringEntries: uint32(n)}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("io_uring_register(PBUF_RING)", errno)
	}
	for bid := range n {
		br.put(uint16(bid))
	}
	br.publish()
	return br, nil
}

// put gives buffer bid back to the kernel (seen at the next publish). It
// writes addr, len and bid field by field: the first entry's last two bytes
// are the ring's tail.
func (br *bufRing) put(bid uint16) {
	e := br.mem[int(br.tail&br.mask)*16:]
	*(*uint64)(unsafe.Pointer(&e[0])) = uint64(uintptr(unsafe.Pointer(&br.bufs[int(bid)*br.size])))
	*(*uint32)(unsafe.Pointer(&e[8])) = uint32(br.size)
	*(*uint16)(unsafe.Pointer(&e[12])) = bid
	br.tail++
	br.dirty = true
}

// publish stores the tail with release semantics: Go has no 16-bit atomic
// store, so it stores the 32-bit word of entry 0's bid (ours, unchanged)
// and the tail.
func (br *bufRing) publish() {
	if !br.dirty {
		return
	}
	w := (*uint32)(unsafe.Pointer(&br.mem[12]))
	bid0 := *(*uint16)(unsafe.Pointer(&br.mem[12]))
	atomic.StoreUint32(w, uint32(br.tail)<<16|uint32(bid0))
	br.dirty = false
}

// user_data: the connection's index, shifted, and what the SQE was.
const (
	udSend = 0
	udRecv = 1
)

// uringLoop is one io_uring run's ring, its buffer ring (multishot) and
// how it receives.
type uringLoop struct {
	g         *gen
	r         *ring
	br        *bufRing // nil unless multishot
	multishot bool
}

func (g *gen) uring(deadline time.Time, entries uint32, multishot, deferRun bool, sqCPU int) (turns int64, err error) {
	var flags uint32
	if deferRun {
		flags |= setupSingleIssuer | setupDeferTaskrun
	}
	r, err := newRing(entries, flags, sqCPU)
	if err != nil {
		return 0, err
	}
	defer unix.Close(r.fd)
	u := &uringLoop{g: g, r: r, multishot: multishot}
	if multishot {
		n := 256
		for n < 4*len(g.conns) {
			n *= 2
		}
		if u.br, err = newBufRing(r, n, 4096); err != nil {
			return 0, err
		}
	}
	for i := range g.conns {
		u.send(i)
		u.recv(i)
	}
	for g.live > 0 && time.Now().Before(deadline) {
		if err := r.enter(1); err != nil {
			return turns, err
		}
		turns++
		head, tail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
		for ; head != tail; head++ {
			u.complete(&r.cqes[head&r.cqMask])
		}
		atomic.StoreUint32(r.cqHead, head)
		if u.br != nil {
			u.br.publish()
		}
	}
	return turns, nil
}

// send queues connection i's request.
func (u *uringLoop) send(i int) {
	s := u.r.get()
	s.opcode, s.flags, s.fd = opSend, sqeSkipSuccess, int32(u.g.conns[i].fd)
	s.addr, s.len = uint64(uintptr(unsafe.Pointer(&u.g.req[0]))), uint32(len(u.g.req))
	s.userData = uint64(i)<<1 | udSend
}

// recv queues a receive on connection i.
func (u *uringLoop) recv(i int) {
	c, s := u.g.conns[i], u.r.get()
	s.opcode, s.fd, s.userData = opRecv, int32(c.fd), uint64(i)<<1|udRecv
	if u.multishot { // the kernel picks a buffer of group 0
		s.flags, s.ioprio = sqeBufferSelect, recvMultishot
	} else {
		b := c.buf[c.have:]
		s.addr, s.len = uint64(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))
	}
}

// complete handles one completion: a failed send, or what a receive
// brought, sending the next request when a response is whole and receiving
// again when the receive is done.
func (u *uringLoop) complete(e *cqe) {
	i, kind, res, fl := int(e.userData>>1), e.userData&1, e.res, e.flags
	c := u.g.conns[i]
	if kind == udSend { // only a failed send posts (CQE_SKIP_SUCCESS)
		if res < 0 || int(res) != len(u.g.req) {
			u.g.fail(c)
		}
		return
	}
	if u.multishot && fl&cqeFBuffer != 0 {
		u.take(c, res, uint16(fl>>16))
	}
	if c.dead {
		return
	}
	switch {
	case res == -int32(unix.ENOBUFS) && u.multishot: // out of buffers: arm again below
	case res <= 0:
		u.g.fail(c)
		return
	default:
		if !u.multishot { // (a multishot buffer was copied in take)
			c.have += int(res)
		}
		if u.g.got(c) {
			u.send(i)
		} else if c.dead {
			return
		}
	}
	// A single-shot RECV is always done; a multishot one is while the
	// kernel does not say MORE.
	if !u.multishot || fl&cqeFMore == 0 {
		u.recv(i)
	}
}

// take copies the res bytes of buffer bid into c (unless c is dead) and
// gives the buffer back to the kernel.
func (u *uringLoop) take(c *conn, res int32, bid uint16) {
	if res > 0 && !c.dead {
		for c.have+int(res) > len(c.buf) {
			c.buf = append(c.buf, make([]byte, len(c.buf))...)
		}
		off := int(bid) * u.br.size
		c.have += copy(c.buf[c.have:], u.br.bufs[off:off+int(res)])
	}
	u.br.put(bid)
}
