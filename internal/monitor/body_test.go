package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"pgregory.net/rapid"
)

func TestReadBody(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		max     int64
		wantErr error
	}{
		{"empty", 0, 10, nil},
		{"under the limit", 9, 10, nil},
		{"at the limit", 10, 10, nil},
		{"one byte over", 11, 10, errTooLarge},
		{"far over", 1 << 20, 1000, errTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Repeat([]byte("x"), tc.size)
			got, err := readBody(iotest.HalfReader(bytes.NewReader(in)), make([]byte, 0, 3), tc.max)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("readBody(%d bytes, max %d) = %v, want %v", tc.size, tc.max, err, tc.wantErr)
			}
			if int64(len(got)) > tc.max+1 {
				t.Errorf("readBody(%d bytes, max %d) read %d bytes, want at most one past the limit", tc.size, tc.max, len(got))
			}
			if err == nil && !bytes.Equal(got, in) {
				t.Errorf("readBody(%d bytes) = %d bytes, want them all", tc.size, len(got))
			}
		})
	}
}

// The filter leaves out the families no selector may want, keeps the
// line numbers of the classic text format, and passes what it cannot read
// to the parser.
func TestLineFilter(t *testing.T) {
	body := `# HELP other_metric Not selected.
# TYPE other_metric gauge
other_metric 1
# a plain comment
# TYPE requests_total counter
requests_total{code="200"} 5
# TYPE latency_seconds summary
latency_seconds{quantile="0.5"} 0.1
latency_seconds_sum 3
latency_seconds_count 30
  queue_depth 4
<html>
{"utf8.name"} 2
# EOF
`
	sels := []selector{{name: "requests_total"}, {name: "latency_seconds_count"}, {name: "queue_depth"}}
	want := `



# TYPE requests_total counter
requests_total{code="200"} 5
# TYPE latency_seconds summary
latency_seconds{quantile="0.5"} 0.1
latency_seconds_sum 3
latency_seconds_count 30
  queue_depth 4
<html>
{"utf8.name"} 2
# EOF
`
	got, err := io.ReadAll(&lineFilter{body: []byte(body), wanted: wantedNames(sels), blank: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("filtered body mismatch (-want +got):\n%s", d)
	}
	// Without blanks (OpenMetrics) the lines left out are just gone.
	got, _ = io.ReadAll(&lineFilter{body: []byte(body), wanted: wantedNames(sels)})
	if d := cmp.Diff(strings.TrimLeft(want, "\n"), string(got)); d != "" {
		t.Errorf("filtered body without blanks mismatch (-want +got):\n%s", d)
	}
}

// An OpenMetrics answer is filtered and decoded too; its parser names a
// counter's family with its _total, as the classic format does.
func TestScrapeOpenMetrics(t *testing.T) {
	body := "# TYPE jobs counter\njobs_total{lane=\"a\"} 4\njobs_created{lane=\"a\"} 1.7e9\n# TYPE other gauge\nother 1\n# TYPE depth gauge\ndepth 3\n# EOF\n"
	srv := &promServer{bodies: []string{body}, contentType: "application/openmetrics-text; version=1.0.0; charset=utf-8"}
	s := newScraper(t, serveProm(t, srv), "jobs_total", "depth")
	got, err := s.Scrape()
	if err != nil {
		t.Fatalf("Scrape() = %v", err)
	}
	want := map[string]Point{`jobs_total{lane="a"}`: {4, true}, "depth": {Value: 3}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Scrape() mismatch (-want +got):\n%s", d)
	}
}

// FuzzScrapeBody checks that no body makes parsing panic, that the filter hands
// over only whole lines of the body in order, and that a scrape keeps at
// most its limit of series.
func FuzzScrapeBody(f *testing.F) {
	for _, s := range []string{exposition, manySeries(3), "# EOF\n", "<html>", "a{b=\"c\"} 1\nd 2", "\x00\n\n#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		s, err := NewScraper("http://127.0.0.1:1/metrics", []string{"big", "queue_depth", "latency_seconds"}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		s.table.max = 2
		filtered, err := io.ReadAll(&lineFilter{body: []byte(body), wanted: s.wanted})
		if err == nil {
			rest := body
			for _, line := range strings.SplitAfter(string(filtered), "\n") {
				i := strings.Index(rest, line)
				if i < 0 {
					t.Fatalf("filtered line %q is not in the rest of the body %q", line, rest)
				}
				rest = rest[i+len(line):]
			}
		}
		// The classic text format only: the OpenMetrics parser is far too
		// slow for fuzzing (TestScrapeSlowParse bounds it instead).
		for _, format := range []expfmt.Format{expfmt.FmtText} {
			res := scraped{counts: make([]selCount, len(s.sels))}
			if err := s.parse(context.Background(), []byte(body), format, func(f *dto.MetricFamily) { s.keep(f, &res) }); err != nil {
				continue
			}
			for i, n := range s.table.perSel {
				if n > 2 {
					t.Fatalf("selector %d keeps %d series, want at most 2", i, n)
				}
			}
		}
	})
}

