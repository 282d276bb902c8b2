package sink

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestAnyPathAndMethod(t *testing.T) {
	s, c := start(t, Options{Body: "thanks", Status: http.StatusAccepted})
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/services/T000/B000/XXXX"},
		{http.MethodGet, "/"},
		{http.MethodPut, "/v1/charges/ch_1"},
		{http.MethodDelete, "/a/b/c?d=e"},
		{http.MethodPatch, "/__ceilingx"},
		{http.MethodPost, "/__ceiling"},
	} {
		got := do(t, c, tc.method, s.URL()+tc.path, `{"x":1}`)
		if got.status != http.StatusAccepted || got.body != "thanks" {
			t.Errorf("%s %s = %d %q, want 202 %q", tc.method, tc.path, got.status, got.body, "thanks")
		}
		if ct := got.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("%s %s: Content-Type = %q, want text/plain", tc.method, tc.path, ct)
		}
	}
	if got := s.Stats().ByStatus[http.StatusAccepted]; got != 6 {
		t.Errorf("Stats().ByStatus[202] = %d, want 6", got)
	}
}

func TestDefaultAnswer(t *testing.T) {
	s, c := start(t, Options{})
	got := post(t, c, s, "hello")
	if got.status != http.StatusOK || got.body != `{"ok":true}` || got.header.Get("Content-Type") != "application/json" {
		t.Errorf("post = %d %q %q, want 200 {\"ok\":true} application/json", got.status, got.body, got.header.Get("Content-Type"))
	}
}

