package agent

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// A coordinator in a pod writes result.json into a folder that dies with
// the pod, and its log is rotated and expires. With --hold-result it keeps
// the file after the run, served on ResultPort, until a client has fetched
// it and released it (or the hold ends): `ceiling k8s --apply` fetches it
// through the Kubernetes API server's proxy to the pod, `kubectl
// port-forward` and curl do by hand. Its size and SHA-256 come first, so
// that the client can tell a whole file from a part.
const (
	// ResultPort is the port a coordinator holds its result on.
	ResultPort = 7071
	// ResultPath serves the file (GET) and releases it (DELETE);
	// ResultSumPath serves its size and SHA-256 (Held, as JSON).
	ResultPath    = "/v1/result"
	ResultSumPath = "/v1/result/sum"
	// TokenHeader carries the agents' token to the held result: the
	// Authorization header is the Kubernetes API server's, which its proxy
	// does not pass on.
	TokenHeader = "Ceiling-Token"
	// HeldLine starts the line a coordinator logs once its result is held.
	HeldLine = "ceiling: holding result.json"
)

// Held is what GET ResultSumPath answers: the held file's size and its
// SHA-256, in hexadecimal.
type Held struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Check returns an error unless data is the file h describes.
func (h Held) Check(data []byte) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); int64(len(data)) != h.Bytes || got != h.SHA256 {
		return fmt.Errorf("the result fetched is not the one held: %d bytes with SHA-256 %s, want %d bytes with SHA-256 %s", len(data), got, h.Bytes, h.SHA256)
	}
	return nil
}

// Hold serves the file at path on ln to clients that present token in
// TokenHeader, until one releases it (DELETE ResultPath), d passes or ctx
// ends, and then closes ln. It logs a line (HeldLine) once it serves, and
// one when it ends. It returns an error only when the file cannot be
// read; released tells whether a client released it.
func Hold(ctx context.Context, ln net.Listener, path, token string, d time.Duration, log io.Writer) (released bool, err error) {
	defer ln.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("hold the result: %w", err)
	}
	sum := sha256.Sum256(data)
	held := Held{Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	done := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ResultSumPath, func(w http.ResponseWriter, _ *http.Request) { answer(w, held) })
	mux.HandleFunc("GET "+ResultPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data) // a client cut off retries: the file stays until released
	})
	mux.HandleFunc("DELETE "+ResultPath, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		select {
		case <-done:
		default:
			close(done)
		}
	})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got := r.Header.Get(TokenHeader)
			if token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				problem(w, http.StatusUnauthorized, "the agents' token is required in the "+TokenHeader+" header")
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
		HeldLine, held.Bytes, held.SHA256, ln.Addr(), d, ResultPath, TokenHeader)
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