// exposition draws a valid classic text body: families of every type, some
// without a TYPE line, with a few series each.
func drawExposition(t *rapid.T) string {
	var b strings.Builder
	types := []string{"gauge", "counter", "untyped", "summary", "histogram", ""}
	for i := range rapid.IntRange(0, 8).Draw(t, "families") {
		name := fmt.Sprintf("%s_%d", rapid.SampledFrom([]string{"big", "small", "other"}).Draw(t, "name"), i)
		typ := rapid.SampledFrom(types).Draw(t, "type")
		if rapid.Bool().Draw(t, "help") {
			fmt.Fprintf(&b, "# HELP %s Some help.\n", name)
		}
		if typ != "" {
			fmt.Fprintf(&b, "# TYPE %s %s\n", name, typ)
		}
		for k := range rapid.IntRange(0, 12).Draw(t, "series") {
			labels := fmt.Sprintf(`{k="%d"}`, k)
			v := rapid.IntRange(0, 100).Draw(t, "v")
			switch typ {
			case "summary":
				fmt.Fprintf(&b, "%s{k=\"%d\",quantile=\"0.5\"} %d\n%s_sum%s %d\n%s_count%s %d\n", name, k, v, name, labels, v*2, name, labels, v)
			case "histogram":
				fmt.Fprintf(&b, "%s_bucket{k=\"%d\",le=\"+Inf\"} %d\n%s_sum%s %d\n%s_count%s %d\n", name, k, v, name, labels, v*2, name, labels, v)
			default:
				fmt.Fprintf(&b, "%s%s %d\n", name, labels, v)
			}
		}
	}
	return b.String()
}

// Parsing in segments keeps the same series as parsing a body at once.
func TestParseSegments(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := drawExposition(t)
		var sels []string
		for i := range 8 {
			sels = append(sels, fmt.Sprintf("big_%d", i), fmt.Sprintf("small_%d_sum", i))
		}
		scrapeWith := func(segment int) (map[string]Point, error) {
			s, err := NewScraper("http://127.0.0.1:1/metrics", sels, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			s.segment = segment
			res := scraped{counts: make([]selCount, len(s.sels))}
			if err := s.parse(context.Background(), []byte(body), expfmt.FmtText, func(f *dto.MetricFamily) { s.keep(f, &res) }); err != nil {
				return nil, err
			}
			out := map[string]Point{}
			for id, v := range res.values {
				if !math.IsNaN(v) {
					out[s.table.infos[id].key] = Point{v, s.table.infos[id].counter}
				}
			}
			return out, nil
		}
		whole, err := scrapeWith(0)
		if err != nil {
			t.Fatalf("parse at once: %v\n%s", err, body)
		}
		segmented, err := scrapeWith(rapid.IntRange(1, 5).Draw(t, "segment"))
		if err != nil {
			t.Fatalf("parse in segments: %v\n%s", err, body)
		}
		if d := cmp.Diff(whole, segmented); d != "" {
			t.Fatalf("segments mismatch (-at once +in segments):\n%s\n%s", d, body)
		}
	})
}

// A parse error names the body's line, whichever segment it is in.
func TestParseSegmentsLineNumbers(t *testing.T) {
	body := "# TYPE big gauge\nbig{k=\"1\"} 1\nbig{k=\"2\"} 2\nother 5\nbig{k=\"3\"} 3\nbig{k=\"4\"} four\n"
	s := newScraper(t, "http://127.0.0.1:1/metrics", "big")
	s.segment = 1
	err := s.parse(context.Background(), []byte(body), expfmt.FmtText, func(*dto.MetricFamily) {})
	if err == nil || !strings.Contains(err.Error(), "line 6:") {
		t.Errorf("parse(a bad value on line 6, in segments of 1) = %v, want an error on line 6", err)
	}
}
