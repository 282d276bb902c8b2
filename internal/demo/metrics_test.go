package demo

import (
	"math"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// /metrics parses with the reference parser and has every family the docs
// list, with its type.
func TestMetricsFamilies(t *testing.T) {
	h := newHook(t, 0, nil)
	s, c := start(t, Config{Webhook: h.URL})
	call(t, c, http.MethodPost, s.URL()+"/api/sites/s/messages", `{"clientId":"m1"}`)
	// The hook sees the post before the target has read its answer and
	// counted it: wait for the count, not for the hook.
	var fams map[string]*dto.MetricFamily
	waitFor(5*time.Second, func() bool {
		fams = scrape(t, s, c)
		return h.delivered() == 1 && value(t, fams, "demo_webhook_posts_total", "result", "ok") == 1
	})
	want := map[string]dto.MetricType{
		"demo_queue_depth":              dto.MetricType_GAUGE,
		"demo_jobs_in_flight":           dto.MetricType_GAUGE,
		"demo_ws_connections":           dto.MetricType_GAUGE,
		"demo_messages_saved_total":     dto.MetricType_COUNTER,
		"demo_messages_duplicate_total": dto.MetricType_COUNTER,
		"demo_flood_rejected_total":     dto.MetricType_COUNTER,
		"demo_jobs_dropped_total":       dto.MetricType_COUNTER,
		"demo_webhook_posts_total":      dto.MetricType_COUNTER,
		"demo_save_seconds":             dto.MetricType_SUMMARY,
	}
	for name, typ := range want {
		if f := fams[name]; f == nil || f.GetType() != typ {
			t.Errorf("family %s = %v, want a %v", name, f, typ)
		}
	}
	for _, r := range []string{"ok", "retried", "failed"} {
		value(t, fams, "demo_webhook_posts_total", "result", r)
	}
	if n := value(t, fams, "demo_webhook_posts_total", "result", "ok"); n != 1 {
		t.Errorf("posts ok = %v, want 1", n)
	}
	sum := fams["demo_save_seconds"].GetMetric()[0].GetSummary()
	q := sum.GetQuantile()
	if sum.GetSampleCount() != 1 || len(q) != 2 || q[0].GetQuantile() != 0.5 || q[1].GetQuantile() != 0.99 ||
		!(q[1].GetValue() > 0 && q[1].GetValue() < 1) || !(sum.GetSampleSum() > 0) {
		t.Errorf("demo_save_seconds = %v, want one save, quantiles 0.5 and 0.99 in (0, 1s)", sum)
	}
}

// The save-latency window forgets seconds older than ten, and keeps the
// all-time sum and count.
func TestWindow(t *testing.T) {
	w := newWindow()
	at := func(s float64) time.Time { return w.base.Add(time.Duration(s * float64(time.Second))) }
	for i := range 100 {
		w.record(time.Millisecond, at(0.5))
		w.record(time.Duration(i+1)*time.Microsecond, at(5.5))
	}
	p50, p99, sum, count := w.summary(at(9.9))
	if math.Abs(p50-100e-6) > 1e-6 || math.Abs(p99-1e-3) > 2e-6 || count != 200 || math.Abs(sum-0.10505) > 1e-9 {
		t.Errorf("at 9.9 s: p50 %v, p99 %v, sum %v, count %d; want 100µs, 1ms, 0.10505, 200", p50, p99, sum, count)
	}
	if p50, p99, _, _ := w.summary(at(10.5)); math.Abs(p50-50e-6) > 1e-6 || math.Abs(p99-99e-6) > 1e-6 {
		t.Errorf("at 10.5 s: p50 %v, p99 %v; want 50µs, 99µs (second 0 forgotten)", p50, p99)
	}
	w.record(time.Millisecond, at(10.5)) // reuses second 0's slot
	if p50, _, _, count := w.summary(at(16)); math.Abs(p50-1e-3) > 2e-6 || count != 201 {
		t.Errorf("at 16 s: p50 %v, count %d; want 1ms (second 5 forgotten), 201", p50, count)
	}
	if p50, _, _, _ := w.summary(at(30)); !math.IsNaN(p50) {
		t.Errorf("at 30 s: p50 %v, want NaN (no saves in the window)", p50)
	}
}

// A widget frame costs few allocations: a duplicate none, a new message
// only what the store keeps.
func TestFrameAllocations(t *testing.T) {
	c, err := newChat(Config{FloodRate: -1}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	frames := make([]string, 1000)
	for i := range frames {
		frames[i] = `{"type":"message","clientId":"` + string(rune('a'+i%26)) + time.Duration(i).String() + `","site":"s-12","text":"hi"}`
	}
	var out []byte
	i := 0
	fresh := testing.AllocsPerRun(len(frames)-1, func() {
		out = c.frame(out[:0], frames[i%len(frames)], "")
		i++
	})
	dup := testing.AllocsPerRun(100, func() { out = c.frame(out[:0], frames[0], "") })
	t.Logf("allocations per frame: %v new, %v duplicate", fresh, dup)
	if fresh > 4 || dup > 0 {
		t.Errorf("allocations per frame: %v new, %v duplicate; want ≤ 4 and 0", fresh, dup)
	}
}
