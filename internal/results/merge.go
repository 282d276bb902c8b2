package results

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Part is one generator's share of a step (an agent's, a --segment's),
// as the merged step lists it: so that a lagging generator shows.
type Part struct {
	// Agent names the generator: an agent's address, or a segment "2/3".
	Agent        string  `json:"agent"`
	TargetRate   float64 `json:"target_rate,omitempty"`
	VUs          int     `json:"vus,omitempty"`
	AchievedRate float64 `json:"achieved_rate"`
	Throughput   float64 `json:"throughput"`
	Sent         int64   `json:"sent"`
	Completed    int64   `json:"completed"`
	Late         int64   `json:"late"`
	NotSent      int64   `json:"not_sent"`
	// CPUPct is the generator's CPU, in percent of one core, of CPUs.
	CPUPct float64 `json:"cpu_pct"`
	CPUs   int     `json:"cpus"`
	// GeneratorLimited is the share's own judgement: one generator that
	// could not hold its share limits the whole step.
	GeneratorLimited bool   `json:"generator_limited"`
	Reason           string `json:"reason,omitempty"`
}

// MergeSteps merges the figures of one step that several generators ran,
// each its share of the load (agents, --segment), into the step a single
// generator would have measured: counts, bytes and rates added, every
// histogram merged (never percentiles averaged) and its percentiles read
// again, the per-second series added second by second, the traces'
// exchanges put together. names names the parts (agents' addresses) for
// Parts. Verdicts are not merged: the caller judges the merged step, and
// a part that was generator-limited makes it so (Parts). The parts must
// be the same step of the same model.
func MergeSteps(parts []Step, names []string) (Step, error) {
	if len(parts) == 0 {
		return Step{}, errors.New("merge: no step to merge")
	}
	first := parts[0]
	m := Step{
		Index: first.Index, Model: first.Model, Scenario: first.Scenario, WarmupS: first.WarmupS, StartS: first.StartS,
		Errors: map[string]int64{}, Warnings: []string{}, VerdictReasons: []string{},
		Tags: map[string]map[string]Breakdown{},
	}
	lat, svc := metrics.NewHistogram(), metrics.NewHistogram()
	scen := map[string]*merging{}
	var scenOrder []string
	tags := map[string]map[string]*merging{}
	var logins *merging
	var loginsOut *Logins
	gen := &Generator{}
	var lagWeight float64
	status := 0
	for i, p := range parts {
		if p.Model != first.Model || p.Index != first.Index {
			return Step{}, fmt.Errorf("merge: step %d (%s) and step %d (%s) are not the same step of one plan", first.Index+1, first.Model, p.Index+1, p.Model)
		}
		m.Interrupted = m.Interrupted || p.Interrupted
		m.TargetRate += p.TargetRate
		m.VUs += p.VUs
		m.DurationS = max(m.DurationS, p.DurationS)
		m.Sent += p.Sent
		m.Completed += p.Completed
		m.OK += p.OK
		m.Limited += p.Limited
		m.Failed += p.Failed
		addCounts(m.Errors, p.Errors)
		for _, e := range p.Events { // each generator names the events it saw
			if !slices.Contains(m.Events, e) {
				m.Events = append(m.Events, e)
			}
		}
		m.AchievedRate += p.AchievedRate
		m.Throughput += p.Throughput
		m.Late += p.Late
		m.NotSent += p.NotSent
		m.Retried += p.Retried
		m.Redirected += p.Redirected
		m.RetryAfters += p.RetryAfters
		m.RetryAfterS = max(m.RetryAfterS, p.RetryAfterS)
		m.MaxLagMS = max(m.MaxLagMS, p.MaxLagMS)
		m.MeanLagMS += p.MeanLagMS * float64(p.Sent)
		lagWeight += float64(p.Sent)
		m.Workers += p.Workers
		m.BytesIn += p.BytesIn
		m.BytesOut += p.BytesOut
		status = sameStatus(status, p.Status4xx, p.Failed, i)
		if err := mergeEncoded(lat, p.Histogram); err != nil {
			return Step{}, err
		}
		if err := mergeEncoded(svc, p.ServiceHist); err != nil {
			return Step{}, err
		}
		for _, b := range p.Scenarios {
			if scen[b.Name] == nil {
				scen[b.Name] = newMerging(b)
				scenOrder = append(scenOrder, b.Name)
			}
			if err := scen[b.Name].add(b); err != nil {
				return Step{}, err
			}
		}
		for key, values := range p.Tags {
			if tags[key] == nil {
				tags[key] = map[string]*merging{}
			}
			for v, b := range values {
				if tags[key][v] == nil {
					tags[key][v] = newMerging(b)
				}
				if err := tags[key][v].add(b); err != nil {
					return Step{}, err
				}
			}
		}
		if l := p.Logins; l != nil {
			if logins == nil {
				logins, loginsOut = newMerging(Breakdown{}), &Logins{ByClass: map[string]int64{}}
			}
			loginsOut.Count += l.Count
			loginsOut.OK += l.OK
			loginsOut.Failed += l.Failed
			loginsOut.Retried += l.Retried
			loginsOut.Skipped += l.Skipped
			loginsOut.NotLoggedIn += l.NotLoggedIn
			loginsOut.LoggedInEarlier += l.LoggedInEarlier
			addCounts(loginsOut.ByClass, l.ByClass)
			if err := mergeEncoded(logins.hist, l.Histogram); err != nil {
				return Step{}, err
			}
		}
		if g := p.Generator; g != nil {
			gen.CPUPct += g.CPUPct
			gen.CPUs += g.CPUs
			gen.GCPauseMS += g.GCPauseMS
			switch {
			case gen.Engine == "":
				gen.Engine = g.Engine
			case gen.Engine != g.Engine:
				gen.Engine = "mixed"
			}
		}
		m.Parts = append(m.Parts, partOf(&p, nameOf(names, i)))
		for _, w := range p.Warnings {
			m.Warnings = append(m.Warnings, nameOf(names, i)+": "+w)
		}
	}
	m.Status4xx = max(status, 0)
	if status < 0 {
		m.Status4xx = -1
	}
	if lagWeight > 0 {
		m.MeanLagMS /= lagWeight
	}
	if m.Completed > 0 {
		m.ErrorRate = float64(m.Failed) / float64(m.Completed)
	}
	var err error
	m.LatencyMS, m.ServiceMS = metrics.Summarize(lat), metrics.Summarize(svc)
	if m.Histogram, err = metrics.Encode(lat); err != nil {
		return Step{}, err
	}
	if m.ServiceHist, err = metrics.Encode(svc); err != nil {
		return Step{}, err
	}
	m.Scenarios = []Breakdown{}
	for _, name := range scenOrder {
		b, err := scen[name].result()
		if err != nil {
			return Step{}, err
		}
		m.Scenarios = append(m.Scenarios, b)
	}
	for key, values := range tags {
		m.Tags[key] = map[string]Breakdown{}
		for v, mg := range values {
			if m.Tags[key][v], err = mg.result(); err != nil {
				return Step{}, err
			}
		}
	}
	if loginsOut != nil {
		loginsOut.LatencyMS = metrics.Summarize(logins.hist)
		if loginsOut.Histogram, err = metrics.Encode(logins.hist); err != nil {
			return Step{}, err
		}
		m.Logins = loginsOut
	}
	if gen.CPUs > 0 {
		m.Generator = gen
	}
	if m.Series, err = mergeSeries(parts); err != nil {
		return Step{}, err
	}
	if m.Trace, err = mergeTraces(parts); err != nil {
		return Step{}, err
	}
	m.Agents = len(parts)
	return m, nil
}

