package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// The tables of rules, one per struct a merge puts together field by
// field: each row names its field by an accessor, and says how the parts
// of a step and its repeats put it together, by the ways of fold.go
// (typed on the field) or of this file (reading other fields of the
// struct).

// stepRules are Figures' rules. The order matters only among the rules
// that read other fields of the result (how.after): those run last.
var stepRules = []rule[Figures]{
	field(func(s *Figures) *int { return &s.Index }, sameStep, last),
	field(func(s *Figures) *string { return &s.Model }, sameStep, last),
	field(func(s *Figures) *string { return &s.Scenario }, first, last),
	field(func(s *Figures) *bool { return &s.Interrupted }, anyOf, last), // the caller leaves interrupted repeats out
	field(func(s *Figures) *float64 { return &s.TargetRate }, sum, last),
	field(func(s *Figures) *int { return &s.VUs }, sum, last),
	field(func(s *Figures) *float64 { return &s.DurationS }, greatest, last),
	field(func(s *Figures) *float64 { return &s.WarmupS }, first, last),
	field(func(s *Figures) *float64 { return &s.StartS }, first, last),
	field(func(s *Figures) *int64 { return &s.Sent }, sum, sum),
	field(func(s *Figures) *int64 { return &s.Iterations }, sum, sum),
	field(func(s *Figures) *int64 { return &s.Completed }, sum, sum),
	field(func(s *Figures) *int64 { return &s.OK }, sum, sum),
	field(func(s *Figures) *int64 { return &s.Limited }, sum, sum),
	field(func(s *Figures) *int64 { return &s.Failed }, sum, sum),
	field(func(s *Figures) *map[string]int64 { return &s.Errors }, sumCounts, sumCounts),
	field(func(s *Figures) *int { return &s.Status4xx }, status4xxOfParts, status4xxOfRepeats),
	field(func(s *Figures) *float64 { return &s.AchievedRate }, sum, median),
	field(func(s *Figures) *float64 { return &s.Throughput }, sum, median),
	field(func(s *Figures) *float64 { return &s.ErrorRate }, errorRate, median),
	field(func(s *Figures) *int64 { return &s.Late }, sum, sum),
	field(func(s *Figures) *int64 { return &s.NotSent }, sum, sum),
	field(func(s *Figures) *int64 { return &s.Retried }, sum, sum),
	field(func(s *Figures) *int64 { return &s.Redirected }, sum, sum),
	field(func(s *Figures) *int64 { return &s.RetryAfters }, sum, sum),
	field(func(s *Figures) *float64 { return &s.RetryAfterS }, greatest, greatest),
	field(func(s *Figures) *float64 { return &s.MaxLagMS }, greatest, greatest),
	field(func(s *Figures) *float64 { return &s.MeanLagMS }, meanBy(func(s *Figures) *int64 { return &s.Sent }), median),
	field(func(s *Figures) *float64 { return &s.SettleS }, judged, last),
	field(func(s *Figures) *int { return &s.Workers }, sum, last),
	field(func(s *Figures) *int64 { return &s.BytesIn }, sum, sum),
	field(func(s *Figures) *int64 { return &s.BytesOut }, sum, sum),
	field(func(s *Figures) *string { return &s.Histogram }, mergedHist, mergedHistOrNone),
	field(func(s *Figures) *string { return &s.ServiceHist }, mergedHist, mergedHistOrNone),
	field(func(s *Figures) *metrics.Latency { return &s.LatencyMS }, summaryOf(func(s *Figures) *string { return &s.Histogram }), medianPercentiles),
	field(func(s *Figures) *metrics.Latency { return &s.ServiceMS }, summaryOf(func(s *Figures) *string { return &s.ServiceHist }), medianPercentiles),
	field(func(s *Figures) *[]Breakdown { return &s.Scenarios }, values[Figures]("by name, each by breakdownRules", scenarioParts), scenarioRepeats),
	field(func(s *Figures) *map[string]map[string]Breakdown { return &s.Tags }, values[Figures]("by tag and value, each by breakdownRules", tagParts), last),
	field(func(s *Figures) **Logins { return &s.Logins }, values[Figures]("by loginRules", loginParts), last),
	field(func(s *Figures) **Sockets { return &s.WebSocket }, judged, last),
	field(func(s *Figures) **Generator { return &s.Generator }, values[Figures]("by generatorRules; absent without CPUs", generatorParts), last),
	field(func(s *Figures) **Target { return &s.Target }, judged, last),
	field(func(s *Figures) **Delivery { return &s.Delivery }, judged, values[Figures]("by deliveryRules, of the repeats that have them; absent when the last has none", deliveryRepeats)),
	field(func(s *Figures) *[]Point { return &s.Series }, values[Figures]("second by second (to the ms), each by pointRules", seriesParts), last),
	field(func(s *Figures) *[]string { return &s.Events }, union, last),
	field(func(s *Figures) **Trace { return &s.Trace }, values[Figures]("every part's exchanges, from the latest start", mergeTraces), last),
	field(func(s *Figures) **Repeat { return &s.Repeat }, oneRun, spread),
	// What is said of the figures: the verdict is the merged step's, said
	// when it is judged, and the last repeat's until the combined step is
	// judged again; the warnings are every repeat's once, and the parts'
	// each under its part's name (MergeSteps).
	field(func(s *Figures) **bool { return &s.SLOPassed }, judgedMerged, last),
	field(func(s *Figures) **bool { return &s.Passed }, judgedMerged, last),
	field(func(s *Figures) *string { return &s.Verdict }, judgedMerged, last),
	field(func(s *Figures) *string { return &s.VerdictReason }, judgedMerged, last),
	field(func(s *Figures) *[]string { return &s.VerdictReasons }, emptyUntilJudged, last),
	field(func(s *Figures) *bool { return &s.GeneratorLimited }, judgedMerged, last),
	field(func(s *Figures) *[]string { return &s.Notes }, judgedMerged, judgedAgain),
	field(func(s *Figures) *[]string { return &s.Warnings }, byMergeSteps, unionOrEmpty),
}

