package demo

import (
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// outcome is what became of one chat message.
type outcome int

const (
	saved     outcome = iota // saved now (and queued for the webhook, if any)
	duplicate                // its (site, clientId) was saved before: not saved or queued again
	flooded                  // the site's flood brake rejected it
	failed                   // the store could not save it
)

// defaultSite is the site of a widget frame that names none.
const defaultSite = "default"

// chat is the chat backend: widget sockets and REST in front of one path,
// flood brake → store → webhook job.
type chat struct {
	store *store
	brake *brake // nil: no brake
	jobs  *jobs  // nil: no webhook
	count counters
	saves *window

	up      websocket.Upgrader
	mu      sync.Mutex // guards conns and closed
	conns   map[*websocket.Conn]struct{}
	closed  bool
	handler sync.WaitGroup // widget handlers still running
}

// newChat starts the chat backend cfg describes (defaults applied).
func newChat(cfg Config) (*chat, error) {
	st, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	c := &chat{
		store: st, saves: newWindow(), conns: map[*websocket.Conn]struct{}{},
		up: websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 1024, CheckOrigin: func(*http.Request) bool { return true }},
	}
	if cfg.FloodRate > 0 {
		c.brake = newBrake(cfg.FloodRate, cfg.FloodBurst)
	}
	if cfg.Webhook != "" {
		c.jobs = startJobs(cfg, &c.count)
	}
	return c, nil
}

// accept takes one message through the path every message takes: the
// site's flood brake (braked false skips it), the store, and a webhook job
// if the message is new. id is the client's id as clientID returns it. For
// a flooded message wait is how long until the site may send again.
func (c *chat) accept(site string, braked bool, id, text string) (o outcome, wait time.Duration) {
	if c.brake != nil && braked {
		if ok, wait := c.brake.allow(site, time.Now()); !ok {
			c.count.flooded.Add(1)
			return flooded, wait
		}
	}
	start := time.Now()
	kept, dup, err := c.store.save(site, id, text, start)
	end := time.Now()
	if err != nil {
		return failed, 0
	}
	c.saves.record(end.Sub(start), end)
	if dup {
		c.count.duplicate.Add(1)
		return duplicate, 0
	}
	c.count.saved.Add(1)
	if c.jobs != nil {
		c.jobs.add(kept)
	}
	return saved, 0
}

// track registers a widget socket so that close can end it; false: the
// backend is closing and conn must not be served.
func (c *chat) track(conn *websocket.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.conns[conn] = struct{}{}
	c.handler.Add(1)
	c.count.sockets.Add(1)
	return true
}

func (c *chat) untrack(conn *websocket.Conn) {
	c.mu.Lock()
	delete(c.conns, conn)
	c.mu.Unlock()
	c.count.sockets.Add(-1)
	c.handler.Done()
}

// close ends the widget sockets and waits for their handlers, stops the
// webhook lanes without waiting for the backlog, and closes the store.
func (c *chat) close() error {
	c.mu.Lock()
	c.closed = true
	for conn := range c.conns {
		conn.Close()
	}
	c.mu.Unlock()
	c.handler.Wait()
	if c.jobs != nil {
		c.jobs.close()
	}
	return c.store.close()
}