func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rule   IDRule
		bodies []string
		want   []string
		stats  Stats
	}{{
		name:   "json path",
		rule:   IDRule{JSON: "msg.id"},
		bodies: []string{`{"msg":{"id":"a"}}`, `{"msg":{"id":"b"}}`, `{"msg":{"id":"a"}}`, `{"msg":{}}`, `not json`, `{"msg":{"id":""}}`, `{"msg":{"id":7}}`},
		want:   []string{"a", "b", "a", "7"},
		stats:  Stats{Received: 7, ByStatus: map[int]int64{200: 7}, IDs: 3, Duplicates: 1, NoID: 3},
	}, {
		name:   "regex group",
		rule:   IDRule{Regex: `msg-(\d+)`},
		bodies: []string{`text=hello msg-12`, `{"text":"msg-13 hi"}`, `msg-12`, `msg-`, ``},
		want:   []string{"12", "13", "12"},
		stats:  Stats{Received: 5, ByStatus: map[int]int64{200: 5}, IDs: 2, Duplicates: 1, NoID: 2},
	}, {
		name:   "regex whole match",
		rule:   IDRule{Regex: `[0-9a-f]{8}`},
		bodies: []string{`id deadbeef`, `id cafebabe`, `none`},
		want:   []string{"deadbeef", "cafebabe"},
		stats:  Stats{Received: 3, ByStatus: map[int]int64{200: 3}, IDs: 2, NoID: 1},
	}, {
		name:   "no rule",
		bodies: []string{`{"id":"a"}`, `x`},
		stats:  Stats{Received: 2, ByStatus: map[int]int64{200: 2}, NoID: 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := start(t, Options{ID: tc.rule})
			before := time.Now()
			for _, b := range tc.bodies {
				post(t, c, s, b)
			}
			after := time.Now()
			arrivals, next := s.Arrivals(0)
			var ids []string
			for _, a := range arrivals {
				ids = append(ids, a.ID)
				if a.At.Before(before) || a.At.After(after) || a.Status != http.StatusOK {
					t.Errorf("arrival %+v: want At within the test and Status 200", a)
				}
			}
			if diff := cmp.Diff(tc.want, ids, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Arrivals(0) ids (-want +got):\n%s", diff)
			}
			if next != len(tc.want) {
				t.Errorf("Arrivals(0) next = %d, want %d", next, len(tc.want))
			}
			if diff := cmp.Diff(tc.stats, s.Stats()); diff != "" {
				t.Errorf("Stats() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArrivalsIncremental(t *testing.T) {
	s, c := start(t, Options{ID: IDRule{JSON: "id"}})
	if got, next := s.Arrivals(0); len(got) != 0 || next != 0 {
		t.Fatalf("Arrivals(0) on a new sink = %v, %d, want none, 0", got, next)
	}
	var seen []string
	next := 0
	for round := range 3 {
		for i := range 4 {
			post(t, c, s, fmt.Sprintf(`{"id":"r%d-%d"}`, round, i))
		}
		got, n := s.Arrivals(next)
		if len(got) != 4 || n != next+4 {
			t.Fatalf("round %d: Arrivals(%d) = %d arrivals, next %d, want 4, %d", round, next, len(got), n, next+4)
		}
		for _, a := range got {
			seen = append(seen, a.ID)
		}
		next = n
	}
	if got, n := s.Arrivals(next); len(got) != 0 || n != next {
		t.Errorf("Arrivals(%d) with nothing new = %d arrivals, next %d, want 0, %d", next, len(got), n, next)
	}
	if got, n := s.Arrivals(next + 10); len(got) != 0 || n != next {
		t.Errorf("Arrivals(past the end) = %d arrivals, next %d, want 0, %d", len(got), n, next)
	}
	// Each arrival is handed over once: reading from 0 again gets nothing.
	if got, n := s.Arrivals(0); len(got) != 0 || n != next {
		t.Errorf("Arrivals(0) after reading everything = %d arrivals, next %d, want 0, %d", len(got), n, next)
	}
	var want []string
	for round := range 3 {
		for i := range 4 {
			want = append(want, fmt.Sprintf("r%d-%d", round, i))
		}
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("incremental reads (-posted +read):\n%s", diff)
	}
}

func TestRateLimitPerJSONKey(t *testing.T) {
	s, c := start(t, Options{RateLimit: &RateLimit{Per: "channel", RPS: 1}, ID: IDRule{JSON: "id"}})
	var limited int
	var answered []int
	for i := range 10 {
		got := post(t, c, s, fmt.Sprintf(`{"channel":"flood","id":"f%d"}`, i))
		answered = append(answered, got.status)
		switch {
		case i == 0 && got.status != http.StatusOK:
			t.Errorf("first post to flood = %d, want 200", got.status)
		case i > 0 && got.status == http.StatusTooManyRequests:
			limited++
			if ra := got.header.Get("Retry-After"); ra != "1" {
				t.Errorf("429 Retry-After = %q, want 1 (ceil of under a second at 1/s)", ra)
			}
		}
	}
	// 10 posts in well under a second at 1/s: at most one more is let in.
	if limited < 8 {
		t.Errorf("posts to the flooded channel answered 429 = %d of 9, want at least 8", limited)
	}
	got := post(t, c, s, `{"channel":"quiet","id":"q0"}`)
	answered = append(answered, got.status)
	if got.status != http.StatusOK || got.header.Get("Retry-After") != "" {
		t.Errorf("post to another channel = %d (Retry-After %q), want 200 without Retry-After", got.status, got.header.Get("Retry-After"))
	}
	st := s.Stats()
	if st.ByStatus[http.StatusTooManyRequests] != int64(limited) || st.IDs != 11 {
		t.Errorf("Stats() = %+v, want %d 429s and 11 ids (refused posts are recorded)", st, limited)
	}
	arrivals, _ := s.Arrivals(0)
	var recorded []int
	for _, a := range arrivals {
		recorded = append(recorded, a.Status)
	}
	if diff := cmp.Diff(answered, recorded); diff != "" {
		t.Errorf("Arrival.Status differs from the answers (-answered +recorded):\n%s", diff)
	}
}

func TestRateLimitHeaderAndGlobal(t *testing.T) {
	for _, tc := range []struct {
		name string
		per  string
		hdr  [2]string // the second post's header; the first has X-Team: a
		want int
	}{
		{"header, other key", "header:X-Team", [2]string{"X-Team", "b"}, http.StatusOK},
		{"header, same key", "header:X-Team", [2]string{"X-Team", "a"}, http.StatusTooManyRequests},
		{"global", "", [2]string{"X-Team", "b"}, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := start(t, Options{RateLimit: &RateLimit{Per: tc.per, RPS: 0.1}})
			if got := post(t, c, s, `{}`, "X-Team", "a"); got.status != http.StatusOK {
				t.Fatalf("first post = %d, want 200", got.status)
			}
			got := post(t, c, s, `{}`, tc.hdr[0], tc.hdr[1])
			if got.status != tc.want {
				t.Errorf("second post = %d, want %d", got.status, tc.want)
			}
			if got.status == http.StatusTooManyRequests && got.header.Get("Retry-After") != "10" {
				t.Errorf("Retry-After at 0.1/s = %q, want 10", got.header.Get("Retry-After"))
			}
		})
	}
}

func TestFixedLatency(t *testing.T) {
	const lat = 50 * time.Millisecond
	s, c := start(t, Options{Latency: Latency{Fixed: lat}})
	post(t, c, s, `{}`) // open the connection
	for range 3 {
		t0 := time.Now()
		post(t, c, s, `{}`)
		if got := time.Since(t0); got < lat || got > 2*lat {
			t.Errorf("round trip with latency %v = %v, want [%v, %v]", lat, got, lat, 2*lat)
		}
	}
}

func TestErrorRate(t *testing.T) {
	const n, rate = 1000, 0.2
	s, c := start(t, Options{ErrorRate: rate, Seed: 7, ID: IDRule{JSON: "id"}})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range n / 4 {
				post(t, c, s, fmt.Sprintf(`{"id":"%d-%d"}`, w, i))
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	share := float64(st.ByStatus[http.StatusInternalServerError]) / n
	if share < rate-0.05 || share > rate+0.05 {
		t.Errorf("share of 500s = %.3f (%+v), want %.2f ± 0.05", share, st.ByStatus, rate)
	}
	if st.Received != n || st.IDs != n {
		t.Errorf("Stats() = %+v, want %d received and ids (500s are recorded)", st, n)
	}
}

func TestSeedIsDeterministic(t *testing.T) {
	statuses := func() []int {
		s, c := start(t, Options{ErrorRate: 0.5, Seed: 42})
		var got []int
		for range 40 {
			got = append(got, post(t, c, s, `{}`).status)
		}
		return got
	}
	if a, b := statuses(), statuses(); !cmp.Equal(a, b) {
		t.Errorf("answers with the same seed differ:\n%v\n%v", a, b)
	}
}

func TestOversizedBody(t *testing.T) {
	s, c := start(t, Options{ID: IDRule{Regex: `id=(\w+)`}})
	exact := "id=big " + strings.Repeat("x", maxBody-len("id=big "))
	if got := post(t, c, s, exact); got.status != http.StatusOK {
		t.Errorf("post of exactly 1 MiB = %d, want 200", got.status)
	}
	if got := post(t, c, s, exact+"x"); got.status != http.StatusRequestEntityTooLarge {
		t.Errorf("post of 1 MiB + 1 = %d, want 413", got.status)
	}
	// Without a Content-Length the sink finds out by reading.
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/hook", struct{ *strings.Reader }{strings.NewReader(exact + "x")})
	req.ContentLength = -1
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked post of 1 MiB + 1 = %d, want 413", resp.StatusCode)
	}
	want := Stats{Received: 3, ByStatus: map[int]int64{200: 1, 413: 2}, IDs: 1}
	if diff := cmp.Diff(want, s.Stats()); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
}

func TestStatsEndpoint(t *testing.T) {
	s, c := start(t, Options{Name: "slack", ID: IDRule{JSON: "id"}})
	post(t, c, s, `{"id":"a"}`)
	post(t, c, s, `{"id":"a"}`)
	post(t, c, s, `{}`)
	got := do(t, c, http.MethodGet, s.URL()+StatsPath, "")
	if got.status != http.StatusOK || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s = %d %q", StatsPath, got.status, got.header.Get("Content-Type"))
	}
	var doc struct {
		Name string `json:"name"`
		Stats
	}
	if err := json.Unmarshal([]byte(got.body), &doc); err != nil {
		t.Fatalf("GET %s: %v in %s", StatsPath, err, got.body)
	}
	want := Stats{Received: 3, ByStatus: map[int]int64{200: 3}, IDs: 1, Duplicates: 1, NoID: 1}
	if diff := cmp.Diff(want, doc.Stats); diff != "" || doc.Name != "slack" {
		t.Errorf("GET %s name %q, stats (-want +got):\n%s", StatsPath, doc.Name, diff)
	}
	if diff := cmp.Diff(want, s.Stats()); diff != "" {
		t.Errorf("reserved paths are counted: Stats() (-want +got):\n%s", diff)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	s, c := start(t, Options{ID: IDRule{JSON: "id"}, RateLimit: &RateLimit{RPS: 0.1}})
	post(t, c, s, `{"id":"a"}`)
	post(t, c, s, `{"id":"a"}`)
	post(t, c, s, `{}`)
	got := do(t, c, http.MethodGet, s.URL()+MetricsPath, "")
	if got.status != http.StatusOK {
		t.Fatalf("GET %s = %d", MetricsPath, got.status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(got.body))
	if err != nil {
		t.Fatalf("parse %s: %v\n%s", MetricsPath, err, got.body)
	}
	values := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				key += fmt.Sprintf("{%s=%s}", l.GetName(), l.GetValue())
			}
			values[key] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"sink_requests_total{status=200}": 1,
		"sink_requests_total{status=429}": 2,
		"sink_ids_total":                  1,
		"sink_duplicates_total":           1,
		"sink_no_id_total":                1,
		"sink_unchecked_total":            0,
		"sink_unlogged_total":             0,
	}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("GET %s (-want +got):\n%s", MetricsPath, diff)
	}
}

func TestReservedPaths(t *testing.T) {
	s, c := start(t, Options{})
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/__ceiling/other", http.StatusNotFound},
		{http.MethodPost, StatsPath, http.StatusMethodNotAllowed},
		{http.MethodDelete, MetricsPath, http.StatusMethodNotAllowed},
		{http.MethodHead, StatsPath, http.StatusOK},
	} {
		if got := do(t, c, tc.method, s.URL()+tc.path, ""); got.status != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, got.status, tc.want)
		}
	}
	if got := s.Stats().Received; got != 0 {
		t.Errorf("Stats().Received = %d after reserved paths only, want 0", got)
	}
}

