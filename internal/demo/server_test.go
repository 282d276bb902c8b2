package demo

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServesWithinServiceTime(t *testing.T) {
	s, err := Start(Config{Lanes: 2, Service: 10 * time.Millisecond, Queue: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	resp, err := http.Post(s.URL()+"/send", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("POST /send = %d, want 200", resp.StatusCode)
	}
	if d := time.Since(start); d < 10*time.Millisecond || d > 500*time.Millisecond {
		t.Errorf("POST /send took %v, want ≈ 10ms", d)
	}
	if c := s.Config().Capacity(); c != 200 {
		t.Errorf("Capacity() = %v, want 200", c)
	}
}

// Past lanes + queue, requests are rejected with 503 at once.
func TestFullQueueRejects(t *testing.T) {
	t.Parallel()
	s, err := Start(Config{Lanes: 1, Service: 200 * time.Millisecond, Queue: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 20}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post(s.URL()+"/send", "text/plain", nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[503] < 4 || codes[200] < 1 || codes[200]+codes[503] != 8 {
		t.Errorf("status counts = %v, want at most 3 served (1 lane + 2 queued) and the rest 503", codes)
	}
}
