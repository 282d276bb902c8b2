package sink

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSinkThroughput posts small JSON bodies with distinct ids to a
// sink without latency from several goroutines over keep-alive
// connections, and reports posts/s. The client shares the machine, so the
// figure is a floor for the sink alone; allocations are client and server
// together.
func BenchmarkSinkThroughput(b *testing.B) {
	const workers = 8
	s, c := start(b, Options{ID: IDRule{JSON: "id"}})
	url := s.URL() + "/services/T0/B0/x"
	jobs := make(chan int, 4*workers)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range workers {
		wg.Go(func() {
			var body []byte
			for i := range jobs {
				body = append(body[:0], `{"channel":"C1","text":"hello","id":"m-`...)
				body = append(strconv.AppendInt(body, int64(i), 10), `"}`...)
				resp, err := c.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		})
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		jobs <- n
		n++
	}
	close(jobs)
	wg.Wait()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "posts/s")
	if st := s.Stats(); failed.Load() > 0 || st.IDs != int64(n) {
		b.Errorf("%d posts: %d failed, sink saw %d ids", n, failed.Load(), st.IDs)
	}
}

// BenchmarkRecord is the ledger's share of a request carrying a new id:
// fingerprint, id set and unread log, with the reader reading every 4096
// arrivals as the delivery ledger would (less often, in fact).
func BenchmarkRecord(b *testing.B) {
	ids := make([]string, 1<<20)
	for i := range ids {
		ids[i] = "m-" + strconv.Itoa(i) + "-0000-4000-8000-000000000000"
	}
	l := newLedger(time.Now(), DefaultMaxIDs)
	_, next := l.since(0)
	a := Arrival{At: time.Now(), Status: http.StatusOK}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a.ID = ids[i%len(ids)]
		l.record(a, true)
		i++
		if i%4096 == 0 {
			_, next = l.since(next)
		}
	}
}
