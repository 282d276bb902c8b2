package httpx

import (
	"errors"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/epoll"
)

// Loop is HTTP/1.1 over non-blocking sockets driven by one epoll set, in
// its caller's goroutine (see transport.Loop): a request is one write, a
// response usually one read, and nothing waits in Go's network poller or
// switches goroutines. It speaks plain HTTP/1.1 only (no TLS, no
// redirects); the run falls back to H1 for anything else. Its behaviour is
// H1's: keep-alive connections, a response parsed as readResponse parses it
// (parser), one retry of an idempotent request that met a keep-alive
// connection the server had closed, a connection dropped after a response
// that asks it or is followed by bytes nobody asked for, the same error
// classes. An idle connection the server closes is seen at once (epoll
// reports it) and dropped.
type Loop struct {
	cfg     Config
	base    time.Time // times are offsets from it (SetBase)
	ep      *epoll.Set
	rbuf    []byte
	byFD    []*lconn // the connection of each descriptor, nil if none
	preps   []*prepared
	pools   map[string]*pool // idle connections by address, shared by the requests to it
	cap     int
	dialCap int // new connections between two Polls, 0: no bound (Limit)
	dialed  int // new connections since the last Poll
	nconns  int
	flight  int
	gen     int32
	busy    []busyRef // exchanges in the order they started, from bhead: timeouts
	bhead   int
	retries []busyRef // retried exchanges, whose deadlines are older than busy's tail
	ended   []ended   // exchanges that ended without a connection, for the next Poll
	spare   []ended   // the other buffer of ended, swapped by flush
	out     transport.Outcome
	// Each read asks for the kernel's receive time (SO_TIMESTAMPNS), so
	// that an answer read late is still timed when it arrived (Sleep).
	rx   epoll.Receiver
	wall time.Duration // the wall clock's lead over the loop's offsets, read at each Poll
}

var _ transport.Loop = (*Loop)(nil)

// prepared is a request made ready to send: its wire form and its address.
type prepared struct {
	r    *transport.Request
	ok   bool
	enc  []byte
	sa   unix.Sockaddr
	af   int
	head bool
	idem bool
	pool *pool
}

// pool holds the idle keep-alive connections to one address, most recent
// last.
type pool struct{ idle []*lconn }

// lconn is one connection and the exchange on it.
type lconn struct {
	fd         int
	gen        int32
	pool       *pool
	prep       *prepared // the request of the exchange on it, or of its last
	p          parser
	tag        transport.Tag
	start      time.Duration // from base, as every time of the loop
	deadline   time.Duration
	wrote      int
	rxAt       time.Duration // when the kernel received the last bytes read, or 0
	seq        uint32
	busy       bool
	connecting bool
	reused     bool
	retried    bool
	wantOut    bool
}

type busyRef struct {
	c   *lconn
	seq uint32
}

type ended struct {
	tag   transport.Tag
	start time.Duration
	out   transport.Outcome
}

// NewLoop returns an event loop for c, or an error when c asks for what
// it does not do (HTTP/2, redirects) or the system refuses it an epoll set.
func NewLoop(c Config) (transport.Loop, error) {
	c = c.withDefaults()
	if c.HTTP2 || c.FollowRedirects {
		return nil, errors.New("the event loop speaks HTTP/1.1 without redirects")
	}
	ep, err := epoll.New()
	if err != nil {
		return nil, err
	}
	return &Loop{cfg: c, base: time.Now(), pools: map[string]*pool{}, ep: ep, rbuf: make([]byte, 64<<10), cap: 1 << 30}, nil
}

// Can prepares r and reports whether the loop can send it.
func (l *Loop) Can(r *transport.Request) bool { return l.prepare(r).ok }

func (l *Loop) prepare(r *transport.Request) *prepared {
	for _, p := range l.preps {
		if p.r == r {
			return p
		}
	}
	p := &prepared{r: r}
	l.preps = append(l.preps, p)
	if !r.Static || r.Capture {
		return p
	}
	line, err := parseRequestLine(r.Method, r.URL)
	if err != nil || line.tls {
		return p
	}
	addr, err := net.ResolveTCPAddr("tcp", line.addr)
	if err != nil {
		return p
	}
	if ip4 := addr.IP.To4(); ip4 != nil {
		p.sa, p.af = &unix.SockaddrInet4{Port: addr.Port, Addr: [4]byte(ip4)}, unix.AF_INET
	} else {
		p.sa, p.af = &unix.SockaddrInet6{Port: addr.Port, Addr: [16]byte(addr.IP.To16())}, unix.AF_INET6
	}
	key := addr.String()
	if l.pools[key] == nil {
		l.pools[key] = &pool{}
	}
	p.pool = l.pools[key]
	p.enc = encodeRequest(nil, &line, r.Header, r.Body)
	p.head, p.idem, p.ok = line.method == "HEAD", idempotent(line.method), true
	return p
}

