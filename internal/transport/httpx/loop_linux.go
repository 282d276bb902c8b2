package httpx

import (
	"errors"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/transport/epoll"
)

// Loop is HTTP/1.1 over non-blocking sockets driven by one epoll set, in
// its caller's goroutine (see transport.Loop): a request is one write, a
// response usually one read, and nothing waits in Go's network poller or
// switches goroutines. It speaks plain HTTP/1.1 only (no TLS, no
// redirects); the run falls back to H1 for anything else. It sends a
// static request in the wire form prepared once (Can), and any other
// request as it is at the time of Send, encoded then into a buffer of the
// connection it goes on, in the bytes H1 would send; it keeps the body of
// an answer to a request that Captures it. Its behaviour is H1's:
// keep-alive connections, a response parsed as readResponse parses it
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
	byFD    []*lconn         // the connection of each descriptor, nil if none
	preps   []*prepared      // the static requests, by pointer
	dests   map[string]*dest // the destinations resolved, by Host value (destination)
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

// prepared is a static request made ready to send: what the loop keeps
// of it, its wire form included, and where it goes.
type prepared struct {
	r    *transport.Request
	ok   bool
	req  sent
	dest *dest
}

// sent is what the loop keeps of a request once Send has returned: its
// wire form and what its end needs. The caller may render its next request
// into the same Request meanwhile, so nothing of that Request is kept but
// Expect and Limited, the plan's, which never change.
type sent struct {
	enc      []byte // the wire form: a static request's prepared one, or its connection's own
	expect   []int
	limited  []int
	bytesOut int64 // len(Body)
	head     bool  // a HEAD: the answer has no body
	idem     bool  // idempotent: it may be sent again (retry)
	capture  bool  // its answer's body goes to Outcome.Body
}

// dest is an address requests go to: where to connect, and the idle
// connections there.
type dest struct {
	sa   unix.Sockaddr
	af   int
	pool *pool
}

// maxDests bounds the destinations the loop remembers: a scenario whose
// rendered URLs name ever new hosts resolves each of the others anew
// rather than growing the loop forever.
const maxDests = 1024

// pool holds the idle keep-alive connections to one address, most recent
// last.
type pool struct{ idle []*lconn }

// lconn is one connection and the exchange on it.
type lconn struct {
	fd         int
	gen        int32
	dest       *dest
	req        sent   // the request of the exchange on it, or of its last
	own        []byte // the wire form of the last non-static request sent on it, reused
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
	return &Loop{
		cfg: c, base: time.Now(), dests: map[string]*dest{}, pools: map[string]*pool{},
		ep: ep, rbuf: make([]byte, 64<<10), cap: 1 << 30,
	}, nil
}

// Can prepares the static request r and reports whether the loop can send
// it in that prepared form. A request that is not static is never
// prepared (nor kept): Send encodes it afresh each time.
func (l *Loop) Can(r *transport.Request) bool {
	return r.Static && !r.Capture && l.prepare(r).ok
}

// prepare finds, or makes, the prepared form of the static request r.
func (l *Loop) prepare(r *transport.Request) *prepared {
	for _, p := range l.preps {
		if p.r == r {
			return p
		}
	}
	p := &prepared{r: r}
	l.preps = append(l.preps, p)
	line, err := parseRequestLine(r.Method, r.URL)
	if err != nil || line.tls {
		return p
	}
	if p.dest, err = l.destination(&line); err != nil {
		return p
	}
	p.req = sent{
		enc: encodeRequest(nil, &line, r.Header, r.Body), expect: r.Expect, limited: r.Limited,
		bytesOut: int64(len(r.Body)), head: line.method == "HEAD", idem: idempotent(line.method), capture: r.Capture,
	}
	p.ok = true
	return p
}

// route reads the URL of a request that is not static: its request line
// (target and Host borrowed from r.URL, valid while r is unchanged) and
// its destination. It parses the common plain URL itself (splitPlainURL)
// and finds its destination in dests, so that the request of a scenario
// costs no allocation; any other URL goes through parseRequestLine. What
// it cannot send ends the exchange as H1 would: a URL that does not parse
// is a Protocol failure, an address that does not resolve is classified
// as H1's dial classifies it (Connect). An https URL, which H1 would send
// over TLS, is a Protocol failure here: the load layer hands the loop only
// scenarios whose URL starts with "http://".
func (l *Loop) route(r *transport.Request) (requestLine, *dest, transport.Kind) {
	var line requestLine
	if authority, target, ok := splitPlainURL(r.URL); ok {
		line = requestLine{method: r.Method, target: target, host: authority}
	} else {
		var err error
		if line, err = parseRequestLine(r.Method, r.URL); err != nil || line.tls {
			return line, nil, transport.Protocol
		}
	}
	d, err := l.destination(&line)
	if err != nil {
		// Wrapped as H1's dialer wraps what it could not resolve, to
		// classify it alike (Connect).
		return line, nil, transport.ClassifyError(&net.OpError{Op: "dial", Net: "tcp", Err: err})
	}
	return line, d, transport.OK
}

