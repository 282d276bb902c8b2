package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// endpointTable writes the per-endpoint table of a run whose scenarios each ran
// alone (load.each): one row per scenario and level, with its throughput,
// percentiles, success, average body and the throughput's CoV over the
// repeats. Nothing when no step ran a scenario alone.
func endpointTable(w io.Writer, r *results.Result) {
	var rows [][]string
	for _, s := range r.Steps {
		if s.Scenario == "" {
			continue
		}
		conc := Rate(s.TargetRate)
		if s.Model == "closed" {
			conc = fmt.Sprint(s.VUs)
		}
		success, body, cov := "-", "-", "-"
		if s.Completed > 0 {
			ok := s.Completed - s.Failed
			if r.Outcome.Strict {
				ok -= min(s.Redirected, ok) // not the page asked for, as far as anyone knows
			}
			success = Percent(float64(ok) / float64(s.Completed))
		}
		for _, b := range s.Scenarios {
			if b.Name == s.Scenario && b.AvgBodyBytes > 0 {
				body = bytesText(b.AvgBodyBytes)
			}
		}
		if s.Repeat != nil {
			cov = fmt.Sprintf("±%.0f%%", s.Repeat.CoVPct[results.MetricThroughput])
		}
		rows = append(rows, []string{mdEscape(s.Scenario), conc, fmt.Sprintf("%.0f", s.Throughput),
			Millis(s.LatencyMS.P50), Millis(s.LatencyMS.P95), Millis(s.LatencyMS.P99), success, body, cov})
	}
	if rows == nil {
		return
	}
	fmt.Fprintf(w, "\n### Per endpoint, each alone\n\n")
	fmt.Fprintf(w, "| Endpoint | Conc | Req/s | P50 | P95 | P99 | Success | AvgBody | CoV%% |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "\nCoV%% is the throughput's coefficient of variation over the repeats (--repeat); \"-\" for a single run. AvgBody is the mean response body: endpoints whose bodies are the same size at every level are probably one page (a login page) served in their place.%s\n", redirectNote(r))
}

// redirectNote says how Success counts answers that came after a redirect,
// when some did.
func redirectNote(r *results.Result) string {
	var n int64
	for _, s := range r.Steps {
		if s.Scenario != "" {
			n += s.Redirected
		}
	}
	switch {
	case n == 0:
		return ""
	case r.Outcome.Strict:
		return " Success leaves out the answers that came after following a redirect: they may not be the page asked for (strict: false counts them)."
	}
	return " Success counts the answers that came after following a redirect (strict: false)."
}
