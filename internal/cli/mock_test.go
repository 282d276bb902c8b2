package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// ceiling mock serves until interrupted, records ids, and prints its stats.
func TestMock(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan ExitCode)
	go func() {
		done <- Main(ctx, []string{"mock", "--listen", addr, "--latency", "5ms", "--id-json", "id"}, &out, &errb, nil)
	}()
	var err error
	for range 50 {
		var resp *http.Response
		if resp, err = http.Post("http://"+addr+"/hooks/x", "application/json", strings.NewReader(`{"id":"a"}`)); err == nil {
			resp.Body.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b", "a"} {
		resp, err := http.Post("http://"+addr+"/any", "application/json", strings.NewReader(`{"id":"`+id+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var stats struct {
		Received   int64 `json:"received"`
		IDs        int64 `json:"ids"`
		Duplicates int64 `json:"duplicates"`
	}
	if err := json.Unmarshal(out.Bytes(), &stats); err != nil {
		t.Fatalf("stats %q: %v", out.String(), err)
	}
	if stats.Received != 3 || stats.IDs != 2 || stats.Duplicates != 1 {
		t.Errorf("stats = %+v, want 3 received, 2 ids, 1 duplicate", stats)
	}
	// Bounded: a mock that wrongly accepted the flag would serve until
	// its context ends.
	bounded, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	code, _, stderr := ceiling(t, bounded, "mock", "--listen", "127.0.0.1:0", "--error-rate", "5")
	if code != ExitBadInput || !strings.Contains(stderr, "--error-rate") {
		t.Errorf("bad --error-rate: exit %d, %q", code, stderr)
	}
}