func TestKeepAlive(t *testing.T) {
	s, c := start(t, Options{})
	reused := 0
	for range 5 {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			if i.Reused {
				reused++
			}
		}}
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/hook", strings.NewReader(`{}`))
		resp, err := c.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body) // a connection is reused once its answer is read
		resp.Body.Close()
	}
	if reused != 4 {
		t.Errorf("connections reused = %d of 5 posts, want 4", reused)
	}
}

func TestCloseCutsLatencyShort(t *testing.T) {
	s, err := Start(Options{Latency: Latency{Fixed: time.Minute}, ID: IDRule{JSON: "id"}})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	done := make(chan int, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Post(s.URL()+"/hook", "application/json", strings.NewReader(`{"id":"x"}`))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	for deadline := time.Now().Add(5 * time.Second); s.Stats().Received == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the request never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if got := time.Since(t0); got > 2*time.Second {
		t.Errorf("Close() with a request waiting a minute took %v, want it cut short", got)
	}
	if got := <-done; got != http.StatusOK {
		t.Errorf("request in flight at Close answered %d, want 200 (answered at once)", got)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
	if got, _ := s.Arrivals(0); len(got) != 1 {
		t.Errorf("Arrivals(0) after Close = %v, want the one arrival", got)
	}
}

func TestStartValidation(t *testing.T) {
	_, err := Start(Options{
		Name:      "bad",
		Latency:   Latency{Fixed: -time.Second, Percentiles: map[float64]time.Duration{0.5: time.Second, 0.9: time.Millisecond, 1.5: time.Second}},
		ErrorRate: 2,
		Status:    99,
		RateLimit: &RateLimit{Per: "header:", RPS: 0},
		ID:        IDRule{Regex: "("},
	})
	if err == nil {
		t.Fatal("Start(bad options) = nil error")
	}
	for _, want := range []string{`sink "bad"`, "latency.fixed", "below the lower quantile", "outside (0, 1]",
		"error_rate", "status", "rate_limit.rps", "rate_limit.per", "id.regex"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start(bad options) = %q, want it to mention %q", err, want)
		}
	}
	if _, err := Start(Options{ID: IDRule{JSON: "a", Regex: "b"}}); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("Start(json and regex) = %v, want a 'not both' error", err)
	}
	if _, err := Start(Options{Listen: "127.0.0.1:-1"}); err == nil {
		t.Error("Start(bad listen address) = nil error")
	}
}

