package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// narrowSample is findSample with an overloaded step that has late
// arrivals and a verdict with its reason: every kind of cell fit touches.
func narrowSample() *results.Result {
	r := findSample()
	s := &r.Steps[2]
	s.Verdict, s.VerdictReason = results.Overloaded, "errors 16.7% > 1.0%"
	s.Late, s.MaxLagMS = 35, 31.5
	return r
}

// The step table fitted to a narrow terminal, as golden files: at 100
// columns the run's sample loses the columns that say least and its
// errors' classes; at 80 the find's keeps step, target, p99, errors,
// delivered, slo and verdict, wraps the verdict's reason under its
// column, and says what it left out.
func TestTextWidthGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		r     *results.Result
		width int
	}{
		{"table_width100.txt", sample(), 100},
		{"find_width80.txt", narrowSample(), 80},
	} {
		var b bytes.Buffer
		if err := TextWidth(&b, tt.r, tt.width); err != nil {
			t.Fatal(err)
		}
		golden(t, tt.name, b.Bytes())
	}
}

// stepLines returns the step table's lines of Text's output: from its
// head to the first empty line.
func stepLines(out string) []string {
	lines := strings.Split(out, "\n")
	end := slices.Index(lines, "")
	return lines[:end]
}

// At any width the table can fit, every line of it (the note under it
// included) is at most that wide; the columns that are never left out
// are there, and so is one an SLO term judges; with no width, or a wide
// one, the table is Text's, whole.
func TestTextWidthFits(t *testing.T) {
	var whole bytes.Buffer
	Text(&whole, narrowSample())
	full := stepLines(whole.String())
	fullWidth := 0
	for _, l := range full {
		fullWidth = max(fullWidth, utf8.RuneCountInString(l))
	}
	for _, width := range []int{0, fullWidth, fullWidth + 50} {
		var b bytes.Buffer
		TextWidth(&b, narrowSample(), width)
		if b.String() != whole.String() {
			t.Errorf("TextWidth(%d) differs from Text:\n%s", width, b.String())
		}
	}
	for width := 80; width < fullWidth; width += 7 {
		r := narrowSample()
		r.Thresholds = append(r.Thresholds, results.Threshold{Expr: "p95<10ms", OK: true})
		var b bytes.Buffer
		TextWidth(&b, r, width)
		lines := stepLines(b.String())
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d runes: %q", width, n, l)
			}
		}
		head := strings.Fields(lines[0])
		for _, col := range []string{"step", "target", "p95", "p99", "errors", "delivered", "slo", "verdict"} {
			if !slices.Contains(head, col) {
				t.Errorf("width %d: head %q has no %s", width, head, col)
			}
		}
		if note := strings.Join(lines[len(lines)-2:], " "); !strings.Contains(note, "--wide shows every column") {
			t.Errorf("width %d: the table does not say what it left out:\n%s", width, strings.Join(lines, "\n"))
		}
		if words := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); !strings.Contains(words, "FAIL OVERLOADED (errors 16.7% > 1.0%) 4 ") {
			t.Errorf("width %d: the verdict or its reason is lost:\n%s", width, strings.Join(lines, "\n"))
		}
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"OVERLOADED (errors 16.7% > 1.0%)", 14, []string{"OVERLOADED", "(errors 16.7%", "> 1.0%)"}},
		{"HEALTHY", 3, []string{"HEALTHY"}},
		{"", 10, []string{""}},
		{"a b c", 10, []string{"a b c"}},
	}
	for _, tt := range tests {
		if got := wrapText(tt.in, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("wrapText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
