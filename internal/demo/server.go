package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// Config shapes the demo target.
type Config struct {
	// Addr is the listen address. Empty: 127.0.0.1 on a free port.
	Addr string
	// ReusePort listens with SO_REUSEPORT (Linux, macOS), so that a second
	// copy can start on the same port before the first stops (a rolling
	// deploy); refused where the system has no such option.
	ReusePort bool
	// Lanes is the number of jobs served at once. Zero: 4.
	Lanes int
	// Service is how long one job holds a lane. Zero: 5ms.
	Service time.Duration
	// Queue is how many jobs may wait for a lane. Zero: 200.
	Queue int
	// SendLimit is the example API's limit on sent messages per second per
	// project; past it, 429. Zero: 100.
	SendLimit float64

	// The chat backend (GET /widget, /api/sites/{site}/messages).

	// FloodRate is the flood brake's refill, in messages per second per
	// site. Zero: 10. Below zero: no brake.
	FloodRate float64
	// FloodBurst is how many messages a site may send at once before the
	// flood brake holds it to FloodRate. Zero: 600.
	FloodBurst int
	// Store is where messages are saved: "memory" or "file". Empty:
	// "memory". Either way, one save at a time.
	Store string
	// Sync is when the file store waits for the disk: "normal" (fsync at
	// most once a second in the background: a crash of the process loses
	// nothing written, a power cut can lose the last second) or "full"
	// (fsync after every commit while holding the writer, so saves queue
	// behind the disk). Empty: "normal". The memory store ignores it.
	Sync string
	// DataDir is the file store's folder (messages.jsonl, one JSON line per
	// saved message; created if missing, kept on Close). Empty: a temporary
	// folder that Close removes; Server.Config reports it. The memory store
	// ignores it.
	DataDir string
	// Webhook is the URL each newly saved message is posted to, as a Slack
	// post. Empty: no webhook and no jobs, like a site without Slack.
	Webhook string
	// JobLanes is how many webhook posts may be in flight at once; a post
	// holds its lane until answered. Zero: 8.
	JobLanes int
	// JobQueue is how many webhook jobs may wait for a lane; past it a job
	// is dropped and counted. Zero: 100,000.
	JobQueue int
}

// The values of Config.Store and Config.Sync.
const (
	storeMemory = "memory"
	storeFile   = "file"
	syncNormal  = "normal"
	syncFull    = "full"
)

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.Lanes <= 0 {
		c.Lanes = 4
	}
	if c.Service <= 0 {
		c.Service = 5 * time.Millisecond
	}
	if c.Queue <= 0 {
		c.Queue = 200
	}
	if c.SendLimit <= 0 {
		c.SendLimit = 100
	}
	if c.FloodRate == 0 {
		c.FloodRate = 10
	}
	if c.FloodBurst <= 0 {
		c.FloodBurst = 600
	}
	if c.Store == "" {
		c.Store = storeMemory
	}
	if c.Sync == "" {
		c.Sync = syncNormal
	}
	if c.JobLanes <= 0 {
		c.JobLanes = 8
	}
	if c.JobQueue <= 0 {
		c.JobQueue = 100_000
	}
	return c
}

// validate reports the first value Start cannot use.
func (c Config) validate() error {
	switch {
	case c.Store != storeMemory && c.Store != storeFile:
		return fmt.Errorf("store %q: want %q or %q", c.Store, storeMemory, storeFile)
	case c.Sync != syncNormal && c.Sync != syncFull:
		return fmt.Errorf("sync %q: want %q or %q", c.Sync, syncNormal, syncFull)
	case math.IsNaN(c.FloodRate) || math.IsInf(c.FloodRate, 0):
		return fmt.Errorf("flood rate %v: want a number", c.FloodRate)
	}
	if c.Webhook != "" {
		u, err := url.Parse(c.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("webhook %q: want an http:// or https:// URL", c.Webhook)
		}
	}
	return nil
}

// Capacity returns the jobs per second the lanes can serve.
func (c Config) Capacity() float64 {
	c = c.withDefaults()
	return float64(c.Lanes) / c.Service.Seconds()
}

// Server is a running demo target.
type Server struct {
	cfg      Config
	jobs     chan job
	srv      *http.Server
	ln       net.Listener
	quit     chan struct{}
	served   atomic.Int64
	rejected atomic.Int64
	chat     *chat
}

type job struct {
	done chan struct{}
}

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("start demo target: %w", err)
	}
	ch, err := newChat(cfg)
	if err != nil {
		return nil, fmt.Errorf("start demo target: %w", err)
	}
	cfg.DataDir = ch.store.dir
	ln, err := listen(cfg.Addr, cfg.ReusePort)
	if err != nil {
		ch.close()
		return nil, fmt.Errorf("start demo target: %w", err)
	}
	s := &Server{cfg: cfg, jobs: make(chan job, cfg.Queue), ln: ln, quit: make(chan struct{}), chat: ch}
	for range cfg.Lanes {
		go s.lane()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /send", s.send)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /stats", s.stats)
	burnRounds() // calibrated once, before any request: see burn.go
	mux.HandleFunc("GET /burn", burn)
	newAPI(cfg.SendLimit).routes(mux)
	ch.routes(mux)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// reuseHandover is how long a --reuse-port target's old copy goes on
// answering on its open connections after it stopped accepting new ones.
const reuseHandover = 300 * time.Millisecond

// URL returns the base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Config returns the configuration in force.
func (s *Server) Config() Config { return s.cfg }

// Close stops the server and its lanes: it closes the widget sockets,
// stops the webhook lanes without waiting for their backlog, and closes
// the store (removing a data folder it created).
func (s *Server) Close() error {
	if s.cfg.ReusePort {
		// A rolling deploy's old copy: stop taking new connections first, so
		// that the clients whose idle connections close next reconnect to
		// the new copy, not into this listener's queue as it goes (a
		// closing SO_REUSEPORT listener resets what it has queued).
		s.ln.Close()
		time.Sleep(reuseHandover)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	close(s.quit)
	if cerr := s.chat.close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) lane() {
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case j := <-s.jobs:
			t.Reset(s.cfg.Service)
			select {
			case <-t.C:
			case <-s.quit:
				close(j.done)
				return
			}
			close(j.done)
		}
	}
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	j := job{done: make(chan struct{})}
	select {
	case s.jobs <- j:
	default:
		s.rejected.Add(1)
		http.Error(w, "queue full", http.StatusServiceUnavailable)
		return
	}
	select {
	case <-j.done:
	case <-r.Context().Done():
		return
	}
	s.served.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"saved":true}` + "\n"))
}

// stats answers the worker queue's figures (served, rejected, queued,
// lanes) and the chat backend's.
func (s *Server) stats(w http.ResponseWriter, _ *http.Request) {
	n := &s.chat.count
	depth := 0
	if s.chat.jobs != nil {
		depth = s.chat.jobs.depth()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]int64{
		"served": s.served.Load(), "rejected": s.rejected.Load(), "queued": int64(len(s.jobs)), "lanes": int64(s.cfg.Lanes),
		"saved": n.saved.Load(), "duplicates": n.duplicate.Load(), "flood_rejected": n.flooded.Load(),
		"queue_depth": int64(depth), "in_flight": n.inFlight.Load(), "dropped": n.dropped.Load(),
		"webhook_ok": n.postOK.Load(), "webhook_retried": n.postRetried.Load(), "webhook_failed": n.postFailed.Load(),
		"ws_connections": n.sockets.Load(),
	})
}