// destination is where line goes: the one remembered for its Host value,
// or its address resolved (a name is looked up here, in the loop's
// goroutine) and remembered while dests holds fewer than maxDests. The
// Host value of an http URL names its address (port 80 when it names
// none), and, unlike the address, is in the URL as it is: looking it up
// allocates nothing. Requests to one address share its pool of idle
// connections, whatever their Host value.
func (l *Loop) destination(line *requestLine) (*dest, error) {
	if d := l.dests[line.host]; d != nil {
		return d, nil
	}
	if line.addr == "" { // split by splitPlainURL
		line.addr = plainAddr(line.host)
	}
	addr, err := net.ResolveTCPAddr("tcp", line.addr)
	if err != nil {
		return nil, err
	}
	d := &dest{}
	if ip4 := addr.IP.To4(); ip4 != nil {
		d.sa, d.af = &unix.SockaddrInet4{Port: addr.Port, Addr: [4]byte(ip4)}, unix.AF_INET
	} else {
		d.sa, d.af = &unix.SockaddrInet6{Port: addr.Port, Addr: [16]byte(addr.IP.To16())}, unix.AF_INET6
	}
	key := addr.String()
	if l.pools[key] == nil {
		l.pools[key] = &pool{}
	}
	d.pool = l.pools[key]
	if len(l.dests) < maxDests {
		l.dests[strings.Clone(line.host)] = d // not a piece of a URL the caller may let go
	}
	return d, nil
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

// Send starts r on an idle connection or a new one: a static request in
// its prepared form, any other encoded now into the connection's own
// buffer (a static request Can refused goes that way too, and ends as that
// way says).
func (l *Loop) Send(r *transport.Request, tag transport.Tag) bool {
	now := l.now()
	var p *prepared
	if r.Static {
		if p = l.prepare(r); !p.ok {
			p = nil
		}
	}
	var line requestLine
	var d *dest
	if p != nil {
		d = p.dest
	} else {
		var kind transport.Kind
		if line, d, kind = l.route(r); d == nil {
			l.endNow(tag, now, transport.Outcome{Kind: kind, BytesOut: int64(len(r.Body))})
			return true
		}
	}
	var c *lconn
	if n := len(d.pool.idle); n > 0 {
		c, d.pool.idle = d.pool.idle[n-1], d.pool.idle[:n-1]
	} else {
		if l.dialCap > 0 && l.dialed >= l.dialCap || l.nconns >= l.cap && !l.closeIdle() {
			return false
		}
		l.dialed++
		var err error
		if c, err = l.dial(d); err != nil {
			l.endNow(tag, now, transport.Outcome{Kind: transport.ClassifyError(err), BytesOut: int64(len(r.Body))})
			return true
		}
	}
	if p != nil {
		c.req = p.req
	} else {
		c.own = encodeRequest(c.own[:0], &line, r.Header, r.Body)
		c.req = sent{
			enc: c.own, expect: r.Expect, limited: r.Limited, bytesOut: int64(len(r.Body)),
			head: line.method == "HEAD", idem: idempotent(line.method), capture: r.Capture,
		}
	}
	l.flight++
	l.begin(c, tag, now, now+l.cfg.Timeout)
	return true
}

// endNow counts an exchange that ended before it had a connection, and
// queues its end for the next Poll.
func (l *Loop) endNow(tag transport.Tag, start time.Duration, out transport.Outcome) {
	l.flight++
	l.ended = append(l.ended, ended{tag: tag, start: start, out: out})
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
	c.p.reset(c.req.head, c.req.capture, int64(l.cfg.MaxBodyBytes))
	l.busy = append(l.busy, busyRef{c: c, seq: c.seq})
	if !c.connecting {
		l.write(c)
	}
}

// dial opens a non-blocking connection to d.
func (l *Loop) dial(d *dest) (*lconn, error) {
	fd, err := unix.Socket(d.af, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", err)}
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as Go's net does
	epoll.Stamp(fd)                                                   // the receive time of each read (rxAt)
	c := &lconn{fd: fd, dest: d}
	switch err = unix.Connect(fd, d.sa); {
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
	enc := c.req.enc
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
	} else if events&unix.EPOLLOUT != 0 && c.busy && c.wrote < len(c.req.enc) {
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
	resp := c.p.resp
	l.out = transport.Outcome{
		Kind: transport.Classify(resp.status, c.req.expect, c.req.limited), Status: resp.status,
		BytesIn: resp.body, BytesOut: c.req.bytesOut, Retried: c.retried, Header: c.p.header,
	}
	if c.req.capture {
		l.out.Body = c.p.body
	}
	tag, start, end := c.tag, c.start, l.now()
	if rx := c.rxAt; rx >= start && rx < end {
		end = rx // it came before it was read
	}
	c.busy, c.retried = false, false
	l.flight--
	if resp.close || c.wrote < len(c.req.enc) { // answered before it was all sent: out of step
		l.close(c)
	} else {
		c.reused = true
		l.want(c, false)
		c.dest.pool.idle = append(c.dest.pool.idle, c)
	}
	done(tag, start, end, &l.out)
	c.p.done()
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
// the error says so) and the request is idempotent, as H1 does. The new
// connection sends the same bytes: it takes over c's buffer, which holds
// the wire form of a request that was not static.
func (l *Loop) retry(c *lconn, err error) bool {
	if !c.reused || c.retried || c.p.resp.started || !stale(err) || !c.req.idem {
		return false
	}
	tag, start, deadline := c.tag, c.start, c.deadline
	c.busy = false
	l.close(c)
	nc, derr := l.dial(c.dest)
	if derr != nil {
		l.ended = append(l.ended, ended{tag: tag, start: start, out: transport.Outcome{
			Kind: transport.ClassifyError(derr), BytesOut: c.req.bytesOut, Retried: true,
		}})
		return true
	}
	nc.req, nc.own, c.own = c.req, c.own, nil
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
		Kind: kind, BytesIn: c.p.resp.body, BytesOut: c.req.bytesOut, Retried: c.retried,
	}})
	c.busy = false
	c.p.done()
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
		for i, x := range c.dest.pool.idle {
			if x == c {
				c.dest.pool.idle = append(c.dest.pool.idle[:i], c.dest.pool.idle[i+1:]...)
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
