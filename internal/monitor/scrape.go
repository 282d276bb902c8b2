package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/ceiling-dev/ceiling/internal/secret"
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

// acceptHeader asks for the classic text format, which every exporter speaks
// and which parses fastest; other formats are decoded too if a server
// insists (OpenMetrics parses at about 2 ms a line here, so only a small
// OpenMetrics endpoint fits in a scrape's time).
const acceptHeader = `text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5,*/*;q=0.1`

// Scraper reads selected series from a Prometheus text endpoint. It is used
// by one goroutine at a time.
//
// A scrape is bounded in time (the timeout, covering the answer and its
// parsing), in size (MaxScrapeBytes, read in full before any parsing) and
// in what it keeps (MaxSeriesPerMetric series per selected metric, the
// same ones from scrape to scrape).
type Scraper struct {
	url     string
	shown   string // url with its secrets redacted, for messages
	sels    []selector
	wanted  map[string]bool // names of the lines the selectors may need
	client  *http.Client
	timeout time.Duration
	// maxBytes is MaxScrapeBytes and segment is segmentLines; tests lower
	// them.
	maxBytes int64
	segment  int

	table seriesTable

	// Reused from scrape to scrape.
	buf     []byte // the body, while it is no larger than keepBuffer
	key     []byte
	scratch []*dto.LabelPair
	qlabels []*dto.LabelPair
	qpair   dto.LabelPair
	// quantiles holds label values of quantiles, formatted once.
	quantiles map[float64]*string
}

// scraped is what one scrape kept.
type scraped struct {
	// values holds the kept series' values by id; NaN where a series was
	// not in this scrape.
	values []float64
	// added are the series first kept by this scrape; their ids follow
	// those known before it.
	added []seriesInfo
	// counts says, per selector, how many series it matched and dropped.
	counts []selCount
}

// NewScraper returns a Scraper of url keeping the series that metrics select.
// A selector is a metric name, which keeps all its series, optionally with
// label matchers: queue_depth{lane="chat"}. For a summary or a histogram,
// its name keeps its _sum and _count (and a summary's quantiles, which
// name{quantile="0.99"} picks one of), and name_sum or name_count keeps one.
// Values that are not finite (a quantile with no recent observations is
// NaN) are skipped. Each selector keeps at most MaxSeriesPerMetric series.
// Timeout bounds each scrape, from the request to the end of parsing; zero
// means DefaultScrapeTimeout.
func NewScraper(rawURL string, metrics []string, timeout time.Duration) (*Scraper, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", secret.URL(rawURL), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("scrape %s: want an http:// or https:// URL", secret.URL(rawURL))
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("scrape %s: no metrics named", secret.URL(rawURL))
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
		return nil, fmt.Errorf("scrape %s: %w", secret.URL(rawURL), err)
	}
	if timeout <= 0 {
		timeout = DefaultScrapeTimeout
	}
	// No keep-alive: one short connection a second costs the target little,
	// and leaves no idle connection (or goroutine) behind.
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	return &Scraper{
		url: rawURL, shown: secret.URL(rawURL), sels: sels, wanted: wantedNames(sels), client: &http.Client{Transport: tr},
		timeout: timeout, maxBytes: MaxScrapeBytes, segment: segmentLines, table: newSeriesTable(len(sels), MaxSeriesPerMetric),
	}, nil
}

// Scrape fetches the endpoint once and returns the selected series by their
// canonical name{label="value",...} (labels sorted by name). A selected
// metric that is absent is not an error: it is just not in the map.
func (s *Scraper) Scrape() (map[string]Point, error) {
	res, err := s.scrape(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]Point{}
	for id, v := range res.values {
		if !math.IsNaN(v) {
			info := s.table.infos[id]
			out[info.key] = Point{Value: v, Counter: info.counter}
		}
	}
	return out, nil
}

