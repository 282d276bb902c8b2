package demo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Config shapes the demo target.
type Config struct {
	// Addr is the listen address. Empty: 127.0.0.1 on a free port.
	Addr string
	// Lanes is the number of jobs served at once. Zero: 4.
	Lanes int
	// Service is how long one job holds a lane. Zero: 5ms.
	Service time.Duration
	// Queue is how many jobs may wait for a lane. Zero: 200.
	Queue int
	// SendLimit is the example API's limit on sent messages per second per
	// project; past it, 429. Zero: 100.
	SendLimit float64
}

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
	return c
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
}

type job struct {
	done chan struct{}
}

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("start demo target: %w", err)
	}
	s := &Server{cfg: cfg, jobs: make(chan job, cfg.Queue), ln: ln, quit: make(chan struct{})}
	for range cfg.Lanes {
		go s.lane()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /send", s.send)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /stats", s.stats)
	newAPI(cfg.SendLimit).routes(mux)
	mux.HandleFunc("GET /widget", widget())
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL returns the base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Config returns the configuration in force.
func (s *Server) Config() Config { return s.cfg }

// Close stops the server and its lanes.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	close(s.quit)
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

func (s *Server) stats(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"served":%s,"rejected":%s,"queued":%d,"lanes":%d}`+"\n",
		strconv.FormatInt(s.served.Load(), 10), strconv.FormatInt(s.rejected.Load(), 10), len(s.jobs), s.cfg.Lanes)
}
