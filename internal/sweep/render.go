package sweep

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

var header = []string{"config", "req/s", "req/s per CPU", "p50", "p95", "p99", "errors", "state", "est. users", "cpu", "rss"}

// table is the sweep table of r: a header and a row of cells per shape,
// with an edge column after the shape's name in find mode.
func table(r *Result) (head []string, rows [][]string) {
	find := r.Mode == "find"
	head = header
	if find {
		head = slices.Insert(slices.Clone(header), 1, "edge")
	}
	for i := range r.Configs {
		c := &r.Configs[i]
		cells := c.cells()
		if find {
			edge := "-"
			switch {
			case c.Edge > 0 && c.Unlimited:
				edge = "≥ " + strconv.FormatFloat(c.Edge, 'g', 6, 64)
			case c.Edge > 0:
				edge = strconv.FormatFloat(c.Edge, 'g', 6, 64)
			}
			cells = slices.Insert(cells, 1, edge)
		}
		rows = append(rows, cells)
	}
	return head, rows
}

// cells are a row's table cells: "*" before the best shape's name, "need"
// after the one --need asks for.
func (r *Row) cells() []string {
	name := r.Name
	if r.Best {
		name = "* " + name
	}
	if r.Needed {
		name += " (need)"
	}
	switch r.State {
	case FailedToStart:
		return []string{name, "-", "-", "-", "-", "-", "-", r.State, "-", "-", "-"}
	case TargetDied:
		return []string{name, "-", "-", "-", "-", "-", "-", r.State + " (" + r.Died + ")", "-", optional("%.0f%%", r.CPUPct), optional("%.0f MB", r.RSSMB)}
	}
	perCPU := "-"
	if r.PerCPU > 0 {
		perCPU = report.Rate(r.PerCPU)
	}
	return []string{name, report.Rate(r.Throughput), perCPU, report.Millis(r.P50MS), report.Millis(r.P95MS), report.Millis(r.P99MS),
		report.Percent(r.ErrorRate), r.State, fmt.Sprintf("%.0f", r.EstUsers), optional("%.0f%%", r.CPUPct), optional("%.0f MB", r.RSSMB)}
}

// Text writes the sweep table, the lessons and the limits used.
func Text(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head, rows := table(r)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, cells := range rows {
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return footer(w, r, "")
}

// Markdown writes the same as Markdown, with each shape's Kubernetes
// resources block.
func Markdown(w io.Writer, r *Result) error {
	head, rows := table(r)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)))
	for _, cells := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	if err := footer(w, r, "- "); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n<details><summary>Helm values for each shape</summary>\n\n```yaml\n")
	for _, c := range r.Configs {
		fmt.Fprintf(w, "# %s\nworkers: %d\nresources:\n  requests: {cpu: %q, memory: %s}\n  limits: {cpu: %q, memory: %s}\n",
			c.Name, c.Workers, formatCPUs(c.CPUs), formatMemory(c.MemoryMB), formatCPUs(c.CPUs), formatMemory(c.MemoryMB))
	}
	_, err := fmt.Fprintf(w, "```\n\n</details>\n")
	return err
}

func footer(w io.Writer, r *Result, prefix string) error {
	rowIs := "each row is the shape's last step"
	if r.Mode == "find" {
		rowIs = "each row is the step that confirmed the shape's edge (≥: no failure up to find's max)"
	}
	fmt.Fprintf(w, "\n%s`*` marks the highest throughput not OVERLOADED (nor INVALID, failed or past its SLO; among shapes that served all the load, the smallest), `(need)` the smallest shape holding --need; est. users = req/s ÷ %g req/s per user; %s\n", prefix, r.UsersPerRPS, rowIs)
	if r.Need > 0 && !hasNeeded(r) {
		fmt.Fprintf(w, "%sno shape held %s within its verdict and SLO\n", prefix, report.Rate(r.Need))
	}
	if r.Interrupted {
		fmt.Fprintf(w, "%sinterrupted: the shapes after the last row did not run (--resume runs them)\n", prefix)
	}
	fmt.Fprintf(w, "%slimits: %s\n", prefix, r.Limits)
	for _, l := range r.Lessons {
		fmt.Fprintf(w, "%s%s\n", prefix, l)
	}
	for _, c := range r.Configs {
		if c.Error != "" {
			fmt.Fprintf(w, "%s%s: %s\n", prefix, c.Name, c.Error)
		}
		for _, warn := range c.Warnings {
			fmt.Fprintf(w, "%s%s: %s\n", prefix, c.Name, warn)
		}
		if c.LogTail != "" && prefix == "" { // the Markdown keeps it to sweep.json
			fmt.Fprintf(w, "  its log ends:\n    %s\n", strings.ReplaceAll(c.LogTail, "\n", "\n    "))
		}
	}
	fmt.Fprintf(w, "%severy shape's own result: %s\n", prefix, resultsDir(r))
	_, err := fmt.Fprintf(w, "\n%s%s\n", prefix, outcomeLine(r))
	return err
}

// outcomeLine is the sweep's outcome in one line, as a run's report ends
// with its own: "PASSED", or the status in capitals and every reason.
func outcomeLine(r *Result) string {
	o := r.Outcome
	line := strings.ToUpper(strings.ReplaceAll(cmp.Or(o.Status, results.StatusFailed), "_", " "))
	var reasons []string
	for _, rs := range o.Reasons {
		reasons = append(reasons, rs.String())
	}
	if len(reasons) > 0 {
		line += ": " + strings.Join(reasons, "; ")
	}
	if !o.Strict {
		line += " (not strict: a shape that died or did not start fails nothing)"
	}
	return line
}

func hasNeeded(r *Result) bool {
	for _, c := range r.Configs {
		if c.Needed {
			return true
		}
	}
	return false
}

// resultsDir names where the shapes' result.json files are.
func resultsDir(r *Result) string {
	if len(r.Configs) == 0 {
		return "-"
	}
	return filepath.Join(filepath.Dir(filepath.Dir(r.Configs[0].Result)), "<shape id>", "result.json")
}

// Write prints the table (Markdown when md is set) to w, and writes the
// HTML report to html when it is not empty.
func Write(w io.Writer, r *Result, md bool, html string) error {
	render := Text
	if md {
		render = Markdown
	}
	if err := render(w, r); err != nil {
		return fmt.Errorf("write the table: %w", err)
	}
	if html != "" {
		return WriteHTML(html, r)
	}
	return nil
}

// optional formats a figure that may not have been measured ("-").
func optional(format string, v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}