// breakdownRules are Breakdown's: a scenario's or a tag value's figures.
var breakdownRules = []rule[Breakdown]{
	field(func(b *Breakdown) *string { return &b.Name }, first, last), // what they are grouped by
	field(func(b *Breakdown) *bool { return &b.WebSocket }, first, last),
	field(func(b *Breakdown) *int64 { return &b.Completed }, sum, sum),
	field(func(b *Breakdown) *int64 { return &b.OK }, sum, sum),
	field(func(b *Breakdown) *int64 { return &b.Failed }, sum, sum),
	field(func(b *Breakdown) *int64 { return &b.Limited }, sum, sum),
	field(func(b *Breakdown) *map[string]int64 { return &b.Errors }, sumCountsOrAbsent, sumCountsOrAbsent),
	field(func(b *Breakdown) *float64 { return &b.AvgBodyBytes }, meanBy(func(b *Breakdown) *int64 { return &b.Completed }), median),
	field(func(b *Breakdown) *string { return &b.Histogram }, mergedHistOrEmpty, mergedHistOrNone),
	field(func(b *Breakdown) *metrics.Latency { return &b.LatencyMS }, summaryOf(func(b *Breakdown) *string { return &b.Histogram }), medianPercentiles),
	field(func(b *Breakdown) **Repeat { return &b.Repeat }, oneRun, spreadOfStep),
}

// loginRules are Logins'; repeats take the last one's whole.
var loginRules = []rule[Logins]{
	field(func(l *Logins) *int64 { return &l.Count }, sum, whole),
	field(func(l *Logins) *int64 { return &l.OK }, sum, whole),
	field(func(l *Logins) *int64 { return &l.Failed }, sum, whole),
	field(func(l *Logins) *map[string]int64 { return &l.ByClass }, sumCounts, whole),
	field(func(l *Logins) *int64 { return &l.Retried }, sum, whole),
	field(func(l *Logins) *int64 { return &l.Skipped }, sum, whole),
	field(func(l *Logins) *int64 { return &l.NotLoggedIn }, sum, whole),
	field(func(l *Logins) *int64 { return &l.LoggedInEarlier }, sum, whole),
	field(func(l *Logins) *metrics.Latency { return &l.LatencyMS }, summaryOf(func(l *Logins) *string { return &l.Histogram }), whole),
	field(func(l *Logins) *string { return &l.Histogram }, mergedHist, whole),
}

