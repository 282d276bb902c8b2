package monitor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func manyBody(n int) string {
	var b strings.Builder
	b.WriteString("# TYPE big gauge\n")
	for i := range n {
		fmt.Fprintf(&b, "big{id=\"%d\",pod=\"pod-%d\"} %d\n", i, i%100, i)
	}
	b.WriteString("# TYPE other_total counter\nother_total 5\n")
	return b.String()
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestZZMeasure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SERIES"))
	if n == 0 {
		t.Skip()
	}
	body := manyBody(n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	scr, err := NewScraper(srv.URL, []string{"big", "other_total"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(nil, scr, time.Second)
	t0 := time.Now()
	h0 := heap()
	const scrapes = 10
	var cpu time.Duration
	for i := range scrapes {
		s := time.Now()
		w.sample(context.Background(), t0.Add(time.Duration(i)*time.Second))
		cpu += time.Since(s)
	}
	h1 := heap()
	t.Logf("series %d, body %.1f MB: retained heap %.1f MB per scrape, scrape wall %.0f ms each", n, float64(len(body))/1e6, float64(h1-h0)/scrapes/1e6, float64(cpu.Milliseconds())/scrapes)
	s := time.Now()
	f := w.Window(t0, t0.Add(scrapes*time.Second))
	t.Logf("Window: %d metrics in %v", len(f.Metrics), time.Since(s))
}
