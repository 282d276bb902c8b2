package dashboard

import (
	"context"
	"net"
	"sync"

	"github.com/ceiling-dev/ceiling/internal/run"
)

// The caps on what clients may hold of the page: whoever reaches its
// port, token or not, must not take the run's descriptors or its CPU.
const (
	// maxConns caps the connections open at once, from every address:
	// run.PageConns, which the run keeps out of its connections' share
	// of the open-file limit.
	maxConns = run.PageConns
	// maxConnsPerAddr caps the connections one IP address holds open: a
	// browser opens six at most to one server.
	maxConnsPerAddr = 8
	// maxStreams caps the event streams served at once, and
	// maxStreamsPerAddr those of one IP address: each costs a write of
	// every body published.
	maxStreams        = 16
	maxStreamsPerAddr = 4
)

// capped is a listener that admits at most maxConns connections at once,
// and maxConnsPerAddr from one IP address: past either, it closes a new
// connection as soon as it accepts it, and waits for the next.
//
// Concurrency: Accept is called by one goroutine (the server's); the
// connections it returns are closed from any.
type capped struct {
	net.Listener

	mu    sync.Mutex
	total int
	open  map[string]int // by IP address, those with connections open only
}

func newCapped(ln net.Listener) *capped {
	return &capped{Listener: ln, open: map[string]int{}}
}

// Accept implements net.Listener.
func (l *capped) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := ipOf(c.RemoteAddr())
		l.mu.Lock()
		if l.total >= maxConns || l.open[ip] >= maxConnsPerAddr {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.total++
		l.open[ip]++
		l.mu.Unlock()
		return &counted{Conn: c, ip: ip, release: l.release}, nil
	}
}

func (l *capped) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

// ipOf is the IP address of a connection's remote end.
func ipOf(a net.Addr) string {
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
	ip      string
	once    sync.Once
	release func(ip string)
}

// Close implements net.Conn.
func (c *counted) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.release(c.ip) })
	return err
}

// connKey is the context key of a request's connection.
type connKey struct{}

// withConn is the http.Server's ConnContext: a request's context holds
// its connection, for its event stream's address and send buffer.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf returns a request's connection, nil when it has none.
func connOf(ctx context.Context) *counted {
	c, _ := ctx.Value(connKey{}).(*counted)
	return c
}
