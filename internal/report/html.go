package report

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-analyze/charts"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// HTML writes the run as one self-contained page: the setup, the step
// table, the plots as inline SVG (no script, no network at view time), the
// breakdowns and the findings. It reads without JavaScript.
func HTML(w io.Writer, r *results.Result) error {
	title := r.Name
	if title == "" {
		title = "ceiling load test"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<style>%s</style></head><body>\n", html.EscapeString(title), css)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(title))
	if r.Search != nil {
		fmt.Fprintf(&b, "<p class=\"answer\">%s</p>\n", html.EscapeString(r.Search.Answer))
	}
	fmt.Fprintf(&b, "<p>%s · %s, %d CPUs · ceiling %s</p>\n<pre>%s</pre>\n",
		html.EscapeString(r.StartedAt.UTC().Format("2006-01-02 15:04 MST")), html.EscapeString(r.Host.OS), r.Host.CPUs,
		html.EscapeString(r.Host.Version), html.EscapeString(r.Command))
	htmlTable(&b, columnsOf(r), rows(r))
	plots, err := plotsOf(r)
	if err != nil {
		return err
	}
	for _, p := range plots {
		fmt.Fprintf(&b, "<figure><figcaption>%s</figcaption>%s</figure>\n", html.EscapeString(p.caption), p.svg)
	}
	if rs := scenarioRows(r); rs != nil {
		b.WriteString("<h2>Per scenario</h2>\n")
		htmlTable(&b, header("scenario"), rs)
	}
	for _, k := range tagKeys(r) {
		fmt.Fprintf(&b, "<h2>Per %s</h2>\n", html.EscapeString(k))
		htmlTable(&b, header("tag "+k), tagRows(r, k))
	}
	if head, rows := metricRows(r); rows != nil {
		b.WriteString("<h2>The target's metrics per step</h2>\n")
		htmlTable(&b, head, rows)
	}
	var notes strings.Builder
	footer(&notes, r, "")
	if s := strings.TrimSpace(notes.String()); s != "" {
		fmt.Fprintf(&b, "<h2>Findings</h2>\n<pre>%s</pre>\n", html.EscapeString(s))
	}
	if u := Unmeasured(r); len(u) > 0 {
		b.WriteString("<h2>What this run did not measure</h2>\n<ul>\n")
		for _, line := range u {
			fmt.Fprintf(&b, "<li>%s</li>\n", html.EscapeString(line))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</body></html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

const css = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}.wide{overflow-x:auto}th,td{padding:.25em .5em;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
td:last-child,th:last-child{text-align:left;white-space:normal}
th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}
figure{margin:1.5em 0}figcaption{font-weight:600}.answer{font-size:1.3em;font-weight:600}svg{max-width:100%;height:auto}`

func htmlTable(b *strings.Builder, head []string, rows [][]string) {
	b.WriteString("<div class=\"wide\"><table><thead><tr>")
	for _, h := range head {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr></thead><tbody>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
}

type plot struct {
	caption string
	svg     string
}

// plotsOf draws the run's plots: the rate against p99 across steps (the
// hockey stick), latency over time, the target's CPU and RSS over time, and
// the delivery backlog over time, each only when there is data for it.
func plotsOf(r *results.Result) ([]plot, error) {
	var out []plot
	add := func(caption string, values [][]float64, labels, names []string) error {
		if len(labels) < 2 {
			return nil
		}
		p, err := charts.LineRender(values, charts.SVGOutputOptionFunc(), charts.DimensionsOptionFunc(900, 320),
			charts.XAxisLabelsOptionFunc(labels), charts.LegendLabelsOptionFunc(names))
		if err != nil {
			return fmt.Errorf("plot %s: %w", caption, err)
		}
		svg, err := p.Bytes()
		if err != nil {
			return fmt.Errorf("plot %s: %w", caption, err)
		}
		out = append(out, plot{caption: caption, svg: string(svg)})
		return nil
	}
	steps, labels := byLevel(r)
	var p50, p99, delivered []float64
	for _, s := range steps {
		p50, p99 = append(p50, s.LatencyMS.P50), append(p99, s.LatencyMS.P99)
		if d := s.Delivery; d != nil && d.Expected > 0 {
			n := d.Delivered
			if d.AtStepEnd != nil {
				n = *d.AtStepEnd
			}
			delivered = append(delivered, 100*float64(n)/float64(d.Expected))
		}
	}
	if err := add(stickCaption(r), [][]float64{p50, p99}, labels, []string{"p50 ms", "p99 ms"}); err != nil {
		return nil, err
	}
	if len(steps) > 0 && len(delivered) == len(steps) {
		caption := "Load against delivery: % of each step's messages delivered"
		if steps[0].Delivery.AtStepEnd != nil {
			caption += " by its end"
		}
		if err := add(caption, [][]float64{delivered}, labels, []string{"delivered %"}); err != nil {
			return nil, err
		}
	}
	var t []string
	var cpu, rss []float64
	p50, p99 = nil, nil
	for _, s := range r.Steps {
		for _, p := range s.Series {
			if p.Completed == 0 {
				continue // a quiet second (warm-up, drain): no latency to show
			}
			t = append(t, fmt.Sprintf("%.0fs", p.T))
			p50, p99 = append(p50, p.P50), append(p99, p.P99)
			if p.TargetCPU != nil && p.TargetRSS != nil {
				cpu, rss = append(cpu, *p.TargetCPU), append(rss, *p.TargetRSS)
			}
		}
	}
	if err := add("Latency over time (ms, per second)", [][]float64{p50, p99}, t, []string{"p50", "p99"}); err != nil {
		return nil, err
	}
	if len(cpu) == len(t) {
		if err := add("Target CPU (% of one core) and RSS (MB) over time", [][]float64{cpu, rss}, t, []string{"CPU %", "RSS MB"}); err != nil {
			return nil, err
		}
	}
	if len(r.DeliverySeries) > 1 {
		var dt []string
		var arrived, backlog []float64
		for _, p := range r.DeliverySeries {
			dt = append(dt, fmt.Sprintf("%.0fs", p.T))
			arrived, backlog = append(arrived, float64(p.Arrived)), append(backlog, float64(p.Backlog))
		}
		if err := add("Deliveries per second and backlog", [][]float64{arrived, backlog}, dt, []string{"arrived", "backlog"}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// byLevel returns the finished steps sorted by level (a find tries them out
// of order), and their labels, the edge marked: the x axis of the hockey
// stick.
func byLevel(r *results.Result) ([]results.Step, []string) {
	steps := slices.DeleteFunc(slices.Clone(r.Steps), func(s results.Step) bool { return s.Interrupted })
	level := func(s results.Step) float64 {
		if s.Model == "closed" {
			return float64(s.VUs)
		}
		return s.TargetRate
	}
	slices.SortStableFunc(steps, func(a, b results.Step) int { return cmp.Compare(level(a), level(b)) })
	labels := make([]string, len(steps))
	for i, s := range steps {
		labels[i] = levelOf(s)
		if r.Edge != nil && s.Index == r.Edge.Step {
			labels[i] += " (edge)"
		}
	}
	return steps, labels
}

func stickCaption(r *results.Result) string {
	if r.Edge != nil {
		return "Load against latency: the edge is marked"
	}
	return "Load against latency"
}

// WriteHTML writes r's HTML page to the file at path.
// The page goes to a temporary file in the same folder, renamed over path
// once whole, so a full disk leaves no truncated report behind.
func WriteHTML(path string, r *results.Result) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	err = f.Chmod(0o644) // CreateTemp makes it private; a report is for reading
	if err == nil {
		err = HTML(f, r)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
