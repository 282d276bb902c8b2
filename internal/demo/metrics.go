package demo

import (
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// counters are the chat backend's running figures; all are safe for
// concurrent use.
type counters struct {
	saved       atomic.Int64 // messages saved
	duplicate   atomic.Int64 // messages whose (site, clientId) was saved before
	flooded     atomic.Int64 // messages the flood brake rejected
	dropped     atomic.Int64 // deliveries dropped because the job queue was full
	postOK      atomic.Int64 // webhook posts answered 2xx
	postRetried atomic.Int64 // webhook posts tried again after a 429, 5xx or transport error
	postFailed  atomic.Int64 // webhook posts given up on
	inFlight    atomic.Int64 // deliveries holding a lane
	sockets     atomic.Int64 // open widget sockets
}

// windowSlots is the length in seconds of the window the save-latency
// quantiles cover: one histogram per second, merged at scrape time.
const windowSlots = 10

// Save latencies are recorded in nanoseconds from 1 ns to 10 s (longer is
// recorded as 10 s) with 3 significant digits: 0.1 % error, about 200 kB
// per histogram.
const (
	maxSaveNanos = int64(10 * time.Second)
	saveDigits   = 3
)

// window keeps save latencies: a ring of one-second HDR histograms for
// quantiles over the last windowSlots seconds, and an all-time sum and
// count. Seconds count from base on the monotonic clock. Recording takes
// mu for an HDR record (about 10 ns); a scrape merges at most ten
// histograms under it.
type window struct {
	mu    sync.Mutex
	base  time.Time
	slots [windowSlots]struct {
		sec int64
		h   *hdr.Histogram
	}
	merged *hdr.Histogram
	sum    float64 // seconds, all time
	count  int64
}

func newWindow() *window {
	w := &window{base: time.Now(), merged: hdr.New(1, maxSaveNanos, saveDigits)}
	for i := range w.slots {
		w.slots[i].sec = -1
		w.slots[i].h = hdr.New(1, maxSaveNanos, saveDigits)
	}
	return w
}

// record adds one save that took d and ended at now.
func (w *window) record(d time.Duration, now time.Time) {
	sec := int64(now.Sub(w.base) / time.Second)
	v := min(max(d.Nanoseconds(), 1), maxSaveNanos)
	w.mu.Lock()
	s := &w.slots[sec%windowSlots]
	if s.sec != sec {
		s.h.Reset()
		s.sec = sec
	}
	s.h.RecordValue(v)
	w.sum += d.Seconds()
	w.count++
	w.mu.Unlock()
}

// summary returns the median and 99th percentile, in seconds, of the saves
// in the last windowSlots seconds before now (NaN when there were none),
// and the all-time sum and count.
func (w *window) summary(now time.Time) (p50, p99, sum float64, count int64) {
	sec := int64(now.Sub(w.base) / time.Second)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.merged.Reset()
	for i := range w.slots {
		if s := &w.slots[i]; s.sec >= 0 && sec-s.sec < windowSlots {
			w.merged.Merge(s.h)
		}
	}
	p50, p99 = math.NaN(), math.NaN()
	if w.merged.TotalCount() > 0 {
		p50 = float64(w.merged.ValueAtQuantile(50)) / 1e9
		p99 = float64(w.merged.ValueAtQuantile(99)) / 1e9
	}
	return p50, p99, w.sum, w.count
}

// writeMetrics writes the chat backend's figures in the Prometheus text
// exposition format.
func (c *chat) writeMetrics(out io.Writer) error {
	n := &c.count
	depth := 0
	if c.jobs != nil {
		depth = c.jobs.depth()
	}
	p50, p99, sum, count := c.saves.summary(time.Now())
	families := []*dto.MetricFamily{
		gauge("demo_queue_depth", "Webhook jobs waiting for a lane.", float64(depth)),
		gauge("demo_jobs_in_flight", "Webhook jobs holding a lane.", float64(n.inFlight.Load())),
		gauge("demo_ws_connections", "Open widget sockets.", float64(n.sockets.Load())),
		counter("demo_messages_saved_total", "Messages saved.", n.saved.Load()),
		counter("demo_messages_duplicate_total", "Messages whose clientId was already saved for the site.", n.duplicate.Load()),
		counter("demo_flood_rejected_total", "Messages the per-site flood brake rejected.", n.flooded.Load()),
		counter("demo_jobs_dropped_total", "Webhook jobs dropped because the job queue was full.", n.dropped.Load()),
		{
			Name: ptr("demo_webhook_posts_total"), Help: ptr("Webhook posts by result: ok, retried (tried again) or failed (given up)."),
			Type: dto.MetricType_COUNTER.Enum(),
			Metric: []*dto.Metric{
				labelled("result", "failed", n.postFailed.Load()),
				labelled("result", "ok", n.postOK.Load()),
				labelled("result", "retried", n.postRetried.Load()),
			},
		},
		{
			Name: ptr("demo_save_seconds"), Help: ptr("Time to save a message: waiting for the single writer plus the commit. Quantiles over the last 10 s."),
			Type: dto.MetricType_SUMMARY.Enum(),
			Metric: []*dto.Metric{{Summary: &dto.Summary{
				SampleCount: ptr(uint64(count)), SampleSum: ptr(sum),
				Quantile: []*dto.Quantile{{Quantile: ptr(0.5), Value: ptr(p50)}, {Quantile: ptr(0.99), Value: ptr(p99)}},
			}}},
		},
	}
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(out, f); err != nil {
			return err
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func gauge(name, help string, v float64) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: ptr(v)}}}}
}

func counter(name, help string, v int64) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_COUNTER.Enum(),
		Metric: []*dto.Metric{{Counter: &dto.Counter{Value: ptr(float64(v))}}}}
}

func labelled(label, value string, v int64) *dto.Metric {
	return &dto.Metric{Label: []*dto.LabelPair{{Name: ptr(label), Value: ptr(value)}},
		Counter: &dto.Counter{Value: ptr(float64(v))}}
}
