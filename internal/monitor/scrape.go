package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Point is one scraped value of one series.
type Point struct {
	// Value is the series' value.
	Value float64
	// Counter is true for counters (and a summary's or histogram's _sum and
	// _count), whose rate is what matters; false for gauges and untyped.
	Counter bool
}

// DefaultScrapeTimeout bounds one scrape when NewScraper is given zero.
const DefaultScrapeTimeout = time.Second

// maxScrapeBytes caps a scraped body.
const maxScrapeBytes = 16 << 20

// acceptHeader asks for the classic text format, which every exporter speaks;
// other formats are decoded too if a server insists.
const acceptHeader = `text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5,*/*;q=0.1`

// Scraper reads selected series from a Prometheus text endpoint. It is used
// by one goroutine at a time.
type Scraper struct {
	url    string
	sels   []selector
	client *http.Client
}

// NewScraper returns a Scraper of url keeping the series that metrics select.
// A selector is a metric name, which keeps all its series, optionally with
// label matchers: queue_depth{lane="chat"}. For a summary or a histogram,
// its name keeps its _sum and _count (and a summary's quantiles, which
// name{quantile="0.99"} picks one of), and name_sum or name_count keeps one.
// Values that are not finite (a quantile with no recent observations is
// NaN) are skipped.
// Timeout bounds each scrape; zero means DefaultScrapeTimeout.
func NewScraper(rawURL string, metrics []string, timeout time.Duration) (*Scraper, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", rawURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("scrape %s: want an http:// or https:// URL", rawURL)
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("scrape %s: no metrics named", rawURL)
	}
	var errs []error
	sels := make([]selector, 0, len(metrics))
	for _, m := range metrics {
		s, err := parseSelector(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sels = append(sels, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("scrape %s: %w", rawURL, err)
	}
	if timeout <= 0 {
		timeout = DefaultScrapeTimeout
	}
	// No keep-alive: one short connection a second costs the target little,
	// and leaves no idle connection (or goroutine) behind.
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	return &Scraper{url: rawURL, sels: sels, client: &http.Client{Transport: tr, Timeout: timeout}}, nil
}

// Scrape fetches the endpoint once and returns the selected series by their
// canonical name{label="value",...} (labels sorted by name). A selected
// metric that is absent is not an error: it is just not in the map.
func (s *Scraper) Scrape() (map[string]Point, error) {
	return s.scrape(context.Background())
}

func (s *Scraper) scrape(ctx context.Context) (map[string]Point, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scrape %s: status %s", s.url, resp.Status)
	}
	format := expfmt.ResponseFormat(resp.Header)
	if format == expfmt.FmtUnknown {
		format = expfmt.FmtText
	}
	dec := expfmt.NewDecoder(io.LimitReader(resp.Body, maxScrapeBytes), format)
	out := map[string]Point{}
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", s.url, err)
		}
		s.keep(&f, out)
	}
}

// keep adds the series of f that some selector selects to out.
func (s *Scraper) keep(f *dto.MetricFamily, out map[string]Point) {
	name := f.GetName()
	for _, m := range f.GetMetric() {
		for _, sr := range seriesOf(name, f.GetType(), m) {
			if math.IsNaN(sr.p.Value) || math.IsInf(sr.p.Value, 0) {
				continue // a quantile with no recent observations: nothing to keep
			}
			labels := m.GetLabel()
			if sr.labels != nil {
				labels = sr.labels
			}
			for _, sel := range s.sels {
				if sel.matches(sr.name, name, labels) {
					out[canonical(sr.name, labels)] = sr.p
					break
				}
			}
		}
	}
}

// named is one series of a metric: its name, its point, and its labels
// when they are not the metric's own (a summary's quantiles).
type named struct {
	name   string
	p      Point
	labels []*dto.LabelPair
}

// seriesOf returns the plain series of one metric of a family: one for a
// counter, gauge or untyped metric; _sum and _count for a summary or a
// histogram, and a summary's quantiles as gauges labelled quantile="0.99"
// (a histogram's buckets are not kept).
func seriesOf(family string, t dto.MetricType, m *dto.Metric) []named {
	switch t {
	case dto.MetricType_COUNTER:
		return []named{{name: family, p: Point{m.GetCounter().GetValue(), true}}}
	case dto.MetricType_GAUGE:
		return []named{{name: family, p: Point{Value: m.GetGauge().GetValue()}}}
	case dto.MetricType_UNTYPED:
		return []named{{name: family, p: Point{Value: m.GetUntyped().GetValue()}}}
	case dto.MetricType_SUMMARY:
		sm := m.GetSummary()
		out := []named{
			{name: family + "_sum", p: Point{sm.GetSampleSum(), true}},
			{name: family + "_count", p: Point{float64(sm.GetSampleCount()), true}},
		}
		for _, q := range sm.GetQuantile() {
			name, value := "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)
			labels := append(slices.Clone(m.GetLabel()), &dto.LabelPair{Name: &name, Value: &value})
			out = append(out, named{name: family, p: Point{Value: q.GetValue()}, labels: labels})
		}
		return out
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		return []named{
			{name: family + "_sum", p: Point{h.GetSampleSum(), true}},
			{name: family + "_count", p: Point{float64(h.GetSampleCount()), true}},
		}
	}
	return nil
}

// canonical writes a series key: name{a="x",b="y"} with labels sorted by
// name and values escaped as in the text format; just name without labels.
func canonical(name string, labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return name
	}
	ls := slices.Clone(labels)
	slices.SortFunc(ls, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.GetName())
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(l.GetValue()))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
