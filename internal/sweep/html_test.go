package sweep

import (
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
)

const script = `<script>alert(1)</script>`

// htmlSample is a judged sweep of five shapes: one overloaded (faster
// than the best), one that failed to start with an error, one named with
// markup, and a lesson with markup.
func htmlSample() *Result {
	row := func(w int, cpus float64, mb int, rps, p95 float64, state string) Row {
		c := Config{Workers: w, CPUs: cpus, MemoryMB: mb}
		return Row{Name: c.Name(), ID: c.ID(), Workers: w, CPUs: cpus, MemoryMB: mb, Throughput: rps, PerCPU: rps / cpus, P95MS: p95, State: state, Limits: "cgroup v1", CPUsEffective: cpus,
			Result: filepath.Join("sweep", c.ID(), "result.json")}
	}
	r := &Result{Schema: Schema, Command: "ceiling sweep plan.yaml --configs '1@1/512m 2@2/1g'", StartedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		UsersPerRPS: 0.5, Limits: "cgroup v1", Configs: []Row{
			row(1, 1, 512, 200, 12, results.Healthy),
			row(2, 2, 1024, 410, 9, results.Stressed),
			row(8, 8, 4096, 900, 480, results.Overloaded),
			{Name: "9w / 9c / 9Gi", State: FailedToStart, Error: "the target exited: " + script},
			row(1, 1, 256, 150, 30, results.Healthy),
		}}
	r.Configs[4].Name = script
	r.judge()
	r.Lessons = append(r.Lessons, "a lesson "+script)
	return r
}

func sweepPage(t *testing.T, r *Result) string {
	t.Helper()
	var b strings.Builder
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	svgRe   = regexp.MustCompile(`(?s)<figure><figcaption>([^<]*)</figcaption>(<svg.*?</svg>)</figure>`)
	groupRe = regexp.MustCompile(`<g class="([^"]*)"><title>[^<]*</title>(.*?)</g>`)
	rectRe  = regexp.MustCompile(`<rect [^>]*width="([0-9.]+)"[^>]*fill="(#[0-9a-f]+)"/>`)
)

// The page has two bar charts, throughput and p95: one bar per shape in
// the table's order, lengths proportional to the values, the best shape
// alone in its own colour and labelled best, the shape that failed to
// start a label and no bar.
func TestHTMLCharts(t *testing.T) {
	r := htmlSample()
	figures := svgRe.FindAllStringSubmatch(sweepPage(t, r), -1)
	if len(figures) != 2 {
		t.Fatalf("the page has %d figures, want 2", len(figures))
	}
	for i, f := range figures {
		value := func(c Row) float64 { return c.Throughput }
		if i == 1 {
			value = func(c Row) float64 { return c.P95MS }
		}
		groups := groupRe.FindAllStringSubmatch(f[2], -1)
		if len(groups) != len(r.Configs) {
			t.Fatalf("%s: %d bars, want %d (one per shape)", f[1], len(groups), len(r.Configs))
		}
		// Scale: the length per unit of the largest value's bar.
		var scale, top float64
		widths := make([]float64, len(groups))
		fills := make([]string, len(groups))
		for j, g := range groups {
			m := rectRe.FindStringSubmatch(g[2])
			if (m == nil) != (r.Configs[j].State == FailedToStart) {
				t.Errorf("%s, %s: rect %v, want one unless it failed to start", f[1], r.Configs[j].Name, m != nil)
				continue
			}
			if m == nil {
				if g[1] != "bar missing" || !strings.Contains(g[2], ">9w / 9c / 9Gi</text>") || !strings.Contains(g[2], ">—</text>") {
					t.Errorf("%s: the failed shape is %q %s, want its label and —", f[1], g[1], g[2])
				}
				continue
			}
			widths[j], _ = strconv.ParseFloat(m[1], 64)
			fills[j] = m[2]
			if v := value(r.Configs[j]); v > top {
				scale, top = widths[j]/v, v
			}
		}
		for j, c := range r.Configs {
			if c.State == FailedToStart {
				continue
			}
			if want := value(c) * scale; math.Abs(widths[j]-want) > 0.1 {
				t.Errorf("%s, %s: bar %.1f long, want %.1f (proportional to %v)", f[1], c.Name, widths[j], want, value(c))
			}
			best := c.Best
			if (groups[j][1] == "bar best") != best || strings.Contains(groups[j][2], "best") != best {
				t.Errorf("%s, %s: class %q, body %s; best only on the best shape (%v)", f[1], c.Name, groups[j][1], groups[j][2], best)
			}
			for k, other := range r.Configs {
				if k == j || other.State == FailedToStart {
					continue
				}
				if same := fills[j] == fills[k]; same == (best || other.Best) {
					t.Errorf("%s: %s is %s, %s is %s; want the best alone in its own colour", f[1], c.Name, fills[j], other.Name, fills[k])
				}
			}
		}
	}
	if !r.Configs[1].Best {
		t.Fatalf("the sample's best is not 2w / 2c / 1Gi: %+v", r.Configs)
	}
}

// The page holds Text's table, row for row, and its notes; nothing from a
// shape's name, an error or a lesson is markup.
func TestHTMLPage(t *testing.T) {
	r := htmlSample()
	page := sweepPage(t, r)
	var head strings.Builder
	for _, h := range header {
		head.WriteString("<th>" + h + "</th>")
	}
	want := []string{"<title>ceiling sweep</title>", "<pre>ceiling sweep plan.yaml --configs &#39;1@1/512m 2@2/1g&#39;</pre>", head.String(),
		"<tr><td>* 2w / 2c / 1Gi</td><td>410/s</td><td>205/s</td>", "<li>limits: cgroup v1</li>",
		"<li>a lesson &lt;script&gt;", "<li>9w / 9c / 9Gi: the target exited: &lt;script&gt;"}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if n := strings.Count(page, "<tr><td>"); n != len(r.Configs) {
		t.Errorf("the table has %d rows, want %d", n, len(r.Configs))
	}
	for _, c := range r.Configs {
		cells := c.cells()
		for i := range cells {
			cells[i] = html.EscapeString(cells[i])
		}
		if row := "<tr><td>" + strings.Join(cells, "</td><td>") + "</td></tr>"; !strings.Contains(page, row) {
			t.Errorf("the page lacks Text's row %s", row)
		}
	}
	for _, bad := range []string{"<script", "src=\"http", "href=\"http"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 5 { // the row, two bars' labels and tooltips, the lesson, the error
		t.Errorf("the markup appears escaped %d times, want at least 5", n)
	}
}

// WriteHTML leaves the whole page alone at path, or an error.
func TestWriteHTML(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sweep.html")
	r := htmlSample()
	for range 2 {
		if err := WriteHTML(path, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if err != nil || string(got) != sweepPage(t, r) || len(entries) != 1 {
		t.Errorf("WriteHTML left %d files, page %d bytes (err %v); want HTML's page alone", len(entries), len(got), err)
	}
	if err := WriteHTML(filepath.Join(dir, "missing", "sweep.html"), r); err == nil {
		t.Errorf("WriteHTML into a missing folder = nil, want an error")
	}
}