// generatorRules are Generator's; repeats take the last one's whole.
var generatorRules = []rule[Generator]{
	field(func(g *Generator) *float64 { return &g.CPUPct }, sum, whole),
	field(func(g *Generator) *int { return &g.CPUs }, sum, whole),
	field(func(g *Generator) *float64 { return &g.GCPauseMS }, sum, whole),
	field(func(g *Generator) *string { return &g.Engine }, values[Generator](`the one engine, "mixed" when they differ`, engines), whole),
	field(func(g *Generator) *int { return &g.FDLimit }, oneGenerator, whole),
	field(func(g *Generator) *int { return &g.ConnLimit }, oneGenerator, whole),
	field(func(g *Generator) **float64 { return &g.HostOtherPct }, ownMachine, whole),
	field(func(g *Generator) **float64 { return &g.HostStealPct }, ownMachine, whole),
	field(func(g *Generator) *int { return &g.Loops }, ownMachine, whole),
	field(func(g *Generator) *[]float64 { return &g.LoopCPUPct }, ownMachine, whole),
	field(func(g *Generator) *[]int64 { return &g.LoopExchanges }, ownMachine, whole),
	field(func(g *Generator) *float64 { return &g.PeakRSSMB }, ownMachine, whole),
	field(func(g *Generator) *float64 { return &g.BytesPerUser }, ownMachine, whole),
	field(func(g *Generator) *float64 { return &g.MemoryBudgetMB }, oneGenerator, whole),
	field(func(g *Generator) *float64 { return &g.HeapAtLimitMB }, oneGenerator, whole),
}

// pointRules are Point's, for the parts' seconds that end at the same
// time (seriesParts); repeats take the last one's whole series.
var pointRules = []rule[Point]{
	field(func(p *Point) *float64 { return &p.T }, first, whole),
	field(func(p *Point) *int64 { return &p.Completed }, sum, whole),
	field(func(p *Point) *int64 { return &p.OK }, sum, whole),
	field(func(p *Point) *int64 { return &p.Failed }, sum, whole),
	field(func(p *Point) *int64 { return &p.Limited }, sum, whole),
	field(func(p *Point) *float64 { return &p.Rate }, sum, whole),
	field(func(p *Point) *float64 { return &p.WindowS }, greatest, whole),
	field(func(p *Point) *float64 { return &p.P50 }, greatest, whole), // then read from the merged histogram when every part kept its seconds' (seriesParts)
	field(func(p *Point) *float64 { return &p.P99 }, greatest, whole),
	field(func(p *Point) *float64 { return &p.Max }, greatest, whole),
	field(func(p *Point) **float64 { return &p.TargetCPU }, judged, whole),
	field(func(p *Point) **float64 { return &p.TargetRSS }, judged, whole),
	field(func(p *Point) *string { return &p.Histogram }, mergedHistOrNone, whole), // kept only when every part kept its seconds' (seriesParts)
	field(func(p *Point) *map[string]int64 { return &p.Errors }, sumCountsOrAbsent, whole),
}

