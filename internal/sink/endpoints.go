package sink

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// reservedPrefix starts the paths the sink serves itself; no request under
// it is recorded.
const reservedPrefix = "/__ceiling/"

// The reserved paths.
const (
	StatsPath   = reservedPrefix + "stats"
	MetricsPath = reservedPrefix + "metrics"
)

// serveReserved serves GET StatsPath and GET MetricsPath; any other path
// under reservedPrefix is 404 and any other method 405.
func (s *Sink) serveReserved(w http.ResponseWriter, r *http.Request) {
	var write func(io.Writer, Stats) error
	switch r.URL.Path {
	case StatsPath:
		w.Header().Set("Content-Type", "application/json")
		write = s.writeStats
	case MetricsPath:
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		write = writeMetrics
	default:
		http.Error(w, "no such sink path", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	_ = write(w, s.Stats()) // a client that went away is its own problem
}

// writeStats writes st as JSON with the sink's name.
func (s *Sink) writeStats(w io.Writer, st Stats) error {
	return json.NewEncoder(w).Encode(struct {
		Name string `json:"name"`
		Stats
	}{s.name, st})
}

// writeMetrics writes st in the Prometheus text exposition format. The
// only label is the answered status, a small closed set.
func writeMetrics(w io.Writer, st Stats) error {
	var b strings.Builder
	b.WriteString("# HELP sink_requests_total Requests answered by the sink, by status.\n")
	b.WriteString("# TYPE sink_requests_total counter\n")
	for _, code := range slices.Sorted(maps.Keys(st.ByStatus)) {
		fmt.Fprintf(&b, "sink_requests_total{status=\"%d\"} %d\n", code, st.ByStatus[code])
	}
	counter(&b, "sink_ids_total", "Distinct message ids received.", st.IDs)
	counter(&b, "sink_duplicates_total", "Arrivals of a message id received before.", st.Duplicates)
	counter(&b, "sink_no_id_total", "Request bodies without a message id.", st.NoID)
	counter(&b, "sink_unchecked_total", "Arrivals whose id could not be checked for repeats: the id set was full.", st.Unchecked)
	counter(&b, "sink_unlogged_total", "Arrivals not kept for the delivery ledger: too many were waiting to be read.", st.Unlogged)
	_, err := io.WriteString(w, b.String())
	return err
}

func counter(b *strings.Builder, name, help string, v int64) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
}
