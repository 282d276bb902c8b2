package demo

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBurnTakesItsTime(t *testing.T) {
	s, c := start(t, Config{})
	for _, tt := range []struct {
		query string
		ms    int
	}{{"", burnDefault}, {"?ms=30", 30}, {"?ms=0", 0}} {
		begin := time.Now()
		code, h, body := call(t, c, http.MethodGet, s.URL()+"/burn"+tt.query, "")
		took := time.Since(begin)
		if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
			t.Errorf("GET /burn%s = %d %s, want 200 application/json", tt.query, code, h.Get("Content-Type"))
		}
		if want := `{"ms":` + itoa(tt.ms) + "}\n"; body != want {
			t.Errorf("GET /burn%s body = %q, want %q", tt.query, body, want)
		}
		// Only a lower bound: a busy machine makes it slower, never faster.
		if min := time.Duration(tt.ms) * time.Millisecond; took < min {
			t.Errorf("GET /burn%s took %v, want at least %v", tt.query, took, min)
		}
	}
}

func TestBurnRefusesBadMs(t *testing.T) {
	s, c := start(t, Config{})
	for _, q := range []string{"x", "-1", "1001", "2.5"} {
		code, _, body := call(t, c, http.MethodGet, s.URL()+"/burn?ms="+q, "")
		if want := "want a whole number of milliseconds from 0 to 1000"; code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("GET /burn?ms=%s = %d %q, want 400 saying %q", q, code, body, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
