package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// held starts Hold on loopback for a file of size bytes, and returns its
// address, the file and the channel of Hold's answer.
func held(t *testing.T, size int, d time.Duration) (string, []byte, <-chan bool) {
	t.Helper()
	data := make([]byte, size)
	rand.Read(data)
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	released := make(chan bool, 1)
	go func() {
		r, err := Hold(ctx, ln, path, token, d, log)
		if err != nil {
			t.Error(err)
		}
		released <- r
	}()
	t.Cleanup(cancel)
	for start := time.Now(); !strings.Contains(log.String(), results.HeldLine); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("Hold did not start: %s", log.String())
		}
	}
	return ln.Addr().String(), data, released
}

// ask sends one request to a held result, with tok in results.HeldTokenHeader.
func ask(t *testing.T, method, url, tok string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if tok != "" {
		req.Header.Set(results.HeldTokenHeader, tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// A held result of 30 MB comes back whole, its size and SHA-256 first,
// only to a client with the token, as often as asked, until one releases
// it; then Hold returns.
func TestHoldResult(t *testing.T) {
	addr, data, released := held(t, 30<<20, time.Minute)
	base := "http://" + addr
	if status, _ := ask(t, "GET", base+results.HeldPath, ""); status != http.StatusUnauthorized {
		t.Errorf("GET %s without the token = %d, want 401", results.HeldPath, status)
	}
	if status, _ := ask(t, "GET", base+results.HeldPath, "wrong-token-0123456789"); status != http.StatusUnauthorized {
		t.Errorf("GET %s with a wrong token = %d, want 401", results.HeldPath, status)
	}
	status, body := ask(t, "GET", base+results.HeldSumPath, token)
	var h results.Held
	if err := json.Unmarshal(body, &h); status != http.StatusOK || err != nil {
		t.Fatalf("GET %s = %d %q (%v)", results.HeldSumPath, status, body, err)
	}
	for range 2 { // a client cut off asks again
		status, got := ask(t, "GET", base+results.HeldPath, token)
		if status != http.StatusOK || !bytes.Equal(got, data) {
			t.Fatalf("GET %s = %d, %d bytes, want 200 and the %d bytes held", results.HeldPath, status, len(got), len(data))
		}
		if err := h.Check(got); err != nil {
			t.Errorf("Held.Check(the file) = %v", err)
		}
	}
	if err := h.Check(data[:len(data)-1]); err == nil {
		t.Errorf("Held.Check(a part) = nil, want an error")
	}
	damaged := bytes.Clone(data)
	damaged[len(damaged)/2] ^= 1
	if err := h.Check(damaged); err == nil {
		t.Errorf("Held.Check(a damaged copy) = nil, want an error")
	}
	if status, _ := ask(t, "GET", base+results.HeldReleasePath, ""); status != http.StatusUnauthorized {
		t.Errorf("GET %s without the token = %d, want 401", results.HeldReleasePath, status)
	}
	if status, _ := ask(t, "DELETE", base+results.HeldPath, token); status != http.StatusNoContent {
		t.Errorf("DELETE %s = %d, want 204", results.HeldPath, status)
	}
	select {
	case r := <-released:
		if !r {
			t.Errorf("Hold = not released, want released")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Hold did not return within 10s of the release")
	}
}

// A result nobody releases is held for the time given, no longer.
func TestHoldResultEnds(t *testing.T) {
	_, _, released := held(t, 10, 200*time.Millisecond)
	select {
	case r := <-released:
		if r {
			t.Errorf("Hold = released, want not released")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Hold did not return within 10s of its 200ms")
	}
}

// A client that may only GET through the API server's proxy releases the
// result with GET HeldReleasePath.
func TestHoldResultReleasedByGet(t *testing.T) {
	addr, _, released := held(t, 10, time.Minute)
	if status, _ := ask(t, "GET", "http://"+addr+results.HeldReleasePath, token); status != http.StatusNoContent {
		t.Errorf("GET %s = %d, want 204", results.HeldReleasePath, status)
	}
	select {
	case r := <-released:
		if !r {
			t.Errorf("Hold = not released, want released")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Hold did not return within 10s of the release")
	}
}
