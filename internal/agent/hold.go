package agent

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// Hold serves the result file at path on ln (the protocol of
// results.Held: its size and SHA-256 at results.HeldSumPath, the file at
// results.HeldPath) to clients that present token in
// results.HeldTokenHeader, until one releases it (DELETE
// results.HeldPath, or GET results.HeldReleasePath), d passes or ctx ends,
// and then closes ln. It logs a line (results.HeldLine) once it serves,
// and one when it ends. It returns an error only when the file cannot be
// read; released tells whether a client released it.
func Hold(ctx context.Context, ln net.Listener, path, token string, d time.Duration, log io.Writer) (released bool, err error) {
	defer ln.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("hold the result: %w", err)
	}
	held := results.HeldOf(data)
	done := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+results.HeldSumPath, func(w http.ResponseWriter, _ *http.Request) { answer(w, held) })
	mux.HandleFunc("GET "+results.HeldPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data) // a client cut off retries: the file stays until released
	})
	release := func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		select {
		case <-done:
		default:
			close(done)
		}
	}
	mux.HandleFunc("DELETE "+results.HeldPath, release)
	mux.HandleFunc("GET "+results.HeldReleasePath, release)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got := r.Header.Get(results.HeldTokenHeader)
			if token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				problem(w, http.StatusUnauthorized, "the agents' token is required in the "+results.HeldTokenHeader+" header")
				return
			}
			mux.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(log, "%s (%d bytes, SHA-256 %s) on %s for %v, until it is fetched and released (GET and DELETE %s, with the token in the %s header)\n",
		results.HeldLine, held.Bytes, held.SHA256, ln.Addr(), d, results.HeldPath, results.HeldTokenHeader)
	t := time.NewTimer(d)
	defer t.Stop()
	why := ""
	select {
	case <-done:
		released = true
		why = "fetched and released"
	case <-t.C:
		why = fmt.Sprintf("not released within %v", d)
	case <-ctx.Done():
		why = "stopped"
	case err := <-served:
		why = fmt.Sprintf("cannot serve it: %v", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		why += fmt.Sprintf(" (%v)", err)
	}
	fmt.Fprintf(log, "ceiling: result.json held no more: %s\n", why)
	return released, nil
}
