package outputs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// exporter serves the latest value of every series in Prometheus text
// format at /metrics, for a Prometheus that scrapes (--metrics-listen).
type exporter struct {
	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	latest map[string]sample
}

// listen serves /metrics at addr; a port alone (":9464") listens on
// loopback only, as everything ceiling serves does unless asked.
func listen(addr string) (*exporter, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("want HOST:PORT or :PORT: %w", err)
	}
	if host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	e := &exporter{ln: ln, latest: map[string]sample{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", e.serve)
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// Addr is where the exporter listens.
func (e *exporter) Addr() string { return e.ln.Addr().String() }

func (e *exporter) second(_ *run.Second, samples []sample) { e.keep(samples) }

func (e *exporter) step(_ string, _ *results.Step, samples []sample) { e.keep(samples) }

func (e *exporter) keep(samples []sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range samples {
		e.latest[s.key()] = s
	}
}

// families turns the latest samples into metric families, sorted.
func (e *exporter) families() []*dto.MetricFamily {
	e.mu.Lock()
	defer e.mu.Unlock()
	byName := map[string]*dto.MetricFamily{}
	keys := make([]string, 0, len(e.latest))
	for k := range e.latest {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := e.latest[k]
		f := byName[s.name]
		if f == nil {
			typ := dto.MetricType_COUNTER
			if s.gauge {
				typ = dto.MetricType_GAUGE
			}
			f = &dto.MetricFamily{Name: proto.String(s.name), Type: typ.Enum()}
			byName[s.name] = f
		}
		m := &dto.Metric{TimestampMs: proto.Int64(s.at.UnixMilli())}
		for _, l := range s.labels {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(l.name), Value: proto.String(l.value)})
		}
		if s.gauge {
			m.Gauge = &dto.Gauge{Value: proto.Float64(s.value)}
		} else {
			m.Counter = &dto.Counter{Value: proto.Float64(s.value)}
		}
		f.Metric = append(f.Metric, m)
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

func (e *exporter) serve(w http.ResponseWriter, _ *http.Request) {
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	w.Header().Set("Content-Type", string(format))
	enc := expfmt.NewEncoder(w, format)
	for _, f := range e.families() {
		if err := enc.Encode(f); err != nil {
			return
		}
	}
}

func (e *exporter) close() []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = e.srv.Close()
	}
	return nil
}
