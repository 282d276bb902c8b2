package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// breakdownColumns are the columns of the per-scenario and per-tag tables.
var breakdownColumns = []string{"step", "%s", "share", "completed", "errors", "limited", "p50", "p95", "p99", "avg body"}

// scenarioRows renders each step's scenarios; nil when the run has only one
// scenario and nothing to break down.
func scenarioRows(r *results.Result) [][]string {
	var out [][]string
	many := false
	for _, s := range r.Steps {
		many = many || len(s.Scenarios) > 1
	}
	if !many {
		return nil
	}
	for _, s := range r.Steps {
		var total int64
		for _, b := range s.Scenarios {
			total += b.Completed
		}
		for _, b := range s.Scenarios {
			out = append(out, breakdownRow(s.Index, b.Name, b, total))
		}
	}
	return out
}

// tagRows renders each step's values of tag key.
func tagRows(r *results.Result, key string) [][]string {
	var out [][]string
	for _, s := range r.Steps {
		values := s.Tags[key]
		names := make([]string, 0, len(values))
		var total int64
		for v, b := range values {
			names = append(names, v)
			total += b.Completed
		}
		slices.Sort(names)
		for _, v := range names {
			out = append(out, breakdownRow(s.Index, v, values[v], total))
		}
	}
	return out
}

func tagKeys(r *results.Result) []string {
	var keys []string
	for _, s := range r.Steps {
		for k := range s.Tags {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// breakdownRow is one scenario's (or tag value's) row. A breakdown with no
// iteration in the step measured nothing: its share is 0 %, and its
// rates, latencies and body are "-", not zeros.
func breakdownRow(step int, name string, b results.Breakdown, total int64) []string {
	share := "0%"
	if total > 0 {
		share = Percent(float64(b.Completed) / float64(total))
	}
	if b.Completed == 0 {
		return []string{fmt.Sprint(step + 1), name, share, "0", "-", "-", "-", "-", "-", "-"}
	}
	errs := Percent(float64(b.Failed) / float64(b.Completed))
	if b.Failed > 0 {
		errs += " (" + topErrors(b.Errors) + ")"
	}
	limited := Percent(float64(b.Limited) / float64(b.Completed))
	return []string{
		fmt.Sprint(step + 1), name, share, fmt.Sprint(b.Completed), errs, limited,
		Millis(b.LatencyMS.P50), Millis(b.LatencyMS.P95), Millis(b.LatencyMS.P99), bytesText(b.AvgBodyBytes),
	}
}

// bytesText formats a size: "512 B", "8.5 KB", "1.2 MB".
func bytesText(n float64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%.0f B", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f KB", n/1e3)
	}
	return fmt.Sprintf("%.1f MB", n/1e6)
}

// breakdownTables writes the per-scenario table and one table per tag key,
// each through table (text or Markdown).
func breakdownTables(w io.Writer, r *results.Result, table func(io.Writer, []string, [][]string)) {
	if rows := scenarioRows(r); rows != nil {
		fmt.Fprintln(w)
		table(w, header("scenario"), rows)
	}
	for _, k := range tagKeys(r) {
		fmt.Fprintln(w)
		table(w, header("tag "+k), tagRows(r, k))
	}
	if head, rows := metricRows(r); rows != nil {
		fmt.Fprintln(w)
		table(w, head, rows)
	}
}

// metricRows is the watched target's Prometheus metrics per step: a
// gauge's highest value in the step, a counter's rate per second; nil when
// no step has any. A step without a series (not scraped, every scrape
// failed, or the series was absent) shows "-", never a zero. Building it
// is linear in its cells, however many series there are.
func metricRows(r *results.Result) ([]string, [][]string) {
	counter := map[string]bool{}
	for _, s := range r.Steps {
		if s.Target == nil {
			continue
		}
		for name, m := range s.Target.Metrics {
			counter[name] = counter[name] || m.Counter
		}
	}
	if len(counter) == 0 {
		return nil, nil
	}
	names := slices.Sorted(maps.Keys(counter))
	head := make([]string, 0, 2+len(names))
	head = append(head, "step", "target")
	for _, n := range names {
		if counter[n] {
			head = append(head, n+" /s")
		} else {
			head = append(head, n+" max")
		}
	}
	rows := make([][]string, 0, len(r.Steps))
	for _, s := range r.Steps {
		row := make([]string, 0, len(head))
		row = append(row, fmt.Sprint(s.Index+1), levelOf(s))
		for _, n := range names {
			cell := "-"
			if s.Target != nil {
				if m, ok := s.Target.Metrics[n]; ok {
					v := m.Max
					if counter[n] {
						v = m.Rate
					}
					cell = MetricValue(n, v)
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return head, rows
}

func header(name string) []string {
	h := slices.Clone(breakdownColumns)
	h[1] = fmt.Sprintf(h[1], name)
	return h
}

// textTable writes aligned columns: the first two left-aligned, the rest
// right-aligned.
func textTable(w io.Writer, head []string, rows [][]string) {
	alignedTable(w, head, rows, false)
}

// alignedTable writes aligned columns: the first two left-aligned, and
// the last when lastLeft is set; the rest right-aligned.
func alignedTable(w io.Writer, head []string, rows [][]string, lastLeft bool) {
	width := make([]int, len(head))
	for i, c := range head {
		width[i] = utf8.RuneCountInString(c)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < 2 || lastLeft && i == len(cells)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(head)
	for _, row := range rows {
		line(row)
	}
}

// mdTable writes a Markdown table: the second column left-aligned, the
// rest right-aligned.
func mdTable(w io.Writer, head []string, rows [][]string) {
	mdAlignedTable(w, head, rows, func(i int) bool { return i == 1 })
}

// mdAlignedTable writes a Markdown table, the columns left says
// left-aligned, the rest right-aligned.
func mdAlignedTable(w io.Writer, head []string, rows [][]string, left func(i int) bool) {
	cells := make([]string, len(head))
	for i, h := range head {
		cells[i] = mdEscape(h) // a tag key is the plan's text
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	align := make([]string, len(head))
	for i := range align {
		align[i] = "---:"
		if left(i) {
			align[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = mdEscape(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}