// TestLatencyDoesNotSerialize: requests wait out their latency side by
// side, not one after another behind a lock.
func TestLatencyDoesNotSerialize(t *testing.T) {
	const n, lat = 50, 100 * time.Millisecond
	s, c := start(t, Options{Latency: Latency{Fixed: lat}, ID: IDRule{JSON: "id"}})
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { post(t, c, s, fmt.Sprintf(`{"id":"%d"}`, i)) })
	}
	wg.Wait()
	// Serialized, n requests would take n × lat = 5s.
	if got := time.Since(t0); got > 10*lat {
		t.Errorf("%d concurrent requests with latency %v took %v, want well under %v", n, lat, got, n*lat)
	}
	if got := s.Stats().IDs; got != n {
		t.Errorf("Stats().IDs = %d, want %d", got, n)
	}
}

// The mock's flags become options; a bad value names its flag.
func TestFlagsOptions(t *testing.T) {
	f := Flags{Latency: "5ms", P50: "40ms", P99: "200ms", ErrorRate: "2.5%", LimitPer: "channel", LimitRPS: 1}
	o, err := f.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Latency.Fixed != 5*time.Millisecond || o.Latency.Percentiles[0.99] != 200*time.Millisecond || o.ErrorRate != 0.025 || o.RateLimit == nil || o.RateLimit.RPS != 1 {
		t.Errorf("options = %+v", o)
	}
	for _, bad := range []Flags{{Latency: "fast", ErrorRate: "0%"}, {Latency: "0s", P50: "1ms", ErrorRate: "0%"}, {Latency: "0s", ErrorRate: "101%"}, {Latency: "0s", ErrorRate: "NaN"}, {Latency: "0s", ErrorRate: "5"}} {
		if _, err := bad.Options(); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("Options(%+v) = %v, want an error naming the flag", bad, err)
		}
	}
}
