package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/transport/httpx"
)

// BenchmarkOpenRate2000 holds 2000 requests a second for 3 s against a
// loopback server and reports the achieved rate as a share of the target
// ("achieved/target"), the late arrivals and the worst schedule lag. The
// achieved rate must be within 1 % of the target, or the shortfall must show
// as late arrivals: a generator that falls behind may not hide it.
//
//	go test -run '^$' -bench OpenRate2000 -benchtime 1x ./internal/load
func BenchmarkOpenRate2000(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	ex := httpx.New(httpx.Config{Timeout: 5 * time.Second})
	defer ex.Close()
	const rate = 2000
	for b.Loop() {
		r := NewRunner(Config{Exchanger: ex, Scenarios: compiled(b, plan.Scenario{Request: plan.Request{URL: srv.URL}}), Timeout: 5 * time.Second})
		res := r.Run(context.Background(), Step{Rate: rate, Warmup: 500 * time.Millisecond, Length: 3 * time.Second})
		r.Close()
		share := res.Achieved() / rate
		b.ReportMetric(share, "achieved/target")
		b.ReportMetric(float64(res.Total.Late), "late")
		b.ReportMetric(float64(res.Total.MaxLag)/float64(time.Millisecond), "max-lag-ms")
		if (share < 0.99 || share > 1.01) && res.Total.Late == 0 {
			b.Errorf("achieved %.1f/s of %d/s with no late arrivals: the shortfall is hidden", res.Achieved(), rate)
		}
		if share < 0.99 {
			b.Logf("rate not held: achieved %.1f/s of %d/s, %d late arrivals (max lag %v)", res.Achieved(), rate, res.Total.Late, res.Total.MaxLag)
		}
	}
}
