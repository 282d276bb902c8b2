package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// rule says how one field of a step's figures (or of a value inside them:
// a breakdown, the logins, the generator's, a second, the deliveries)
// becomes one when several are put together: Parts for the parts of one
// step that several generators ran (agents, --segment), Repeats for the
// repeats of one step (--repeat N). Every field has one: a test walks the
// types and fails on a field without, so that a new figure cannot be
// forgotten by a merge.
type rule struct {
	Field          string
	Parts, Repeats how
}

// stepRules are Figures' rules. The order matters only among the rules
// that read other fields of the result (how.after): those run last.
var stepRules = []rule{
	{"Index", sameStep, last},
	{"Model", sameStep, last},
	{"Scenario", first, last},
	{"Interrupted", anyOf, last}, // the caller leaves interrupted repeats out
	{"TargetRate", sum, last},
	{"VUs", sum, last},
	{"DurationS", greatest, last},
	{"WarmupS", first, last},
	{"StartS", first, last},
	{"Sent", sum, sum},
	{"Iterations", sum, sum},
	{"Completed", sum, sum},
	{"OK", sum, sum},
	{"Limited", sum, sum},
	{"Failed", sum, sum},
	{"Errors", sum, sum},
	{"Status4xx", status4xxOfParts, status4xxOfRepeats},
	{"AchievedRate", sum, median},
	{"Throughput", sum, median},
	{"ErrorRate", errorRate, median},
	{"Late", sum, sum},
	{"NotSent", sum, sum},
	{"Retried", sum, sum},
	{"Redirected", sum, sum},
	{"RetryAfters", sum, sum},
	{"RetryAfterS", greatest, greatest},
	{"MaxLagMS", greatest, greatest},
	{"MeanLagMS", meanBy("Sent"), median},
	{"SettleS", judged, last},
	{"Workers", sum, last},
	{"BytesIn", sum, sum},
	{"BytesOut", sum, sum},
	{"Histogram", histogram(always), histogram(unlessNone)},
	{"ServiceHist", histogram(always), histogram(unlessNone)},
	{"LatencyMS", summaryOf("Histogram"), median},
	{"ServiceMS", summaryOf("ServiceHist"), median},
	{"Scenarios", values("by name, each by breakdownRules", scenarioParts), scenarioRepeats},
	{"Tags", values("by tag and value, each by breakdownRules", tagParts), last},
	{"Logins", values("by loginRules", loginParts), last},
	{"WebSocket", judged, last},
	{"Generator", values("by generatorRules; absent without CPUs", generatorParts), last},
	{"Target", judged, last},
	{"Delivery", judged, values("by deliveryRules, of the repeats that have them; absent when the last has none", deliveryRepeats)},
	{"Series", values("second by second (to the ms), each by pointRules", seriesParts), last},
	{"Events", union, last},
	{"Trace", values("every part's exchanges, from the latest start", mergeTraces), last},
	{"Repeat", unset("none: a part is one run"), spread},
}

// breakdownRules are Breakdown's: a scenario's or a tag value's figures.
var breakdownRules = []rule{
	{"Name", first, last}, // what they are grouped by
	{"WebSocket", first, last},
	{"Completed", sum, sum},
	{"OK", sum, sum},
	{"Failed", sum, sum},
	{"Limited", sum, sum},
	{"Errors", sumOrAbsent, sumOrAbsent},
	{"AvgBodyBytes", meanBy("Completed"), median},
	{"Histogram", histogram(unlessEmpty), histogram(unlessNone)},
	{"LatencyMS", summaryOf("Histogram"), median},
	{"Repeat", unset("none: a part is one run"), unset("spread: set by the step's Scenarios rule, which knows each repeat's duration")},
}

// loginRules are Logins'; repeats take the last one's whole.
var loginRules = []rule{
	{"Count", sum, whole},
	{"OK", sum, whole},
	{"Failed", sum, whole},
	{"ByClass", sum, whole},
	{"Retried", sum, whole},
	{"Skipped", sum, whole},
	{"NotLoggedIn", sum, whole},
	{"LoggedInEarlier", sum, whole},
	{"LatencyMS", summaryOf("Histogram"), whole},
	{"Histogram", histogram(always), whole},
}

// generatorRules are Generator's; repeats take the last one's whole.
var generatorRules = []rule{
	{"CPUPct", sum, whole},
	{"CPUs", sum, whole},
	{"GCPauseMS", sum, whole},
	{"Engine", values(`the one engine, "mixed" when they differ`, engines), whole},
	{"FDLimit", unset("none: one generator's, which its part's reason says"), whole},
	{"ConnLimit", unset("none: one generator's, which its part's reason says"), whole},
	{"HostOtherPct", unset("none: each part's machine is its own"), whole},
	{"HostStealPct", unset("none: each part's machine is its own"), whole},
	{"Loops", unset("none: each part's machine is its own"), whole},
	{"LoopCPUPct", unset("none: each part's machine is its own"), whole},
	{"LoopExchanges", unset("none: each part's machine is its own"), whole},
	{"PeakRSSMB", unset("none: each part's machine is its own"), whole},
	{"BytesPerUser", unset("none: each part's machine is its own"), whole},
	{"MemoryBudgetMB", unset("none: one generator's, which its part's reason says"), whole},
	{"HeapAtLimitMB", unset("none: one generator's, which its part's reason says"), whole},
}