// SetBase sets the time the loop's offsets count from.
func (l *Loop) SetBase(t time.Time) { l.base = t }

// now reads the monotonic clock once (time.Since does, where time.Now
// reads the wall clock too).
func (l *Loop) now() time.Duration { return time.Since(l.base) }

// Limit caps the open connections and the new ones between two Polls.
func (l *Loop) Limit(conns, dialsPerPoll int) { l.cap, l.dialCap = max(conns, 1), dialsPerPoll }

// InFlight counts the exchanges in flight.
func (l *Loop) InFlight() int { return l.flight }

// Conns counts the open connections.
func (l *Loop) Conns() int { return l.nconns }

// Send starts r on an idle connection or a new one.
func (l *Loop) Send(r *transport.Request, tag transport.Tag) bool {
	p := l.prepare(r)
	now := l.now()
	var c *lconn
	if n := len(p.pool.idle); n > 0 {
		c, p.pool.idle = p.pool.idle[n-1], p.pool.idle[:n-1]
		c.prep = p
	} else {
		if l.dialCap > 0 && l.dialed >= l.dialCap || l.nconns >= l.cap && !l.closeIdle() {
			return false
		}
		l.dialed++
		var err error
		if c, err = l.dial(p); err != nil {
			l.flight++
			l.ended = append(l.ended, ended{tag: tag, start: now, out: transport.Outcome{
				Kind: transport.ClassifyError(err), BytesOut: int64(len(r.Body)),
			}})
			return true
		}
	}
	l.flight++
	l.begin(c, tag, now, now+l.cfg.Timeout)
	return true
}

// closeIdle closes an idle connection to some address, to make room under
// the cap for one to another; false when none is idle.
func (l *Loop) closeIdle() bool {
	for _, pl := range l.pools {
		if len(pl.idle) > 0 {
			l.close(pl.idle[0]) // the least recently used
			return true
		}
	}
	return false
}

// begin starts the exchange of tag on c.
func (l *Loop) begin(c *lconn, tag transport.Tag, start, deadline time.Duration) {
	c.busy, c.tag, c.start, c.deadline, c.wrote = true, tag, start, deadline, 0
	c.seq++
	c.p.reset(c.prep.head, int64(l.cfg.MaxBodyBytes))
	l.busy = append(l.busy, busyRef{c: c, seq: c.seq})
	if !c.connecting {
		l.write(c)
	}
}

