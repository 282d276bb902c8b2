package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The gauges /metrics serves: ceiling keeps at most 1,000 series of a
// metric. Each series has a long label, so that a result keeps more
// bytes of it than a scrape costs to parse.
const metricCount, metricSeries = 10, 1000

var padding = strings.Repeat("p", 300)

// pause is a pod sandbox's process: it waits for SIGTERM (or SIGINT).
func pause() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

// target answers every request with 200 "ok" and counts them, but for
// GET /count, which answers the count, POST /reset, which sets it to
// zero (the truth the merged result is checked against), and GET
// /metrics, which serves metricCount gauges of metricSeries series each in
// Prometheus' text format: a scrape of them all makes a result of tens of
// MB.
func target(args []string) error {
	fs := flag.NewFlagSet("target", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, n.Load()) })
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, _ *http.Request) { n.Store(0) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		bw := bufio.NewWriterSize(w, 64<<10)
		for m := range metricCount {
			fmt.Fprintf(bw, "# TYPE e2e_gauge_%d gauge\n", m)
			for s := range metricSeries {
				fmt.Fprintf(bw, "e2e_gauge_%d{series=\"%d\",padding=\"%s\"} %d\n", m, s, padding, s*m)
			}
		}
		bw.Flush()
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", strconv.Itoa(2))
		w.Write([]byte("ok"))
	})
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
