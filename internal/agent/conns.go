package agent

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Conns bound what a client's connections may hold of an agent: without
// them, connections that send half a request, or none after their
// first, stay open for ever, and a few hundred of them take every file
// descriptor the agent has (its coordinator's health check then finds
// none). Each zero field takes its default.
type Conns struct {
	// ReadHeader bounds reading a request's header. Zero: 10s.
	ReadHeader time.Duration
	// Read bounds reading a whole request, header and body. A session's
	// opening, once its token is checked, has a second more for each MiB
	// of its body (a plan and its users file). Zero: 30s.
	Read time.Duration
	// Write bounds writing an answer, from the end of its request's
	// header. A step's answer is given the step's own time (its start,
	// warm-up, window and drain) and a session's opening 2 minutes (it
	// checks the target first). Zero: 30s.
	Write time.Duration
	// Idle bounds a kept-alive connection's wait for its next request.
	// Zero: 30s.
	Idle time.Duration
	// PerClient caps the connections one IP address holds open at once;
	// past it, a new connection from that address is closed as soon as it
	// is accepted. A coordinator holds a few (its requests, its
	// heartbeats, a stop). Zero: 16.
	PerClient int
}

// The defaults of Conns, and the time a session's opening has.
const (
	defaultReadHeader = 10 * time.Second
	defaultRead       = 30 * time.Second
	defaultWrite      = 30 * time.Second
	defaultIdle       = 30 * time.Second
	defaultPerClient  = 16
	// openWrite bounds answering a session's opening: the agent checks
	// the target first. A coordinator waits as long.
	openWrite = 2 * time.Minute
)

func (c Conns) readHeader() time.Duration { return orDefault(c.ReadHeader, defaultReadHeader) }
func (c Conns) read() time.Duration       { return orDefault(c.Read, defaultRead) }

// readBody is how long a session's opening of n bytes (-1: not said, up
// to maxOpen) has to come: Read, and a second a MiB.
func (c Conns) readBody(n int64) time.Duration {
	if n < 0 || n > maxOpen {
		n = maxOpen
	}
	return c.read() + time.Duration(n)*time.Second/(1<<20)
}
func (c Conns) write() time.Duration { return orDefault(c.Write, defaultWrite) }
func (c Conns) idle() time.Duration  { return orDefault(c.Idle, defaultIdle) }

func (c Conns) perClient() int {
	if c.PerClient > 0 {
		return c.PerClient
	}
	return defaultPerClient
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// HTTPServer returns the http.Server that serves the API (Handler) within
// s.Conns' timeouts. Serve it on s.Listener's listener.
func (s *Server) HTTPServer() *http.Server {
	c := s.Conns
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: c.readHeader(),
		ReadTimeout:       c.read(),
		WriteTimeout:      c.write(),
		IdleTimeout:       c.idle(),
		MaxHeaderBytes:    16 << 10, // a token and a few headers
	}
}

// Listener returns ln with s.Conns.PerClient applied: at most that many
// connections open at once from one IP address.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &capped{Listener: ln, max: s.Conns.perClient(), open: map[string]int{}}
}

// hold readies the connection of a request whose answer takes long (a
// step, a session's opening) once its body is read: no read deadline (the
// server's would end the request's context while the answer is under
// way; a coordinator that goes away still ends it), and d to write the
// answer.
func hold(w http.ResponseWriter, d time.Duration) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Now().Add(d))
}

// capped is a listener that admits at most max connections at once from
// one IP address: past it, it closes a new connection as soon as it
// accepts it, and waits for the next.
//
// Concurrency: Accept is called by one goroutine (the server's); the
// connections it returns are closed from any.
type capped struct {
	net.Listener
	max int

	mu   sync.Mutex
	open map[string]int // by IP address, those with connections open only
}

// Accept implements net.Listener.
func (l *capped) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := hostOf(c.RemoteAddr())
		l.mu.Lock()
		if l.open[ip] >= l.max {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		return &counted{Conn: c, release: func() { l.release(ip) }}, nil
	}
}

func (l *capped) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

// hostOf is the IP address of a connection's remote end.
func hostOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// counted is a connection that leaves its listener's count when it is
// closed, once.
type counted struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close implements net.Conn.
func (c *counted) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