// dial opens a non-blocking connection to p's address.
func (l *Loop) dial(p *prepared) (*lconn, error) {
	fd, err := unix.Socket(p.af, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", err)}
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as Go's net does
	epoll.Stamp(fd)                                                   // the receive time of each read (rxAt)
	c := &lconn{fd: fd, prep: p, pool: p.pool}
	switch err = unix.Connect(fd, p.sa); {
	case err == nil:
	case errors.Is(err, unix.EINPROGRESS):
		c.connecting = true
	default:
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	l.gen++
	c.gen = l.gen
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if c.connecting {
		events |= unix.EPOLLOUT
		c.wantOut = true
	}
	if err := l.ep.Ctl(unix.EPOLL_CTL_ADD, fd, events, c.gen); err != nil {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	for len(l.byFD) <= fd {
		l.byFD = append(l.byFD, nil)
	}
	l.byFD[fd] = c
	l.nconns++
	return c, nil
}

// write sends what is left of c's request, and asks to hear when the
// socket can take more if it could not take it all.
func (l *Loop) write(c *lconn) {
	enc := c.prep.enc
	for c.wrote < len(enc) {
		n, errno := epoll.Write(c.fd, enc[c.wrote:])
		switch errno {
		case 0:
			c.wrote += n
		case unix.EINTR:
		case unix.EAGAIN:
			l.want(c, true)
			return
		default:
			l.fail(c, errno)
			return
		}
	}
	l.want(c, false)
}

// want sets whether c waits for room to write.
func (l *Loop) want(c *lconn, out bool) {
	if c.wantOut == out {
		return
	}
	c.wantOut = out
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if out {
		events |= unix.EPOLLOUT
	}
	if err := l.ep.Ctl(unix.EPOLL_CTL_MOD, c.fd, events, c.gen); err != nil && c.busy {
		l.fail(c, err)
	}
}

// Poll waits up to d for the network and ends what it can.
func (l *Loop) Poll(d time.Duration, done transport.Done) {
	l.wall = epoll.WallLead(l.base)
	l.dialed = 0
	l.flush(done)
	if len(l.ended) > 0 {
		d = 0 // ended during the flush: their turn comes after a look at the network
	}
	if l.trim() {
		d = min(d, max(l.busy[l.bhead].c.deadline-l.now(), 0))
	}
	for _, b := range l.retries {
		d = min(d, max(b.c.deadline-l.now(), 0))
	}
	n := l.ep.Wait(d)
	for i := range n {
		ev := &l.ep.Events[i]
		fd := int(ev.Fd)
		if fd >= len(l.byFD) || l.byFD[fd] == nil || l.byFD[fd].gen != ev.Pad {
			continue // a connection closed earlier in this batch
		}
		l.handle(l.byFD[fd], ev.Events, done)
	}
	l.expire(l.now(), done)
}

// handle acts on what epoll reported for c.
func (l *Loop) handle(c *lconn, events uint32, done transport.Done) {
	if c.connecting {
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && soerr != 0 {
			err = unix.Errno(soerr)
		}
		if err != nil {
			l.failNow(c, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}, done)
			return
		}
		c.connecting = false
		l.write(c)
		if !c.busy {
			l.flush(done)
			return
		}
	} else if events&unix.EPOLLOUT != 0 && c.busy && c.wrote < len(c.prep.enc) {
		l.write(c)
	}
	if c.fd < 0 {
		l.flush(done)
		return
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.read(c, done)
	}
	l.flush(done)
}

// read reads what c has and feeds it to its exchange.
func (l *Loop) read(c *lconn, done transport.Done) {
	for {
		n, errno := l.recv(c)
		switch {
		case errno == unix.EINTR:
			continue
		case errno == unix.EAGAIN:
			return
		case !c.busy:
			l.close(c) // the server closed an idle connection, or spoke unasked
			return
		case errno != 0:
			l.failNow(c, errno, done)
			return
		case n == 0:
			if ok, perr := c.p.eof(); !ok {
				l.failNow(c, perr, done)
				return
			}
			c.p.resp.close = true
			l.complete(c, done)
			return
		}
		used, whole, perr := c.p.feed(l.rbuf[:n])
		switch {
		case perr != nil:
			l.failNow(c, perr, done)
			return
		case whole:
			if used < n {
				c.p.resp.close = true // bytes nobody asked for: out of step
			}
			l.complete(c, done)
			return
		case n < len(l.rbuf):
			return // most likely all there was
		}
	}
}

// complete ends c's exchange with its response.
func (l *Loop) complete(c *lconn, done transport.Done) {
	r := c.prep.r
	resp := c.p.resp
	l.out = transport.Outcome{
		Kind: transport.Classify(resp.status, r.Expect, r.Limited), Status: resp.status,
		BytesIn: resp.body, BytesOut: int64(len(r.Body)), Retried: c.retried, Header: c.p.header,
	}
	tag, start, end := c.tag, c.start, l.now()
	if rx := c.rxAt; rx >= start && rx < end {
		end = rx // it came before it was read
	}
	c.busy, c.retried = false, false
	l.flight--
	if resp.close || c.wrote < len(c.prep.enc) { // answered before it was all sent: out of step
		l.close(c)
	} else {
		c.reused = true
		l.want(c, false)
		c.pool.idle = append(c.pool.idle, c)
	}
	done(tag, start, end, &l.out)
}

// fail ends c's exchange with err from inside a write (no done at hand):
// the connection is closed and the failure queued for flush.
func (l *Loop) fail(c *lconn, err error) {
	if l.retry(c, err) {
		return
	}
	l.queueEnd(c, classifyH1(err))
}

// failNow ends c's exchange with err and passes it to done.
func (l *Loop) failNow(c *lconn, err error, done transport.Done) {
	l.fail(c, err)
	l.flush(done)
}

// retry sends c's request once more on a new connection when c was a
// keep-alive connection the server had closed (nothing of a response came,
// the error says so) and the request is idempotent, as H1 does.
func (l *Loop) retry(c *lconn, err error) bool {
	if !c.reused || c.retried || c.p.resp.started || !stale(err) || !c.prep.idem {
		return false
	}
	tag, start, deadline := c.tag, c.start, c.deadline
	c.busy = false
	l.close(c)
	nc, derr := l.dial(c.prep)
	if derr != nil {
		l.ended = append(l.ended, ended{tag: tag, start: start, out: transport.Outcome{
			Kind: transport.ClassifyError(derr), BytesOut: int64(len(c.prep.r.Body)), Retried: true,
		}})
		return true
	}
	nc.retried = true
	l.begin(nc, tag, start, deadline)
	if nc.busy { // begin queued it in busy, behind later deadlines: watch it here too
		l.retries = append(l.retries, busyRef{c: nc, seq: nc.seq})
	}
	return true
}

// queueEnd closes c and queues its exchange's end as kind.
func (l *Loop) queueEnd(c *lconn, kind transport.Kind) {
	l.ended = append(l.ended, ended{tag: c.tag, start: c.start, out: transport.Outcome{
		Kind: kind, BytesIn: c.p.resp.body, BytesOut: int64(len(c.prep.r.Body)), Retried: c.retried,
	}})
	c.busy = false
	l.close(c)
}

// flush passes the exchanges that ended without a response to done. Those
// that done itself ends (a closed-model user's next request that could not
// connect) wait for the next flush, so that a target refusing every
// connection cannot keep one flush going, nor the loop from reading.
func (l *Loop) flush(done transport.Done) {
	batch := l.ended
	l.ended = l.spare[:0]
	for i := range batch {
		l.flight--
		l.out = batch[i].out
		done(batch[i].tag, batch[i].start, l.now(), &l.out)
	}
	l.spare = batch[:0]
}

// trim drops the ended exchanges from the head of busy, and reports
// whether one in flight is left at its head.
func (l *Loop) trim() bool {
	for l.bhead < len(l.busy) {
		if b := l.busy[l.bhead]; b.c.seq == b.seq && b.c.busy {
			break
		}
		l.bhead++
	}
	if l.bhead == len(l.busy) || l.bhead > 1024 && l.bhead > len(l.busy)/2 {
		l.busy = l.busy[:copy(l.busy, l.busy[l.bhead:])]
		l.bhead = 0
	}
	return l.bhead < len(l.busy)
}

// expire ends the exchanges past their deadline as timeouts: those at the
// head of busy, and retried ones, which keep their first deadline.
func (l *Loop) expire(now time.Duration, done transport.Done) {
	kept := l.retries[:0]
	for _, b := range l.retries {
		switch {
		case b.c.seq != b.seq || !b.c.busy:
		case b.c.deadline <= now:
			l.queueEnd(b.c, timedOut(b.c))
		default:
			kept = append(kept, b)
		}
	}
	l.retries = kept
	for l.trim() {
		b := l.busy[l.bhead]
		if b.c.deadline > now {
			break
		}
		l.queueEnd(b.c, timedOut(b.c))
	}
	l.flush(done)
}

// timedOut is the class of c's exchange at its deadline: connect when the
// connection was never made (a target whose accept queue is full drops
// the handshake), as a dial's timeout is; timeout when no whole answer came.
func timedOut(c *lconn) transport.Kind {
	if c.connecting {
		return transport.Connect
	}
	return transport.Timeout
}

// close closes c and forgets it (an idle one too).
func (l *Loop) close(c *lconn) {
	if c.fd < 0 {
		return
	}
	if !c.busy {
		for i, x := range c.pool.idle {
			if x == c {
				c.pool.idle = append(c.pool.idle[:i], c.pool.idle[i+1:]...)
				break
			}
		}
	}
	l.byFD[c.fd] = nil
	unix.Close(c.fd) // closing removes it from the epoll set
	c.fd = -1
	c.seq++
	l.nconns--
}

// recv reads what c has into rbuf with recvmsg, and notes in c.rxAt when
// the kernel received it (0 when it did not say).
func (l *Loop) recv(c *lconn) (int, unix.Errno) {
	n, rx, errno := l.rx.Recv(c.fd, l.rbuf)
	c.rxAt = 0
	if rx != 0 {
		c.rxAt = time.Duration(rx) - l.wall
	}
	return n, errno
}

// Sleep sleeps d without watching the network: at high rates the caller
// sends what is due, sleeps, and reads every answer that came in one Poll,
// a wake-up per d instead of one per answer. The answers' end times are
// the kernel's receive times (SO_TIMESTAMPNS), not when they were read.
func (l *Loop) Sleep(d time.Duration) { epoll.Sleep(d) }

// Wake ends a Poll in progress.
func (l *Loop) Wake() { l.ep.Wake() }

// Abort ends every exchange in flight as a timeout.
func (l *Loop) Abort(done transport.Done) {
	for _, b := range l.busy[l.bhead:] {
		if b.c.seq == b.seq && b.c.busy {
			l.queueEnd(b.c, transport.Timeout)
		}
	}
	l.busy, l.bhead, l.retries = l.busy[:0], 0, l.retries[:0]
	l.flush(done)
}

// Reset closes every connection. Call it with nothing in flight.
func (l *Loop) Reset() {
	for _, c := range l.byFD {
		if c != nil {
			c.busy = false
			l.close(c)
		}
	}
	for _, pl := range l.pools {
		pl.idle = pl.idle[:0]
	}
	l.busy, l.bhead, l.retries = l.busy[:0], 0, l.retries[:0]
}

// Close releases the loop.
func (l *Loop) Close() {
	l.Reset()
	l.ep.Close()
}