// pointRules are Point's, for the parts' seconds that end at the same
// time (seriesParts); repeats take the last one's whole series.
var pointRules = []rule{
	{"T", first, whole},
	{"Completed", sum, whole},
	{"OK", sum, whole},
	{"Failed", sum, whole},
	{"Limited", sum, whole},
	{"Rate", sum, whole},
	{"WindowS", greatest, whole},
	{"P50", greatest, whole}, // then read from the merged histogram when every part kept its seconds' (seriesParts)
	{"P99", greatest, whole},
	{"Max", greatest, whole},
	{"TargetCPU", judged, whole},
	{"TargetRSS", judged, whole},
	{"Histogram", histogram(unlessNone), whole}, // kept only when every part kept its seconds' (seriesParts)
	{"Errors", sumOrAbsent, whole},
}

// deliveryRules are Delivery's, for repeats; the parts of a step have
// none (the coordinator's sinks measure the merged step's).
var deliveryRules = []rule{
	{"Expected", whole, sum},
	{"Delivered", whole, sum},
	{"Lost", whole, sum},
	{"Undelivered", whole, sum},
	{"Duplicates", whole, sum},
	{"Rejected", whole, sum},
	{"LostIDs", whole, last}, // until the drain's final figures replace them
	{"Missed", whole, last},
	{"LatencyMS", whole, last},
	{"LatencyUpperMS", whole, last},
	{"DrainS", whole, last},
	{"DrainComplete", whole, last},
	{"AtStepEnd", whole, values("sum, when the last has one", atStepEnd)},
	{"BacklogStart", whole, backlog},
	{"BacklogEnd", whole, backlog},
	{"BacklogSamples", whole, backlogSamples},
}

// The rules of one field each.
var (
	// sameStep refuses parts of different steps or models.
	sameStep = how{name: "same step, or an error", do: func(f *fold) error {
		a := f.in[0].Addr().Interface().(*Figures)
		for _, in := range f.in {
			if p := in.Addr().Interface().(*Figures); p.Model != a.Model || p.Index != a.Index {
				return fmt.Errorf("merge: step %d (%s) and step %d (%s) are not the same step of one plan", a.Index+1, a.Model, p.Index+1, p.Model)
			}
		}
		f.dst().Set(f.src(0))
		return nil
	}}
	// status4xxOfParts is the one 4xx status every part with failures had,
	// -1 when they differ.
	status4xxOfParts = ofWhole("the same status of the parts with failures, or -1", false, func(out *Figures, in []*Figures) error {
		for i, p := range in {
			out.Status4xx = sameStatus(out.Status4xx, p.Status4xx, p.Failed, i)
		}
		return nil
	})
	// status4xxOfRepeats is the one 4xx status of the repeats, -1 when they
	// differ.
	status4xxOfRepeats = values("the same status, or -1", func(v []int) (int, error) {
		s := 0
		for _, x := range v {
			s = metrics.SameStatus(s, x)
		}
		return s, nil
	})
	// errorRate is failed / completed of the merged counts.
	errorRate = ofWhole("recompute: failed / completed", true, func(out *Figures, _ []*Figures) error {
		if out.Completed > 0 {
			out.ErrorRate = float64(out.Failed) / float64(out.Completed)
		}
		return nil
	})
	// scenarioRepeats combines each scenario of the last repeat with the
	// same scenario of the others, and keeps its spread over them.
	scenarioRepeats = ofWhole("by name, in the last's order, each by breakdownRules, with its spread", false, func(out *Figures, in []*Figures) error {
		last := in[len(in)-1].Scenarios
		out.Scenarios = make([]Breakdown, 0, len(last))
		for _, b := range last {
			var reps []Breakdown
			var durations []float64
			for _, s := range in {
				for _, x := range s.Scenarios {
					if x.Name == b.Name {
						reps = append(reps, x)
						durations = append(durations, s.DurationS)
					}
				}
			}
			c, err := put(breakdownRules, false, reps)
			if err != nil {
				return err
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
			out.Scenarios = append(out.Scenarios, c)
		}
		return nil
	})
	// spread keeps each repeat's figures and their histograms (Repeat);
	// Combine counts the repeats that passed.
	spread = ofWhole("each repeat's figures and their spread", false, func(out *Figures, in []*Figures) error {
		host := !slices.ContainsFunc(in, func(s *Figures) bool { return s.Generator == nil || s.Generator.HostOtherPct == nil })
		out.Repeat = spreadOf(in, func(s *Figures) map[string]float64 {
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
			out.Repeat.Histograms = append(out.Repeat.Histograms, s.Histogram)
		}
		return nil
	})
	// backlog adds the repeats' backlogs (each repeat's growth) when every
	// one has both ends.
	backlog = how{name: "sum, when every repeat has both backlogs", do: func(f *fold) error {
		var n int64
		for k, in := range f.in {
			if d := in.Addr().Interface().(*Delivery); d.BacklogStart == nil || d.BacklogEnd == nil {
				return nil
			}
			n += f.src(k).Elem().Int()
		}
		f.dst().Set(reflect.ValueOf(&n))
		return nil
	}}
)

// backlogSamples adds the repeats' backlog samples instant by instant (each
// repeat's series of its own ids), as backlog adds their ends, when every
// repeat has as many; none otherwise.
var backlogSamples = ofWhole("sum instant by instant, when every repeat has as many samples", false, func(out *Delivery, in []*Delivery) error {
	out.BacklogSamples = nil
	n := len(in[0].BacklogSamples)
	for _, d := range in {
		if len(d.BacklogSamples) != n || n == 0 {
			return nil
		}
	}
	out.BacklogSamples = make([]int64, n)
	for _, d := range in {
		for i, v := range d.BacklogSamples {
			out.BacklogSamples[i] += v
		}
	}
	return nil
})

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