// deliveryRules are Delivery's, for repeats; the parts of a step have
// none (the coordinator's sinks measure the merged step's).
var deliveryRules = []rule[Delivery]{
	field(func(d *Delivery) *int64 { return &d.Expected }, whole, sum),
	field(func(d *Delivery) *int64 { return &d.Delivered }, whole, sum),
	field(func(d *Delivery) *int64 { return &d.Lost }, whole, sum),
	field(func(d *Delivery) *int64 { return &d.Undelivered }, whole, sum),
	field(func(d *Delivery) *int64 { return &d.Duplicates }, whole, sum),
	field(func(d *Delivery) *int64 { return &d.Rejected }, whole, sum),
	field(func(d *Delivery) *[]string { return &d.LostIDs }, whole, last), // until the drain's final figures replace them
	field(func(d *Delivery) *int64 { return &d.Missed }, whole, last),
	field(func(d *Delivery) *metrics.Latency { return &d.LatencyMS }, whole, last),
	field(func(d *Delivery) *map[string]float64 { return &d.LatencyUpperMS }, whole, last),
	field(func(d *Delivery) *float64 { return &d.DrainS }, whole, last),
	field(func(d *Delivery) **bool { return &d.DrainComplete }, whole, last),
	field(func(d *Delivery) **int64 { return &d.AtStepEnd }, whole, values[Delivery]("sum, when the last has one", atStepEnd)),
	field(func(d *Delivery) **int64 { return &d.BacklogStart }, whole, backlog),
	field(func(d *Delivery) **int64 { return &d.BacklogEnd }, whole, backlog),
	field(func(d *Delivery) *[]int64 { return &d.BacklogSamples }, whole, backlogSamples),
	field(func(d *Delivery) *[]float64 { return &d.BacklogWaitS }, whole, backlogWaits),
}

// The ways of one struct's fields, which read other fields of it.

// sameStep refuses parts of different steps or models; it is the first
// part's.
func sameStep[V any](at func(*Figures) *V) how[Figures] {
	return how[Figures]{name: "same step, or an error", do: func(out *Figures, in []*Figures) error {
		a := in[0]
		for _, p := range in {
			if p.Model != a.Model || p.Index != a.Index {
				return fmt.Errorf("merge: step %d (%s) and step %d (%s) are not the same step of one plan", a.Index+1, a.Model, p.Index+1, p.Model)
			}
		}
		*at(out) = *at(a)
		return nil
	}}
}

