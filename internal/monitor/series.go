package monitor

import (
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// MaxSeriesPerMetric is the most series kept of one selected metric (one
// entry of the metrics list). The first ones seen are kept for the whole
// run; a series first seen once the metric has this many is dropped, and
// the figures say how many were. A metric with 100,000 label sets would
// otherwise cost megabytes a second and tables nobody can read.
const MaxSeriesPerMetric = 1000

// seriesInfo is what is known of one kept series.
type seriesInfo struct {
	// key is the series' canonical name{labels}.
	key string
	// sel is the index of the selector that keeps it.
	sel int
	// counter is true for counters, whose rate is what matters.
	counter bool
}

// selCount is what one scrape found for one selector.
type selCount struct {
	// seen counts the series the selector matched, kept or not.
	seen int
	// dropped counts those not kept: first seen once the selector already
	// had MaxSeriesPerMetric.
	dropped int
}

// seriesTable gives each kept series an id, 0, 1, 2..., for the whole
// run; ids index a reading's values. It keeps at most max series per
// selector, so it is bounded however many series an endpoint has.
type seriesTable struct {
	max    int
	ids    map[string]int
	infos  []seriesInfo
	perSel []int // kept series per selector
}

func newSeriesTable(selectors, max int) seriesTable {
	return seriesTable{max: max, ids: map[string]int{}, perSel: make([]int, selectors)}
}

// id returns the id of the series whose canonical key is key, kept by
// selector sel, adding it if the selector has room; ok is false when it is
// dropped. key is copied only when the series is added.
func (t *seriesTable) id(key []byte, sel int, counter bool) (id int, ok bool) {
	if id, ok := t.ids[string(key)]; ok { // no allocation for the lookup
		return id, true
	}
	if t.perSel[sel] >= t.max {
		return 0, false
	}
	id = len(t.infos)
	info := seriesInfo{key: string(key), sel: sel, counter: counter}
	t.ids[info.key] = id
	t.infos = append(t.infos, info)
	t.perSel[sel]++
	return id, true
}

// truncate forgets the series added since the table had n, as if they
// had never been seen.
func (t *seriesTable) truncate(n int) {
	for _, info := range t.infos[n:] {
		delete(t.ids, info.key)
		t.perSel[info.sel]--
	}
	clear(t.infos[n:])
	t.infos = t.infos[:n]
}

// eachSeries calls emit with the plain series of each metric of a family:
// one for a counter, gauge or untyped metric; _sum and _count for a summary
// or a histogram, and a summary's quantiles as gauges labelled
// quantile="0.99" (a histogram's buckets are not kept). Values that are not
// finite (a quantile with no recent observations is NaN) are skipped.
// labels is valid only during the call: emit must not keep it.
func (s *Scraper) eachSeries(f *dto.MetricFamily, emit func(name string, p Point, labels []*dto.LabelPair)) {
	call := func(name string, p Point, labels []*dto.LabelPair) {
		if !math.IsNaN(p.Value) && !math.IsInf(p.Value, 0) {
			emit(name, p, labels)
		}
	}
	family, t := f.GetName(), f.GetType()
	var sum, count string
	switch t {
	case dto.MetricType_SUMMARY, dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		sum, count = family+"_sum", family+"_count"
	}
	for _, m := range f.GetMetric() {
		labels := m.GetLabel()
		switch t {
		case dto.MetricType_COUNTER:
			call(family, Point{m.GetCounter().GetValue(), true}, labels)
		case dto.MetricType_GAUGE:
			call(family, Point{Value: m.GetGauge().GetValue()}, labels)
		case dto.MetricType_UNTYPED:
			call(family, Point{Value: m.GetUntyped().GetValue()}, labels)
		case dto.MetricType_SUMMARY:
			sm := m.GetSummary()
			call(sum, Point{sm.GetSampleSum(), true}, labels)
			call(count, Point{float64(sm.GetSampleCount()), true}, labels)
			for _, q := range sm.GetQuantile() {
				s.qpair.Name, s.qpair.Value = &quantileLabel, s.quantileText(q.GetQuantile())
				s.qlabels = append(append(s.qlabels[:0], labels...), &s.qpair)
				call(family, Point{Value: q.GetValue()}, s.qlabels)
			}
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			call(sum, Point{h.GetSampleSum(), true}, labels)
			call(count, Point{float64(h.GetSampleCount()), true}, labels)
		}
	}
	clear(s.qlabels) // keep no parsed labels alive between scrapes
}

// quantileLabel is the name of the label a summary's quantiles get.
var quantileLabel = "quantile"

// quantileText formats a quantile as a label value, once per quantile.
func (s *Scraper) quantileText(q float64) *string {
	if t, ok := s.quantiles[q]; ok {
		return t
	}
	t := strconv.FormatFloat(q, 'g', -1, 64)
	if s.quantiles == nil {
		s.quantiles = map[float64]*string{}
	}
	if len(s.quantiles) < 64 { // a few quantiles per summary, not one per scrape
		s.quantiles[q] = &t
	}
	return &t
}

// canonical writes a series key: name{a="x",b="y"} with labels sorted by
// name and values escaped as in the text format; just name without labels.
func canonical(name string, labels []*dto.LabelPair) string {
	var scratch []*dto.LabelPair
	return string(appendCanonical(nil, &scratch, name, labels))
}

// appendCanonical appends the canonical key of a series to dst, sorting a
// copy of labels in *scratch, which it reuses.
func appendCanonical(dst []byte, scratch *[]*dto.LabelPair, name string, labels []*dto.LabelPair) []byte {
	dst = append(dst, name...)
	if len(labels) == 0 {
		return dst
	}
	ls := append((*scratch)[:0], labels...)
	slices.SortFunc(ls, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	*scratch = ls
	dst = append(dst, '{')
	for i, l := range ls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, l.GetName()...)
		dst = append(dst, '=', '"')
		v := l.GetValue()
		for i := 0; i < len(v); i++ {
			switch c := v[i]; c {
			case '\\':
				dst = append(dst, '\\', '\\')
			case '"':
				dst = append(dst, '\\', '"')
			case '\n':
				dst = append(dst, '\\', 'n')
			default:
				dst = append(dst, c)
			}
		}
		dst = append(dst, '"')
	}
	clear(ls) // keep no parsed labels alive between scrapes
	return append(dst, '}')
}
