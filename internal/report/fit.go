package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// quietColumns are the step table's columns that say nothing when every
// step has the same empty cell (nothing limited, nothing late): the first
// left out of a table too wide for the terminal.
var quietColumns = []struct{ name, empty string }{{"limited", "0%"}, {"late", "0"}}

// dropOrder is the order in which the step table leaves columns out to fit
// a terminal (TextWidth), after the quiet ones and after the errors and
// late cells lose their details: the least telling first. step, target,
// p99, errors, delivered, slo and verdict are never left out, nor is a
// column that an SLO term of the run judges (p95 with p95<100ms).
var dropOrder = []string{"max", "p95", "delivery p50/p99", "rss", "sockets", "late", "limited", "p50", "achieved", "cpu"}

// judgedColumns names the step table's columns that the run's SLO terms judge
// (terms of the whole step: a scenario's are not in this table).
func judgedColumns(r *results.Result) map[string]bool {
	column := map[string]string{
		"p50": "p50", "p95": "p95", "p99": "p99", "max": "max", "errors": "errors", "limited": "limited",
		"rate": "achieved", "throughput": "achieved", "delivered": "delivered",
		"delivery_p50": "delivery p50/p99", "delivery_p99": "delivery p50/p99",
	}
	out := map[string]bool{}
	for _, th := range r.Thresholds {
		terms, err := slo.Parse(th.Expr)
		if err != nil {
			continue
		}
		for _, t := range terms {
			if t.Scenario == "" && column[t.Metric] != "" {
				out[column[t.Metric]] = true
			}
		}
	}
	return out
}

// stepTable is the step table as the terminal shows it: its head, its
// rows (a step's, or a login line under it, as many cells as the head)
// and, once fitted, what was left out to fit.
type stepTable struct {
	head []string
	rows [][]string
	// left names the columns fit left out; cut says, by column, how its
	// cells lost their details.
	left []string
	cut  map[string]string
	// wrap is the width of the last column's text, in runes, past which it
	// continues on lines of its own (0: never).
	wrap int
}

// width is the table's width in runes, its last column unwrapped.
func (t *stepTable) width() int {
	w := 2 * (len(t.head) - 1)
	for i := range t.head {
		w += t.columnWidth(i)
	}
	return w
}

func (t *stepTable) columnWidth(i int) int {
	w := utf8.RuneCountInString(t.head[i])
	for _, row := range t.rows {
		w = max(w, utf8.RuneCountInString(row[i]))
	}
	return w
}

// drop leaves out the column named name, if the table has it, and says so.
func (t *stepTable) drop(name string) {
	i := slices.Index(t.head, name)
	if i < 0 {
		return
	}
	t.head = slices.Delete(slices.Clone(t.head), i, i+1)
	for j, row := range t.rows {
		t.rows[j] = slices.Delete(slices.Clone(row), i, i+1)
	}
	t.left = append(t.left, name)
	delete(t.cut, name)
}

// shorten cuts the details in parentheses off the cells of the column
// named name ("16.7% (http_5xx 3000, …)" becomes "16.7%"), and says so
// with what when a cell had any.
func (t *stepTable) shorten(name, what string) {
	i := slices.Index(t.head, name)
	if i < 0 {
		return
	}
	cut := false
	for _, row := range t.rows {
		if short, _, ok := strings.Cut(row[i], " ("); ok {
			row[i], cut = short, true
		}
	}
	if cut {
		if t.cut == nil {
			t.cut = map[string]string{}
		}
		t.cut[name] = what
	}
}

// fit makes the table at most width runes wide (0: no limit), in this
// order until it fits: it leaves out the quiet columns, cuts the details
// of the errors and late cells, leaves out columns in dropOrder (keeping
// those in keep), then wraps the last column (the verdict and its reason)
// onto lines of its own. A table that cannot fit even so (a terminal
// narrower than its kept columns) is printed as wide as it must be.
func (t *stepTable) fit(width int, keep map[string]bool) {
	if width <= 0 || t.width() <= width {
		return
	}
	for _, q := range quietColumns {
		i := slices.Index(t.head, q.name)
		if i >= 0 && !keep[q.name] && !slices.ContainsFunc(t.rows, func(row []string) bool { return row[i] != q.empty && row[i] != "-" }) {
			t.drop(q.name)
		}
	}
	steps := []func(){
		func() { t.shorten("errors", "errors without their classes") },
		func() { t.shorten("late", "late without the worst lag") },
	}
	for _, name := range dropOrder {
		if !keep[name] {
			steps = append(steps, func() { t.drop(name) })
		}
	}
	for _, step := range steps {
		if t.width() <= width {
			return
		}
		step()
	}
	last := len(t.head) - 1
	if rest := t.width() - t.columnWidth(last); width-rest >= 12 {
		t.wrap = max(width-rest, utf8.RuneCountInString(t.head[last]))
	}
}

// print writes the table, columns aligned: the first and the last
// left-aligned, the others right-aligned; a last cell longer than t.wrap
// continues on lines of its own, under its column. Then, when fit left
// something out, a line that says what and how to see it.
func (t *stepTable) print(w io.Writer, width int) {
	widths := make([]int, len(t.head))
	for i := range t.head {
		widths[i] = t.columnWidth(i)
	}
	last := len(t.head) - 1
	if t.wrap > 0 {
		widths[last] = t.wrap
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := widths[i] - utf8.RuneCountInString(c)
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 0 || i == last {
				b.WriteString(c + strings.Repeat(" ", max(0, pad)))
			} else {
				b.WriteString(strings.Repeat(" ", max(0, pad)) + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, row := range append([][]string{t.head}, t.rows...) {
		pieces := []string{row[last]}
		if t.wrap > 0 {
			pieces = wrapText(row[last], t.wrap)
		}
		cells := slices.Clone(row)
		for k, piece := range pieces {
			if k > 0 {
				cells = make([]string, len(row))
			}
			cells[last] = piece
			line(cells)
		}
	}
	if len(t.left)+len(t.cut) == 0 {
		return
	}
	note := fmt.Sprintf("(fitted to %d columns:", width)
	if len(t.left) > 0 {
		note += " left out " + list(t.left) + ";"
	}
	for _, name := range slices.Sorted(maps.Keys(t.cut)) {
		note += " " + t.cut[name] + ";"
	}
	for _, line := range wrapText(note+" --wide shows every column)", max(width, 40)) {
		fmt.Fprintln(w, line)
	}
}

// list joins items as a sentence does: "a", "a and b", "a, b and c".
func list(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// wrapText breaks s at spaces into lines of at most n runes; a word longer
// than n stays whole on its own line.
func wrapText(s string, n int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= n:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	return append(lines, cur)
}