// nameOf is part i's name: names[i], or "#i+1".
func nameOf(names []string, i int) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	return fmt.Sprintf("#%d", i+1)
}

// partOf is a part's line in the merged step.
func partOf(p *Step, name string) Part {
	out := Part{Agent: name, TargetRate: p.TargetRate, VUs: p.VUs, AchievedRate: p.AchievedRate, Throughput: p.Throughput,
		Sent: p.Sent, Completed: p.Completed, Late: p.Late, NotSent: p.NotSent, GeneratorLimited: p.generatorLimited()}
	if g := p.Generator; g != nil {
		out.CPUPct, out.CPUs = g.CPUPct, g.CPUs
	}
	if out.GeneratorLimited {
		out.Reason = p.generatorReason()
	}
	return out
}

// sameStatus folds part i's 4xx status into the merge's: the one status
// all parts with failures had, or -1 when they differ.
func sameStatus(acc, status int, failed int64, i int) int {
	switch {
	case acc < 0 || failed == 0 && status == 0:
		return acc
	case acc == 0:
		return status
	case status != acc:
		return -1
	}
	return acc
}

func addCounts(into, from map[string]int64) {
	for k, v := range from {
		into[k] += v
	}
}

// mergeEncoded merges an encoded histogram into h ("" is empty).
func mergeEncoded(h *hdrhistogram.Histogram, enc string) error {
	if enc == "" {
		return nil
	}
	o, err := metrics.Decode(enc)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	h.Merge(o)
	return nil
}

