package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// A metrics table with many series renders every series once, in name
// order, and a step without a series shows "-". (It used to look each name
// up in a list per step: quadratic, minutes with 100,000 series.)
func TestMetricTableManySeries(t *testing.T) {
	const series = 20000
	r := sample()
	for i := range 2 { // the third step keeps the sample's target, without metrics
		m := make(map[string]results.Metric, series+1)
		for k := range series {
			m[fmt.Sprintf(`big{id="%05d"}`, k)] = results.Metric{Last: 1, Max: float64(k + i), Mean: 1}
		}
		m["served_total"] = results.Metric{Last: 100, Max: 100, Mean: 50, Rate: 12.5 * float64(i+1), Counter: true}
		r.Steps[i].Target = &results.Target{Samples: 30, CPUPct: 20, RSSMB: 50, Metrics: m}
	}
	head, rows := metricRows(r)
	if len(head) != 2+series+1 || len(rows) != 3 {
		t.Fatalf("metricRows = %d columns, %d rows; want %d columns, 3 rows", len(head), len(rows), 2+series+1)
	}
	if head[2] != `big{id="00000"} max` || head[2+series-1] != fmt.Sprintf(`big{id="%05d"} max`, series-1) || head[2+series] != "served_total /s" {
		t.Errorf("metricRows head = %q, %q … %q, want the series in name order, the counter as a rate", head[2], head[2+series-1], head[2+series])
	}
	if got := rows[1][2+series-1]; got != "20000" {
		t.Errorf("step 2's last big series = %q, want its max %d as 20000", got, series)
	}
	if got := rows[1][2+series]; got != "25" {
		t.Errorf("step 2's served_total = %q, want its rate 25", got)
	}
	for i, c := range rows[2][2:] {
		if c != "-" {
			t.Fatalf("step 3 (no metrics) column %q = %q, want -", head[2+i], c)
		}
	}
	var b bytes.Buffer
	Text(&b, r)
	if !strings.Contains(b.String(), `big{id="19999"} max`) || strings.Count(b.String(), "served_total /s") != 1 {
		t.Errorf("Text lacks the last series' column, or names served_total twice")
	}
}

// A target whose metrics endpoint alone was read (no process or cgroup)
// has no CPU or memory figures: they show "-", never "0%" and "0 MB".
func TestScrapedOnlyShowsNoCPU(t *testing.T) {
	r := sample()
	r.Steps[0].Target = &results.Target{Samples: 30, Metrics: map[string]results.Metric{"queue_depth": {Last: 3, Max: 5, Mean: 4}}}
	r.Steps[1].Target = &results.Target{Samples: 30} // every scrape failed
	rs := rows(r)
	cols := columnsOf(r)
	cpu := -1
	for i, c := range cols {
		if c == "cpu" {
			cpu = i
		}
	}
	if cpu < 0 {
		t.Fatalf("columns = %q, want cpu and rss (step 3 measured them)", cols)
	}
	for i, want := range [][2]string{{"-", "-"}, {"-", "-"}, {"61%", "112 MB"}} {
		if got := [2]string{rs[i][cpu], rs[i][cpu+1]}; got != want {
			t.Errorf("step %d cpu, rss = %q, want %q", i+1, got, want)
		}
	}
	r.Steps[2].Target = nil
	if cols := columnsOf(r); strings.Contains(strings.Join(cols, " "), "cpu") {
		t.Errorf("columns of a run that only scraped = %q, want no cpu or rss", cols)
	}
}

// Scraped values read in their unit: seconds as µs/ms/s, bytes as KB/MB,
// other numbers with three significant digits, never 5.347e-05.
func TestMetricValue(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float64
		want string
	}{
		{`demo_save_seconds{quantile="0.99"}`, 5.347e-05, "53.5 µs"},
		{"demo_save_seconds", 0.0082, "8.20 ms"},
		{"demo_save_seconds", 1.5, "1.50 s"},
		{"gc_seconds_total", 0.000999, "999 µs"},
		{"gc_seconds_total", 0.0009996, "1.00 ms"},
		{"heap_bytes", 512, "512 B"},
		{"heap_bytes", 8500, "8.50 KB"},
		{`sent_bytes_total{code="200"}`, 1.2e6, "1.20 MB"},
		{"demo_queue_depth", 412, "412"},
		{"demo_queue_depth", 20000, "20000"},
		{"ratio", 0.5347, "0.535"},
		{"ratio", 5.347e-05, "0.0000535"},
		{"requests", 1234567, "1.23M"},
		{"load", 12.26, "12.3"},
		{"load", 999.96, "1000"},
		{"load", -3.5, "-3.50"},
		{"anything_seconds", 0, "0"},
	} {
		if got := MetricValue(c.name, c.v); got != c.want {
			t.Errorf("MetricValue(%s, %g) = %q, want %q", c.name, c.v, got, c.want)
		}
	}
}

// The metrics table in text, Markdown and HTML shows a scraped duration in
// its unit.
func TestMetricTableUnits(t *testing.T) {
	r := sample()
	r.Steps[0].Target = &results.Target{Samples: 3, Metrics: map[string]results.Metric{`demo_save_seconds{quantile="0.99"}`: {Last: 5e-5, Max: 5.347e-05}}}
	for name, render := range map[string]func(io.Writer, *results.Result) error{"text": Text, "md": Markdown, "html": HTML} {
		var b bytes.Buffer
		if err := render(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "53.5 µs") || strings.Contains(b.String(), "e-05") {
			t.Errorf("%s: the metrics table lacks 53.5 µs (or prints an exponent)", name)
		}
	}
}
