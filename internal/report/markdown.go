package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// Markdown writes the run as Markdown: find's answer or a run's summary
// line, a setup block with the command that
// reproduces it, the step table, what each event cost, thresholds and
// warnings. It returns the
// first error writing to w.
func Markdown(w io.Writer, r *results.Result) error {
	c := &checked{w: w}
	markdown(c, r)
	return c.err
}

func markdown(w io.Writer, r *results.Result) {
	title := r.Name
	if title == "" {
		title = "load test"
	}
	fmt.Fprintf(w, "## %s\n\n", mdEscape(title))
	if a := FindAnswer(r); a != "" {
		fmt.Fprintf(w, "**%s**\n\n", mdEscape(a))
	}
	if s := Summary(r); s != "" {
		fmt.Fprintf(w, "**%s**\n\n", mdEscape(s))
	}
	fmt.Fprintf(w, "**%s**\n\n", mdEscape(OutcomeLine(r)))
	fmt.Fprintf(w, "| setup | |\n|---|---|\n")
	if r.Target != "" {
		fmt.Fprintf(w, "| target | %s |\n", mdEscape(r.Target))
	}
	fmt.Fprintf(w, "| date | %s |\n", r.StartedAt.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "| host | %s, %s, %d CPUs |\n", mdEscape(r.Host.Hostname), r.Host.OS, r.Host.CPUs)
	fmt.Fprintf(w, "| tool | ceiling %s |\n", r.Host.Version)
	if r.Interrupted {
		fmt.Fprintf(w, "| note | **interrupted**: only finished steps are shown |\n")
	}
	if r.Unfinished {
		fmt.Fprintf(w, "| note | **unfinished**: ceiling stopped before the run ended (killed, or a second Ctrl-C); only the steps it had written are shown |\n")
	}
	f := fence(r.Command)
	fmt.Fprintf(w, "\nReproduce:\n\n%s\n%s\n%s\n\n", f, r.Command, f)

	columns := columnsOf(r)
	fmt.Fprintf(w, "| %s |\n", strings.Join(columns, " | "))
	align := make([]string, len(columns))
	for i := range align {
		align[i] = "---:"
	}
	align[len(align)-1], align[len(align)-2] = "---", "---"
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, row := range rows(r) {
		for i := range row {
			row[i] = mdEscape(row[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	eventTable(w, r, "### "+EventsTitle, mdEventTable)
	soakMarkdown(w, r)
	endpointTable(w, r)
	breakdownTables(w, r, mdTable)
	if len(r.Steps) > 0 && r.Steps[0].Model == "open" {
		fmt.Fprintf(w, "\nLatency is measured from each request's intended start, so queueing in the target or in the generator shows in the percentiles.\n")
	}
	// The findings quote what the target sent (a failed check's body) and
	// what the plan named (tags, scenarios): each line is text, never
	// Markdown or HTML of its own.
	var notes strings.Builder
	footer(&notes, r, "")
	for line := range strings.Lines(notes.String()) {
		if line = strings.TrimRight(line, "\r\n"); line == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "- %s\n", mdEscape(line))
	}
	if u := Unmeasured(r); len(u) > 0 {
		fmt.Fprintf(w, "\n### What this run did not measure\n\n")
		for _, line := range u {
			fmt.Fprintf(w, "- %s\n", line)
		}
	}
}

// mdSpecial escapes what Markdown would read as markup in a cell or a
// heading: a name from a plan or a tag value is text, never a link, an
// emphasis, raw HTML or a new line of the table.
var mdSpecial = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", "*", `\*`, "`", "\\`",
	"[", `\[`, "]", `\]`, "\r", " ", "\n", " ")

func mdEscape(s string) string { return mdSpecial.Replace(s) }

// fence returns a code fence longer than any run of backticks in s, so that
// s cannot close it.
func fence(s string) string {
	n, run := 3, 0
	for _, c := range s {
		if c == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", n)
}
