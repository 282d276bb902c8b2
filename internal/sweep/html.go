package sweep

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/report"
)

// sweepCSS aligns the table's numbers right: the run report's style sheet
// leaves its second and last columns to the left.
const sweepCSS = `
.sweep th:nth-child(n+2),.sweep td:nth-child(n+2){text-align:right}`

// HTML writes the sweep as one self-contained page (no script, nothing
// fetched at view time): the command, the same table as Text, the
// throughput and the p95 of every shape as bar charts with the best shape
// marked (a shape that failed to start, or whose target died, has a label
// and no bar), and
// Text's notes: what the marks mean, the limits, the lessons, the shapes'
// errors.
func HTML(w io.Writer, r *Result) error {
	body, err := body(r)
	if err != nil {
		return err
	}
	return report.Page(w, "ceiling sweep", sweepCSS, body)
}

// Body is the HTML page's body, its style sheet first: the sweep so far on
// the live page (--dashboard).
func Body(r *Result) (string, error) {
	b, err := body(r)
	return "<style>" + sweepCSS + "</style>\n" + b, err
}

func body(r *Result) (string, error) {
	e := html.EscapeString
	var b strings.Builder
	if !r.StartedAt.IsZero() {
		fmt.Fprintf(&b, "<p>%s</p>\n", e(r.StartedAt.UTC().Format("2006-01-02 15:04 MST")))
	}
	fmt.Fprintf(&b, "<pre>%s</pre>\n", e(r.Command))
	head, rows := table(r)
	b.WriteString("<div class=\"sweep\">\n")
	report.HTMLTable(&b, head, rows)
	b.WriteString("</div>\n")
	labels := make([]string, len(r.Configs))
	rps := make([]float64, len(r.Configs))
	p95 := make([]float64, len(r.Configs))
	best := -1
	for i, c := range r.Configs {
		labels[i], rps[i], p95[i] = c.Name, c.Throughput, c.P95MS
		if c.State == FailedToStart || c.State == TargetDied {
			rps[i], p95[i] = math.NaN(), math.NaN()
		}
		if c.Best {
			best = i
		}
	}
	for _, f := range []struct {
		title, unit string
		values      []float64
		format      func(float64) string
	}{
		{"Throughput per shape", "throughput (req/s)", rps, report.Rate},
		{"p95 per shape (best: the best shape by throughput)", "p95 response time", p95, report.Millis},
	} {
		if svg := report.Bars(f.title, f.unit, labels, f.values, best, f.format); svg != "" {
			fmt.Fprintf(&b, "<figure><figcaption>%s</figcaption>%s</figure>\n", e(f.title), svg)
		}
	}
	var notes strings.Builder
	if err := footer(&notes, r, ""); err != nil {
		return "", err
	}
	b.WriteString("<h2>Notes</h2>\n<ul>\n")
	for _, line := range strings.Split(strings.TrimSpace(notes.String()), "\n") {
		fmt.Fprintf(&b, "<li>%s</li>\n", e(line))
	}
	b.WriteString("</ul>\n")
	return b.String(), nil
}

// WriteHTML writes r's HTML page to the file at path, through a temporary
// file renamed over it (report.WriteFile): whole or not at all.
func WriteHTML(path string, r *Result) error {
	return report.WriteFile(path, func(w io.Writer) error { return HTML(w, r) })
}
