package agent

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wrong bearer tokens are throttled by address: past a few, guesses from
// that address are refused (429) without being compared, about one a
// second gets through, and the agent's log says so, without the token.
func TestAgentThrottlesTokenGuesses(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lines []string
	s := &Server{Log: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }}
	addr := agent(t, s)
	codes := map[int]int{}
	start := time.Now()
	for range 200 {
		req, err := http.NewRequest("GET", "http://"+addr+pathClock, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer guess-S3CRET-guess")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	elapsed := time.Since(start)
	compared := codes[http.StatusUnauthorized]
	if want := guessBurst + int(elapsed.Seconds()*guessRate) + 1; compared > want || codes[http.StatusTooManyRequests] == 0 {
		t.Errorf("200 wrong tokens in %v: %v, want at most %d compared (401), the others refused (429)", elapsed, codes, want)
	}
	if h := health(t, addr); h.API != API {
		t.Errorf("the health check while guesses are refused: %+v", h)
	}
	mu.Lock()
	log := strings.Join(lines, "\n")
	mu.Unlock()
	if !strings.Contains(log, "wrong bearer token") || !strings.Contains(log, "127.0.0.1") || strings.Contains(log, "S3CRET") {
		t.Errorf("the agent's log:\n%s\nwant the wrong tokens said, with their address, never the token", log)
	}
	if n := strings.Count(log, "\n") + 1; n > 10 {
		t.Errorf("the agent's log has %d lines for 200 guesses, want a few:\n%s", n, log)
	}
}