// merging is a breakdown being merged.
type merging struct {
	b     Breakdown
	hist  *hdrhistogram.Histogram
	bytes float64 // body bytes, summed
}

func newMerging(b Breakdown) *merging {
	return &merging{b: Breakdown{Name: b.Name, WebSocket: b.WebSocket, Errors: map[string]int64{}}, hist: metrics.NewHistogram()}
}

func (m *merging) add(b Breakdown) error {
	m.b.Completed += b.Completed
	m.b.OK += b.OK
	m.b.Failed += b.Failed
	m.b.Limited += b.Limited
	addCounts(m.b.Errors, b.Errors)
	m.bytes += b.AvgBodyBytes * float64(b.Completed)
	return mergeEncoded(m.hist, b.Histogram)
}

func (m *merging) result() (Breakdown, error) {
	b := m.b
	if len(b.Errors) == 0 {
		b.Errors = nil
	}
	if b.Completed > 0 {
		b.AvgBodyBytes = m.bytes / float64(b.Completed)
	}
	b.LatencyMS = metrics.Summarize(m.hist)
	var err error
	if m.hist.TotalCount() > 0 {
		b.Histogram, err = metrics.Encode(m.hist)
	}
	return b, err
}

// mergeSeries adds the parts' seconds that end at the same time (to the
// millisecond): counts, errors by class and rates added, the max the greatest; the
// percentiles read from the seconds' merged histograms when every part
// has them, else the greatest of the parts' (an upper bound, said so by
// the missing histogram).
func mergeSeries(parts []Step) ([]Point, error) {
	byT := map[int64]*Point{}
	hists := map[int64]*hdrhistogram.Histogram{}
	complete := true
	for _, p := range parts {
		for _, pt := range p.Series {
			key := int64(math.Round(pt.T * 1000))
			q := byT[key]
			if q == nil {
				q = &Point{T: pt.T}
				byT[key] = q
				hists[key] = metrics.NewHistogram()
			}
			q.Completed += pt.Completed
			q.OK += pt.OK
			q.Failed += pt.Failed
			q.Limited += pt.Limited
			q.Rate += pt.Rate
			q.WindowS = max(q.WindowS, pt.WindowS)
			q.Max = max(q.Max, pt.Max)
			q.P50, q.P99 = max(q.P50, pt.P50), max(q.P99, pt.P99)
			if len(pt.Errors) > 0 {
				if q.Errors == nil {
					q.Errors = map[string]int64{}
				}
				addCounts(q.Errors, pt.Errors)
			}
			if pt.Histogram == "" {
				complete = complete && pt.Completed == 0
				continue
			}
			if err := mergeEncoded(hists[key], pt.Histogram); err != nil {
				return nil, err
			}
		}
	}
	out := make([]Point, 0, len(byT))
	for _, key := range slices.Sorted(maps.Keys(byT)) {
		q := *byT[key]
		if h := hists[key]; complete && h.TotalCount() > 0 {
			q.P50, q.P99, q.Max = metrics.Quantile(h, 0.50), metrics.Quantile(h, 0.99), metrics.Quantile(h, 1)
			enc, err := metrics.Encode(h)
			if err != nil {
				return nil, err
			}
			q.Histogram = enc
		}
		out = append(out, q)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return slices.SortedFunc(slices.Values(out), func(a, b Point) int { return cmp.Compare(a.T, b.T) }), nil
}
