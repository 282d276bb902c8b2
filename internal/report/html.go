package report

import (
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// HTML writes the run as one self-contained page: the answer (find's, or
// a run's highest passing step), the setup, the step table, what each
// event cost (when the plan had events), what broke
// first (BrokeFirst), the plots as inline SVG (no script, no network at
// view time), the breakdowns and the findings. It reads without
// JavaScript.
func HTML(w io.Writer, r *results.Result) error {
	return page(w, r, BrokeFirst(r))
}

// page is HTML with story as the paragraph on what broke first (none when
// empty).
func page(w io.Writer, r *results.Result, story string) error {
	return Page(w, Title(r), "", body(r, story))
}

// Title is a run's title: its plan's name, or "ceiling load test".
func Title(r *results.Result) string {
	if r.Name == "" {
		return "ceiling load test"
	}
	return r.Name
}

// body is the HTML of the report's page between its heading and its end.
func body(r *results.Result, story string) string {
	answer := ""
	if r.Search != nil {
		answer = FindAnswer(r)
	}
	return bodyWith(r, answer, Summary(r), OutcomeLine(r), story)
}

// bodyWith is body with answer (find's), summary and the outcome as its
// first lines.
func bodyWith(r *results.Result, answer, summary, outcome, story string) string {
	var b strings.Builder
	for _, line := range []string{answer, summary, outcome} {
		if line != "" {
			fmt.Fprintf(&b, "<p class=\"answer\">%s</p>\n", html.EscapeString(line))
		}
	}
	fmt.Fprintf(&b, "<p>%s · %s, %d CPUs · ceiling %s</p>\n<pre>%s</pre>\n",
		html.EscapeString(r.StartedAt.UTC().Format("2006-01-02 15:04 MST")), html.EscapeString(r.Host.OS), r.Host.CPUs,
		html.EscapeString(r.Host.Version), html.EscapeString(r.Command))
	HTMLTable(&b, columnsOf(r), rows(r))
	if rs := eventRows(r); rs != nil {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", EventsTitle)
		HTMLTable(&b, eventColumns, rs)
	}
	soakHTML(&b, r)
	if story != "" {
		fmt.Fprintf(&b, "<p class=\"story\">%s</p>\n", html.EscapeString(story))
	}
	for _, p := range plotsOf(r) {
		fmt.Fprintf(&b, "<figure><figcaption>%s</figcaption>%s</figure>\n", html.EscapeString(p.caption), p.svg)
	}
	if rs := scenarioRows(r); rs != nil {
		b.WriteString("<h2>Per scenario</h2>\n")
		HTMLTable(&b, header("scenario"), rs)
	}
	for _, k := range tagKeys(r) {
		fmt.Fprintf(&b, "<h2>Per %s</h2>\n", html.EscapeString(k))
		HTMLTable(&b, header("tag "+k), tagRows(r, k))
	}
	if head, rows := metricRows(r); rows != nil {
		b.WriteString("<h2>The target's metrics per step</h2>\n")
		HTMLTable(&b, head, rows)
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
	return b.String()
}

// Page writes a self-contained HTML page around body: title in the head
// and as the heading, the run report's style sheet followed by style
// (more rules, or empty), then body as it is (HTML the caller has
// escaped).
func Page(w io.Writer, title, style, body string) error {
	t := html.EscapeString(title)
	_, err := fmt.Fprintf(w, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<style>%s%s</style></head><body>\n<h1>%s</h1>\n%s</body></html>\n",
		t, css, style, t, body)
	return err
}

// css is the run report's style sheet. A table may be wider than the
// text: its box (.wide) grows to the window's width, centred on the page,
// and scrolls sideways only past that; a table's headings wrap, and so
// does a cell at the places cellHTML marks (td.w: its pieces stay whole)
// and its last column (a verdict and its reason). In a table still too
// wide for the window (.fit), the first and the last column stay in view
// while the rest scrolls under them.
const css = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{padding:.25em .5em;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
.wide{overflow-x:auto;position:relative;left:50%;transform:translateX(-50%);width:max-content;min-width:100%;max-width:calc(100vw - 2em)}
th,td.w{white-space:normal}td.w span{white-space:nowrap}
.fit th:first-child,.fit td:first-child{position:sticky;left:0;background:#fff}.fit th:last-child,.fit td:last-child{position:sticky;right:0;background:#fff}
td:last-child,th:last-child{text-align:left;white-space:normal}
th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}
figure{margin:1.5em 0}figcaption{font-weight:600}.answer{font-size:1.3em;font-weight:600}.story{font-size:1.1em;border-left:4px solid #d62728;padding-left:.7em}
svg{max-width:100%;height:auto}`

// HTMLTable writes a table in the page's style: head as its header, a row
// per rows, every cell escaped. It takes the window's width when wider
// than the page, wraps its cells where cellHTML marks them, and scrolls
// sideways, its first and last columns in view, only when wider still.
// The first column (a step, a shape, an event: the row's name) never
// wraps.
func HTMLTable(b *strings.Builder, head []string, rows [][]string) {
	b.WriteString("<div class=\"wide fit\"><table><thead><tr>")
	for _, h := range head {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr></thead><tbody>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for i, c := range row {
			if i == 0 || i == len(row)-1 { // a row's name stays whole; the last column wraps anywhere
				fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
				continue
			}
			b.WriteString(cellHTML(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
}

// cellBreaks marks where a cell may wrap: before details in parentheses
// ("552/600 (+48 later)"), after a comma between them ("timeout 10,
// ws_no_ack 5") and after a slash between two figures ("0.58 ms / 0.93
// ms"). The pieces between stay whole: a figure never parts from its unit.
var cellBreaks = strings.NewReplacer(" (", "\x00(", ", ", ",\x00", " / ", " /\x00")

// cellHTML is a table cell with its text escaped: a <td> as it is, or,
// when it has places to wrap (cellBreaks), a <td class="w"> of pieces that
// each stay whole, joined by spaces where it may wrap. Its text is c's.
func cellHTML(c string) string {
	pieces := strings.Split(cellBreaks.Replace(c), "\x00")
	if len(pieces) == 1 {
		return "<td>" + html.EscapeString(c) + "</td>"
	}
	for i, p := range pieces {
		pieces[i] = "<span>" + html.EscapeString(p) + "</span>"
	}
	return "<td class=\"w\">" + strings.Join(pieces, " ") + "</td>"
}

// WriteHTML writes r's HTML page to the file at path (WriteFile), with
// story as the paragraph on what broke first, or BrokeFirst's when story
// is empty.
func WriteHTML(path string, r *results.Result, story string) error {
	if story == "" {
		story = BrokeFirst(r)
	}
	return WriteFile(path, func(w io.Writer) error { return page(w, r, story) })
}

// WriteFile writes what render writes to the file at path, readable by
// all (0644). It goes to a temporary file in the same folder, renamed over
// path once whole, so a full disk or a render error leaves no truncated
// report behind, and path untouched.
func WriteFile(path string, render func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	err = f.Chmod(0o644) // CreateTemp makes it private; a report is for reading
	if err == nil {
		err = render(f)
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

// LiveBody is the body of the live page (--dashboard) while a run goes
// on: now (the step under way, as the live line says it; "" between
// steps) above what the report's page shows of r so far, with the same
// tables and plots. running, when not nil, is the step under way with the
// seconds it has measured: it has its row in the table and its line in
// the plots, and no say in the answer so far, which is the finished
// steps'.
func LiveBody(r *results.Result, running *results.Step, now string) string {
	var b strings.Builder
	if now != "" {
		fmt.Fprintf(&b, "<p class=\"answer\">%s</p>\n", html.EscapeString(now))
	}
	if len(r.Steps) == 0 && running == nil {
		b.WriteString("<p>No step has measured anything yet.</p>\n")
		return b.String()
	}
	all := *r
	// Not ended yet is not unfinished: the findings would say ceiling was
	// stopped. A search's answer comes when it ends.
	all.Unfinished, all.Search = false, nil
	if running != nil {
		all.Steps = append(slices.Clip(r.Steps), *running)
	}
	summary, outcome, story := "", "", ""
	if len(r.Steps) > 0 || r.Soak != nil {
		summary, outcome, story = Summary(r), "so far: "+OutcomeLine(soFar(r)), BrokeFirst(r)
	}
	b.WriteString(bodyWith(&all, "", summary, outcome, story))
	return b.String()
}

// FinalBody is the body of the live page once the run has ended: the
// report's page.
func FinalBody(r *results.Result) string { return body(r, BrokeFirst(r)) }