// scrape fetches and parses the endpoint once, within the timeout and
// ctx's deadline, whichever comes first. A failed scrape keeps nothing.
func (s *Scraper) scrape(ctx context.Context) (scraped, error) {
	// What the scrape was given: the timeout, or less when ctx ends first
	// (read before the clock moves on, so that the error says the timeout
	// as it was set).
	budget := s.timeout
	if d, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(d))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res := scraped{values: make([]float64, len(s.table.infos)), counts: make([]selCount, len(s.sels))}
	for i := range res.values {
		res.values[i] = math.NaN()
	}
	known := len(s.table.infos)
	if err := s.fetch(ctx, func(f *dto.MetricFamily) { s.keep(f, &res) }); err != nil {
		s.table.truncate(known) // the series first seen in a failed scrape are not kept
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			return scraped{}, fmt.Errorf("scrape %s: no complete answer within %v", s.shown, budget.Round(time.Millisecond))
		case errors.Is(err, errTooLarge):
			return scraped{}, fmt.Errorf("scrape %s: body larger than %s", s.shown, sizeText(s.maxBytes))
		}
		return scraped{}, fmt.Errorf("scrape %s: %w", s.shown, err)
	}
	res.added = s.table.infos[known:len(s.table.infos):len(s.table.infos)]
	return res, nil
}

// fetch gets the body, in full, and parses it, calling keep with each
// metric family.
func (s *Scraper) fetch(ctx context.Context, keep func(*dto.MetricFamily)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is said once, by scrape
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("status %s", resp.Status)
	}
	if resp.ContentLength > s.maxBytes {
		return errTooLarge
	}
	buf := s.buf
	if n := resp.ContentLength; n >= int64(cap(buf)) {
		buf = make([]byte, 0, n+1) // room for the read that finds the end
	}
	body, err := readBody(resp.Body, buf, s.maxBytes)
	defer func() {
		if s.buf = nil; cap(body) <= keepBuffer {
			s.buf = body[:0]
		}
	}()
	if err != nil {
		return err
	}
	return s.parse(ctx, body, expfmt.ResponseFormat(resp.Header), keep)
}

// parse decodes a whole body, calling keep with each metric family. The
// text formats go through a lineFilter, so that only the families the
// selectors may want are parsed (the classic one in segments, so that the
// parser's memory stays small), and every format through a ctxReader, so
// that parsing stops at the deadline.
func (s *Scraper) parse(ctx context.Context, body []byte, format expfmt.Format, keep func(*dto.MetricFamily)) error {
	if format == expfmt.FmtUnknown {
		format = expfmt.FmtText
	}
	var lines *lineFilter
	var r io.Reader
	switch format.FormatType() {
	case expfmt.TypeProtoDelim:
		r = bytes.NewReader(body)
	case expfmt.TypeOpenMetrics:
		lines = &lineFilter{body: body, wanted: s.wanted}
		r = lines
	default:
		lines = &lineFilter{body: body, wanted: s.wanted, blank: true, segment: s.segment}
		r = lines
	}
	for {
		dec := expfmt.NewDecoder(ctxReader{ctx: ctx, r: r}, format)
		for {
			var f dto.MetricFamily
			err := dec.Decode(&f)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if lines != nil && lines.err != nil {
					err = lines.err
				} else if lines != nil {
					err = lines.bodyLine(err)
				}
				return fmt.Errorf("parse the answer: %w", err)
			}
			keep(&f)
		}
		if lines == nil || !lines.next() {
			return nil
		}
	}
}

// keep files the series of f that a selector selects into res, each under
// the first selector that selects it.
func (s *Scraper) keep(f *dto.MetricFamily, res *scraped) {
	family := f.GetName()
	emit := func(name string, p Point, labels []*dto.LabelPair) {
		for i, sel := range s.sels {
			if !sel.matches(name, family, labels) {
				continue
			}
			res.counts[i].seen++
			s.key = appendCanonical(s.key[:0], &s.scratch, name, labels)
			id, ok := s.table.id(s.key, i, p.Counter)
			if !ok {
				res.counts[i].dropped++
				return
			}
			for len(res.values) <= id {
				res.values = append(res.values, math.NaN())
			}
			res.values[id] = p.Value
			return
		}
	}
	s.eachSeries(f, emit)
}

// sizeText writes a byte count in MB (2^20) or KB.
func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%g MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%g KB", float64(n)/(1<<10))
}
