package sink

import (
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

func TestZZBefore(t *testing.T) {
	for _, n := range []int{100_000, 200_000} {
		s, err := build(Options{ID: IDRule{JSON: "id"}})
		if err != nil {
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for i := range n {
			body := fmt.Sprintf(`{"channel":"C1","text":"hello","id":"%08x-0000-4000-8000-%012x"}`, i, i)
			s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/hook", strings.NewReader(body)))
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		t.Logf("n=%d ids=%d heap %+d B => %.1f B/arrival", n, s.Stats().IDs, int64(m1.HeapAlloc)-int64(m0.HeapAlloc), float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/float64(n))
		runtime.KeepAlive(s)
	}
}