var (
	// status4xxOfParts is the one 4xx status every part with failures had,
	// -1 when they differ.
	status4xxOfParts = ofWhole("the same status of the parts with failures, or -1", false, func(_ *Figures, in []*Figures) (int, error) {
		s := 0
		for i, p := range in {
			s = sameStatus(s, p.Status4xx, p.Failed, i)
		}
		return s, nil
	})
	// status4xxOfRepeats is the one 4xx status of the repeats, -1 when they
	// differ.
	status4xxOfRepeats = values[Figures]("the same status, or -1", func(v []int) (int, error) {
		s := 0
		for _, x := range v {
			s = metrics.SameStatus(s, x)
		}
		return s, nil
	})
	// errorRate is failed / completed of the merged counts.
	errorRate = ofWhole("recompute: failed / completed", true, func(out *Figures, _ []*Figures) (float64, error) {
		if out.Completed > 0 {
			return float64(out.Failed) / float64(out.Completed), nil
		}
		return 0, nil
	})
	// scenarioRepeats combines each scenario of the last repeat with the
	// same scenario of the others, and keeps its spread over them.
	scenarioRepeats = ofWhole("by name, in the last's order, each by breakdownRules, with its spread", false, func(_ *Figures, in []*Figures) ([]Breakdown, error) {
		last := in[len(in)-1].Scenarios
		out := make([]Breakdown, 0, len(last))
		for _, b := range last {
			c, err := scenarioOfRepeats(b.Name, in)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	})
	// spread keeps each repeat's figures and their histograms (Repeat);
	// Combine counts the repeats that passed.
	spread = ofWhole("each repeat's figures and their spread", false, func(_ *Figures, in []*Figures) (*Repeat, error) {
		host := !slices.ContainsFunc(in, func(s *Figures) bool { return s.Generator == nil || s.Generator.HostOtherPct == nil })
		r := spreadOf(in, func(s *Figures) map[string]float64 {
			m := map[string]float64{
				MetricAchieved: s.AchievedRate, MetricThroughput: s.Throughput, MetricErrorRate: s.ErrorRate,
				MetricP50: s.LatencyMS.P50, MetricP95: s.LatencyMS.P95, MetricP99: s.LatencyMS.P99,
			}
			if host { // each repeat's host, when every one was measured
				m[MetricHostOther] = *s.Generator.HostOtherPct
			}
			return m
		})
		for _, s := range in {
			r.Histograms = append(r.Histograms, s.Histogram)
		}
		return r, nil
	})
)

// spreadOfStep: a scenario's spread over the repeats is set by the step's
// Scenarios rule (scenarioRepeats), which knows each repeat's duration.
func spreadOfStep[V any](func(*Breakdown) *V) how[Breakdown] {
	return unset[Breakdown]("spread: set by the step's Scenarios rule, which knows each repeat's duration")
}

// byMergeSteps is an empty list of warnings, which MergeSteps fills with
// each part's, prefixed with its part's name.
func byMergeSteps(at func(*Figures) *[]string) how[Figures] {
	return values[Figures]("[]: each part's, prefixed with its name, by MergeSteps", func([][]string) ([]string, error) { return []string{}, nil })(at)
}

// scenarioOfRepeats combines the scenario name of every repeat that ran
// it, by breakdownRules, with its spread over them.
func scenarioOfRepeats(name string, in []*Figures) (Breakdown, error) {
	var reps []Breakdown
	var durations []float64
	for _, s := range in {
		for _, x := range s.Scenarios {
			if x.Name == name {
				reps = append(reps, x)
				durations = append(durations, s.DurationS)
			}
		}
	}
	c, err := put(breakdownRules, false, reps)
	if err != nil {
		return c, err
	}
	i := 0
	c.Repeat = spreadOf(reps, func(x Breakdown) map[string]float64 {
		d := durations[i]
		i++
		m := map[string]float64{MetricP50: x.LatencyMS.P50, MetricP95: x.LatencyMS.P95, MetricP99: x.LatencyMS.P99, MetricErrorRate: 0, MetricThroughput: 0}
		if x.Completed > 0 {
			m[MetricErrorRate] = float64(x.Failed) / float64(x.Completed)
		}
		if d > 0 {
			m[MetricThroughput] = float64(x.OK+x.Limited) / d
		}
		return m
	})
	return c, nil
}

// backlog adds the repeats' backlogs (each repeat's growth) when every
// one has both ends.
func backlog(at func(*Delivery) **int64) how[Delivery] {
	return how[Delivery]{name: "sum, when every repeat has both backlogs", do: func(out *Delivery, in []*Delivery) error {
		var n int64
		for _, d := range in {
			if d.BacklogStart == nil || d.BacklogEnd == nil {
				return nil
			}
			n += **at(d)
		}
		*at(out) = &n
		return nil
	}}
}

// backlogSamples adds the repeats' backlog samples instant by instant (each
// repeat's series of its own ids), as backlog adds their ends, when every
// repeat has as many; none otherwise.
var backlogSamples = values[Delivery]("sum instant by instant, when every repeat has as many samples", sumInstants[int64])

// backlogWaits adds the waits of the same samples, as backlogSamples adds
// their counts.
var backlogWaits = values[Delivery]("sum instant by instant, when every repeat has as many samples", sumInstants[float64])

// sumInstants adds series instant by instant; nil when they differ in
// length or are empty.
func sumInstants[T int64 | float64](v [][]T) ([]T, error) {
	n := len(v[0])
	for _, d := range v {
		if len(d) != n || n == 0 {
			return nil, nil
		}
	}
	out := make([]T, n)
	for _, d := range v {
		for i, x := range d {
			out[i] += x
		}
	}
	return out, nil
}

// scenarioParts merges the parts' breakdowns by scenario name, in the order
// the names first come.
func scenarioParts(parts [][]Breakdown) ([]Breakdown, error) {
	var names []string
	byName := map[string][]Breakdown{}
	for _, p := range parts {
		for _, b := range p {
			if _, ok := byName[b.Name]; !ok {
				names = append(names, b.Name)
			}
			byName[b.Name] = append(byName[b.Name], b)
		}
	}
	out := []Breakdown{}
	for _, name := range names {
		b, err := put(breakdownRules, true, byName[name])
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// tagParts merges the parts' breakdowns by tag key and value.
func tagParts(parts []map[string]map[string]Breakdown) (map[string]map[string]Breakdown, error) {
	byValue := map[string]map[string][]Breakdown{}
	for _, p := range parts {
		for key, vals := range p {
			if byValue[key] == nil {
				byValue[key] = map[string][]Breakdown{}
			}
			for v, b := range vals {
				byValue[key][v] = append(byValue[key][v], b)
			}
		}
	}
	out := map[string]map[string]Breakdown{}
	for key, vals := range byValue {
		out[key] = map[string]Breakdown{}
		for v, bs := range vals {
			b, err := put(breakdownRules, true, bs)
			if err != nil {
				return nil, err
			}
			out[key][v] = b
		}
	}
	return out, nil
}

// present returns the values that are there.
func present[T any](v []*T) []T {
	var out []T
	for _, x := range v {
		if x != nil {
			out = append(out, *x)
		}
	}
	return out
}

// loginParts merges the parts' logins; nil when no part had any.
func loginParts(parts []*Logins) (*Logins, error) {
	in := present(parts)
	if len(in) == 0 {
		return nil, nil
	}
	l, err := put(loginRules, true, in)
	return &l, err
}

// generatorParts adds up the generators; nil when none had CPUs.
func generatorParts(parts []*Generator) (*Generator, error) {
	g, err := put(generatorRules, true, present(parts))
	if err != nil || g.CPUs == 0 {
		return nil, err
	}
	return &g, nil
}

// engines is the engine every part used, "mixed" when they differ.
func engines(v []string) (string, error) {
	out := ""
	for _, e := range v {
		switch {
		case out == "":
			out = e
		case out != e:
			out = "mixed"
		}
	}
	return out, nil
}

// deliveryRepeats combines the repeats' deliveries (each repeat's own
// ids): nil when the last repeat has none.
func deliveryRepeats(reps []*Delivery) (*Delivery, error) {
	if reps[len(reps)-1] == nil {
		return nil, nil
	}
	d, err := put(deliveryRules, false, present(reps))
	return &d, err
}

// atStepEnd adds the repeats' deliveries at their steps' ends, when the
// last repeat has one.
func atStepEnd(v []*int64) (*int64, error) {
	if v[len(v)-1] == nil {
		return nil, nil
	}
	var n int64
	for _, x := range v {
		if x != nil {
			n += *x
		}
	}
	return &n, nil
}

// seriesParts adds the parts' seconds that end at the same time (to the
// millisecond), each by pointRules; the percentiles are read from the
// seconds' merged histograms when every part has them, else they are the
// greatest of the parts' (an upper bound, said so by the missing
// histogram).
func seriesParts(parts [][]Point) ([]Point, error) {
	byT := map[int64][]Point{}
	complete := true
	for _, p := range parts {
		for _, pt := range p {
			key := int64(math.Round(pt.T * 1000))
			byT[key] = append(byT[key], pt)
			if pt.Histogram == "" {
				complete = complete && pt.Completed == 0
			}
		}
	}
	if len(byT) == 0 {
		return nil, nil
	}
	out := make([]Point, 0, len(byT))
	for _, key := range slices.Sorted(maps.Keys(byT)) {
		q, err := put(pointRules, true, byT[key])
		if err != nil {
			return nil, err
		}
		h, err := decodeOrEmpty(q.Histogram)
		if err != nil {
			return nil, err
		}
		if complete && h.TotalCount() > 0 {
			q.P50, q.P99, q.Max = metrics.Quantile(h, 0.50), metrics.Quantile(h, 0.99), metrics.Quantile(h, 1)
		} else {
			q.Histogram = ""
		}
		out = append(out, q)
	}
	return slices.SortedFunc(slices.Values(out), func(a, b Point) int { return cmp.Compare(a.T, b.T) }), nil
}
