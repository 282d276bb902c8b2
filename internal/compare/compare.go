package compare

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// The rules of the tests, stated in every report.
const (
	// Alpha is the rank test's significance level.
	Alpha = 0.05
	// MinRankRepeats is how many repeats each side needs for the rank test.
	MinRankRepeats = 5
	// CoVFactor is the CoV rule with fewer repeats: a change counts when
	// it exceeds this many times the larger side's CoV. Treating any delta
	// below the CoV as noise would be a factor of 1; the difference of two
	// noisy figures carries about √2 times the noise of one, so a factor of
	// 2 keeps a one-CoV wobble on each side from counting. The control is
	// held to the same band (see control).
	CoVFactor = 2.0
	// DefaultMinEffect is the smallest change, in percent, that can count.
	DefaultMinEffect = 5.0
	// MinErrorDelta is the smallest change of the error rate (a fraction:
	// 0.1 percentage point) that can count, whatever its relative size: one
	// more timeout in a thousand is not a regression.
	MinErrorDelta = 0.001
	// ControlTolerance is how far, in percent, a control may move when
	// there is no CoV (single runs).
	ControlTolerance = 10.0
	// DefaultMinAbs is the least a latency must move, whatever the
	// percentage, to count (--min-abs): a static page answering in a
	// fifth of a millisecond moves by more than 10 % from timer jitter
	// alone, which says nothing of the target or the host.
	DefaultMinAbs = time.Millisecond
	// FloorShareOfP50 is the other part of a latency's floor: a move of
	// less than this share of the p50 (of the same step and scenario, in
	// A) never counts, so that the floor grows with slow endpoints.
	FloorShareOfP50 = 0.01
	// ControlFloorShare is the control's latency floor with repeats, up to
	// --min-abs, instead of --min-abs and FloorShareOfP50: a move of less
	// than this share of its own figure in A does not count. A static page
	// answers in a fraction of a millisecond, below an absolute floor meant
	// for the judged scenarios, and a busy host multiplies its tail (0.5 →
	// 2.5 ms), while the timers' jitter moves it by a tenth. Without
	// repeats (no test of its noise) the control keeps --min-abs.
	ControlFloorShare = 0.5
	// ControlMinAnswers is the fewest answers a repeat of the control
	// needs for its p99 to be more than its few slowest answers: below it
	// a note says the control is too thin to judge a tail, and what weight
	// would give it enough.
	ControlMinAnswers = 100
	// HostBusyDelta is how much more (or less) CPU, in percent of one core,
	// the host's other processes may have used during one result's steps
	// than during the other's before compare cannot tell the target from
	// the machine: half a core of other work.
	HostBusyDelta = 50.0
	// HostStealDelta is the same for the CPU a hypervisor took.
	HostStealDelta = 10.0
)

// The metrics compared for every step and scenario, in the order reports
// show them.
var Metrics = []string{results.MetricThroughput, results.MetricP50, results.MetricP95, results.MetricP99, results.MetricErrorRate}

// The figures of a whole step compared besides Metrics, where both results
// have them: its deliveries (with sinks) and its watched target's CPU and
// memory. A repeated step keeps them once (its deliveries summed over its
// repeats, its target's from the last repeat), so they are compared as
// deltas, with no noise estimate, unless the repeats carry their values.
const (
	// MetricDelivered is the share of the step's accepted ids delivered
	// by its end (a fraction), as the SLO's delivered term reads it.
	MetricDelivered = "delivered"
	// MetricDeliveryP50 and MetricDeliveryP99 are the send → delivery
	// latency's percentiles, in milliseconds.
	MetricDeliveryP50 = "delivery_p50"
	MetricDeliveryP99 = "delivery_p99"
	// MetricTargetCPU is the watched target's CPU in percent of one core:
	// less for the same load is better.
	MetricTargetCPU = "target_cpu"
	// MetricTargetRSS is its resident memory at the window's end, in MB.
	MetricTargetRSS = "target_rss"
)

// StepMetrics are those figures, in the order reports show them.
var StepMetrics = []string{MetricDelivered, MetricDeliveryP50, MetricDeliveryP99, MetricTargetCPU, MetricTargetRSS}

// The tests a change can be judged by.
const (
	TestRank = "rank" // Mann-Whitney U, at least MinRankRepeats per side
	TestCoV  = "cov"  // the CoV rule, 2 to 4 repeats
	TestNone = "none" // single runs: no noise estimate
)

// The directions of a change, and the verdicts of a comparison.
const (
	Worse   = "worse"
	Better  = "better"
	Same    = "same"
	Unknown = "unknown"
)

// Options configures Compare.
type Options struct {
	// MinEffect is the smallest change, in percent, that can count as
	// significant (the cli's default is DefaultMinEffect). Zero: any.
	MinEffect float64
	// MinAbs is the least a latency must move to count (--min-abs; the
	// cli's default is DefaultMinAbs): a latency's floor is the largest of
	// MinAbs, FloorShareOfP50 of its p50 and the histogram's resolution.
	// Zero: the other two alone.
	MinAbs time.Duration
	// Thresholds are hard limits on deltas (--threshold); crossing one
	// fails the comparison whatever the tests say.
	Thresholds []Threshold
	// A and B label the two results (their file names) in the report.
	A, B string
}

// Report is the answer of Compare.
type Report struct {
	// A and B label the results compared; RepeatsA and RepeatsB are the
	// most repeats a step of each had (1: single runs).
	A        string `json:"a"`
	B        string `json:"b"`
	RepeatsA int    `json:"repeats_a"`
	RepeatsB int    `json:"repeats_b"`
	// Verdict is worse (a significant change for the worse), better,
	// same, or unknown (no noise estimate, nothing matched, host busy).
	Verdict string `json:"verdict"`
	// Test states the tests used and their rules.
	Test string `json:"test"`
	// Comparisons counts the changes judged (control excluded); Tested
	// those of them with a noise estimate (repeats on both sides).
	Comparisons  int     `json:"comparisons"`
	Tested       int     `json:"tested"`
	MinEffectPct float64 `json:"min_effect_pct"`
	// MinAbsMS is Options.MinAbs in milliseconds.
	MinAbsMS float64 `json:"min_abs_ms"`
	// Control is the control scenario's name; HostBusy is true when it
	// moved between A and B, and then no other change is significant:
	// those that would have been are marked Suppressed, and the verdict
	// is unknown (compare could not tell).
	Control  string `json:"control,omitempty"`
	HostBusy bool   `json:"host_busy"`
	// HostOtherA and HostOtherB are the CPU the host's other processes
	// used during each result's steps (the median over them, in percent of
	// one core; results.Generator.HostOtherPct), and HostStealA and
	// HostStealB the CPU the hypervisor took; nil where a side was not
	// measured. HostBusy is also set when they differ by more than
	// HostBusyDelta (steal: HostStealDelta): the machines were not equally
	// quiet, whatever the control says.
	HostOtherA *float64 `json:"host_other_cpu_pct_a,omitempty"`
	HostOtherB *float64 `json:"host_other_cpu_pct_b,omitempty"`
	HostStealA *float64 `json:"host_steal_pct_a,omitempty"`
	HostStealB *float64 `json:"host_steal_pct_b,omitempty"`
	// TailOnly is true when, with no control, every change for the worse
	// was in a tail percentile (p95, p99) while the same step's p50 and
	// throughput held: what a busier runner does to a service as well as
	// a slower service; those changes are Suppressed and the verdict is
	// unknown.
	TailOnly bool `json:"tail_only,omitempty"`
	// Why says why compare could not tell, when it could not (HostBusy or
	// TailOnly), in a sentence.
	Why string `json:"why,omitempty"`
	// Crossed lists the thresholds crossed, each with where.
	Crossed []string `json:"thresholds_crossed"`
	// Notes are what the reader should know: unmatched steps, the control.
	Notes   []string `json:"notes"`
	Changes []Change `json:"changes"`
	// oneSided holds the step figures found in one result only, each
	// noted once.
	oneSided map[string]bool
	thin     bool // the thin control is noted

}

// Change is one metric of one step (and scenario) in A and in B.
type Change struct {
	// Step is the step's index in A, StepB in B (they differ only for find
	// and --each results, matched by level); TargetRate or VUs is the
	// step's level.
	Step  int `json:"step"`
	StepB int `json:"step_b"`
	// StepScenario is the scenario the step ran alone (--each); empty for
	// the plan's mix. Such steps are matched by scenario and level.
	StepScenario string  `json:"step_scenario,omitempty"`
	TargetRate   float64 `json:"target_rate,omitempty"`
	VUs          int     `json:"vus,omitempty"`
	// Scenario is empty for the whole step.
	Scenario string `json:"scenario"`
	Metric   string `json:"metric"`
	// A and B are the figures (medians over repeats): rates per second,
	// latencies in milliseconds, error_rate a fraction.
	A float64 `json:"a"`
	B float64 `json:"b"`
	// DeltaPct is (B − A) / A in percent; null when A is 0 and B is not
	// (or A is so small that the percentage is not finite).
	DeltaPct *float64 `json:"delta_pct"`
	// Significant: the test says so, the change exceeds the minimum
	// effect and, for a latency, its floor, and the host was not busy.
	Significant bool `json:"significant"`
	// Suppressed marks a change that would have been significant but for
	// the control moving (the host was busy).
	Suppressed bool `json:"suppressed,omitempty"`
	// FloorMS is a latency's floor: a move of less than this many
	// milliseconds never counts (see Options.MinAbs). Zero for the other
	// metrics.
	FloorMS float64 `json:"floor_ms,omitempty"`
	// PValue and U are the rank test's (null otherwise); U counts the
	// pairs in which A's value exceeds B's, ties counting one half.
	PValue *float64 `json:"p_value"`
	U      *float64 `json:"u,omitempty"`
	// Direction is worse, better or same, whether significant or not.
	Direction string `json:"direction"`
	// Test is rank, cov or none; NA and NB the repeats; CoVA and CoVB
	// their CoV in percent (with at least 2 repeats).
	Test string  `json:"test"`
	NA   int     `json:"n_a"`
	NB   int     `json:"n_b"`
	CoVA float64 `json:"cov_a_pct,omitempty"`
	CoVB float64 `json:"cov_b_pct,omitempty"`
	// Control marks the control scenario's changes (its rows in a mix,
	// and its own steps with --each); Moved is true when it moved past its
	// tolerance.
	Control bool `json:"control,omitempty"`
	Moved   bool `json:"moved,omitempty"`
	// Threshold is the --threshold this change crossed, if any.
	Threshold string `json:"threshold,omitempty"`
	// TargetRateB and VUsB are B's level: A's, except for steps of runs
	// matched by index at another level (a note says so). ValuesA and
	// ValuesB are each repeat's value (one for a single run), whose medians
	// are A and B. They are for the renderers that plot (the HTML page) and
	// are not in the JSON.
	TargetRateB float64   `json:"-"`
	VUsB        int       `json:"-"`
	ValuesA     []float64 `json:"-"`
	ValuesB     []float64 `json:"-"`
	// answers is, for the control's changes, the fewest answers a repeat
	// of it had on either side: a tail percentile of fewer answers than
	// its rank needs is not judged (see tailNeeds).
	answers int64
	// alone says whether the step ran its scenario alone (--each): only
	// then is a scenario's throughput its own measurement. In an open mix
	// it is its share of the arrivals, drawn by weight (the same draw with
	// the same seed), whatever the host; in a closed mix it is the users'
	// share of their iterations over the mean iteration time, which every
	// other scenario's latency lengthens: a control there would move with
	// the change under test.
	alone bool
}

// Compare compares B with the baseline A.
func Compare(a, b *results.Result, o Options) *Report {
	r := &Report{A: o.A, B: o.B, RepeatsA: a.Repeats(), RepeatsB: b.Repeats(), MinEffectPct: o.MinEffect,
		MinAbsMS: ms(o.MinAbs), Control: b.Control, Crossed: []string{}, Notes: []string{}, Changes: []Change{}}
	if r.Control == "" {
		r.Control = a.Control
	} else if a.Control != "" && a.Control != b.Control {
		r.note("the control differs: %q in A, %q in B; %q is used", a.Control, b.Control, b.Control)
	}
	for _, p := range r.pairs(a, b) {
		r.step(p[0], p[1], o)
	}
	r.control()
	r.host(a, b)
	r.tailOnly()
	r.thresholds(o.Thresholds)
	r.verdict()
	return r
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// pairs matches A's steps with B's: by index for runs, by level (target
// rate or users) for find results, whose steps are the search's order;
// the last step of a level is the one that confirmed it. Steps that ran
// one scenario alone (--each) are matched by scenario and level, whatever
// their order.
func (r *Report) pairs(a, b *results.Result) [][2]*results.Step {
	var out [][2]*results.Step
	if a.Search == nil && b.Search == nil && !each(a) && !each(b) {
		for i := range max(len(a.Steps), len(b.Steps)) {
			switch {
			case i >= len(a.Steps):
				r.note("step %d (%s) is only in B", i+1, level(&b.Steps[i]))
			case i >= len(b.Steps):
				r.note("step %d (%s) is only in A", i+1, level(&a.Steps[i]))
			default:
				sa, sb := &a.Steps[i], &b.Steps[i]
				if level(sa) != level(sb) {
					r.note("step %d is %s in A, %s in B: compared by index", i+1, level(sa), level(sb))
				}
				out = append(out, [2]*results.Step{sa, sb})
			}
		}
		return r.complete(out)
	}
	byKey := func(steps []results.Step) map[string]*results.Step {
		m := map[string]*results.Step{}
		for i := range steps {
			m[key(&steps[i])] = &steps[i]
		}
		return m
	}
	ka, kb := byKey(a.Steps), byKey(b.Steps)
	for i := range a.Steps {
		s := &a.Steps[i]
		if ka[key(s)] != s {
			continue // an earlier step of a level tried again
		}
		if sb, ok := kb[key(s)]; ok {
			out = append(out, [2]*results.Step{s, sb})
		} else {
			r.note("%s is only in A", key(s))
		}
	}
	for i := range b.Steps {
		s := &b.Steps[i]
		if _, ok := ka[key(s)]; !ok && kb[key(s)] == s {
			r.note("%s is only in B", key(s))
		}
	}
	if a.Search != nil || b.Search != nil {
		// A's scenarios in their order, each by level.
		order := map[string]int{}
		for i := range a.Steps {
			if _, ok := order[a.Steps[i].Scenario]; !ok {
				order[a.Steps[i].Scenario] = len(order)
			}
		}
		slices.SortStableFunc(out, func(x, y [2]*results.Step) int {
			if d := order[x[0].Scenario] - order[y[0].Scenario]; d != 0 {
				return d
			}
			return cmpLevel(x[0], y[0])
		})
	}
	return r.complete(out)
}

// each reports whether some step of res ran one scenario alone (--each).
func each(res *results.Result) bool {
	return slices.ContainsFunc(res.Steps, func(s results.Step) bool { return s.Scenario != "" })
}

// key names a step for matching: its level, after the scenario it ran
// alone if any, e.g. "landing · 2 VUs".
func key(s *results.Step) string {
	if s.Scenario == "" {
		return level(s)
	}
	return s.Scenario + " · " + level(s)
}

// complete leaves out pairs with an interrupted step, saying so.
func (r *Report) complete(ps [][2]*results.Step) [][2]*results.Step {
	return slices.DeleteFunc(ps, func(p [2]*results.Step) bool {
		if p[0].Interrupted || p[1].Interrupted {
			r.note("%s: left out, interrupted", key(p[0]))
			return true
		}
		return false
	})
}

// level names a step's load, e.g. "200/s" or "50 VUs".
func level(s *results.Step) string {
	if s.Model == "closed" || s.VUs > 0 {
		return fmt.Sprintf("%d VUs", s.VUs)
	}
	return fmt.Sprintf("%s/s", num(s.TargetRate))
}

func cmpLevel(x, y *results.Step) int {
	if x.VUs != y.VUs {
		return x.VUs - y.VUs
	}
	switch {
	case x.TargetRate < y.TargetRate:
		return -1
	case x.TargetRate > y.TargetRate:
		return 1
	}
	return 0
}

// step compares one pair of steps: the whole step, then each scenario
// both have when there are several (one scenario is the step). A step
// that ran the control alone (--each) is the control's.
func (r *Report) step(a, b *results.Step, o Options) {
	at := Change{Step: a.Index, StepB: b.Index, StepScenario: a.Scenario, TargetRate: a.TargetRate, VUs: a.VUs, TargetRateB: b.TargetRate, VUsB: b.VUs,
		Control: r.Control != "" && a.Scenario == r.Control, alone: a.Scenario != ""}
	if at.Control {
		at.answers = min(perRepeat(a, a.Completed), perRepeat(b, b.Completed))
		r.thinControl(a, at.answers)
	}
	p50 := sampleOf(a, nil, results.MetricP50).median
	for _, m := range Metrics {
		r.add(at, sampleOf(a, nil, m), sampleOf(b, nil, m), m, o, p50)
	}
	for _, m := range StepMetrics {
		inA, inB := has(a, m), has(b, m)
		switch {
		case inA && inB:
			r.add(at, sampleOf(a, nil, m), sampleOf(b, nil, m), m, o, p50)
		case inA != inB:
			r.oneSidedNote(m, inA)
		}
	}
	if len(a.Scenarios) < 2 && len(b.Scenarios) < 2 {
		return
	}
	for i := range a.Scenarios {
		sa := &a.Scenarios[i]
		j := slices.IndexFunc(b.Scenarios, func(x results.Breakdown) bool { return x.Name == sa.Name })
		if j < 0 {
			r.note("%s: scenario %q is only in A", level(a), sa.Name)
			continue
		}
		at.Scenario, at.Control, at.answers = sa.Name, sa.Name == r.Control, 0
		if at.Control {
			at.answers = min(perRepeat(a, sa.Completed), perRepeat(b, b.Scenarios[j].Completed))
			r.thinControl(a, at.answers)
		}
		p50 := sampleOf(a, sa, results.MetricP50).median
		for _, m := range Metrics {
			r.add(at, sampleOf(a, sa, m), sampleOf(b, &b.Scenarios[j], m), m, o, p50)
		}
	}
	for _, sb := range b.Scenarios {
		if !slices.ContainsFunc(a.Scenarios, func(x results.Breakdown) bool { return x.Name == sb.Name }) {
			r.note("%s: scenario %q is only in B", level(b), sb.Name)
		}
	}
}

// perRepeat is completed (a step's or its scenario's, summed over its
// repeats) per repeat of step s.
func perRepeat(s *results.Step, completed int64) int64 {
	if s.Repeat != nil && s.Repeat.N > 1 {
		return completed / int64(s.Repeat.N)
	}
	return completed
}

// tailNeeds is the fewest answers a repeat of the control needs for its
// percentile metric to rest on more than its few slowest: 20 for p95, 100
// (ControlMinAnswers) for p99. A tail of fewer is not judged: the max of
// 13 answers moves by 76 % from one run to the next on a quiet host.
func tailNeeds(metric string) int64 {
	switch metric {
	case results.MetricP95:
		return 20
	case results.MetricP99:
		return ControlMinAnswers
	}
	return 0
}

// thinControl notes, once, a control whose repeats of step s answered
// per times each, fewer than ControlMinAnswers: its p99 (below 20, its
// p95) is not judged, being its one or two slowest answers, and the note
// says what weight would give it enough.
func (r *Report) thinControl(s *results.Step, per int64) {
	if per >= ControlMinAnswers || r.thin {
		return
	}
	r.thin = true
	what := "p99"
	if per < tailNeeds(results.MetricP95) {
		what = "p95 and p99"
	}
	r.note("the control %q answered %d times a repeat at %s: too few to judge its %s, which rest on its few slowest answers (only its p50 and what has enough are judged); its tail needs %d a repeat: raise its weight about %.0f×, or lengthen the step",
		r.Control, per, level(s), what, ControlMinAnswers, math.Ceil(float64(ControlMinAnswers)/float64(max(per, 1))))
}

// has reports whether step s has the step figure metric: deliveries
// expected (delivered), some arrived (their latency), or its target's
// process or cgroup measured.
func has(s *results.Step, metric string) bool {
	f := s.FiguresOf("")
	switch metric {
	case MetricDelivered:
		return f.Expected > 0
	case MetricDeliveryP50, MetricDeliveryP99:
		return f.Arrived > 0
	case MetricTargetCPU, MetricTargetRSS:
		return s.Target.Measured()
	}
	return false
}

// oneSidedNote says, once for each kind of step figure, that only A (inA)
// or only B has it, so it is not compared.
func (r *Report) oneSidedNote(metric string, inA bool) {
	what := "deliveries"
	if metric == MetricTargetCPU || metric == MetricTargetRSS {
		what = "the target's CPU and memory"
	}
	side, other := "A", "B"
	if !inA {
		side, other = "B", "A"
	}
	if r.oneSided == nil {
		r.oneSided = map[string]bool{}
	}
	if key := what + side; !r.oneSided[key] {
		r.oneSided[key] = true
		r.note("%s: measured in %s's steps, not in %s's: not compared", what, side, other)
	}
}

// add judges one metric and appends the change; p50 is A's p50 of the
// same step (or scenario), which sets part of a latency's floor.
func (r *Report) add(c Change, a, b sample, metric string, o Options, p50 float64) {
	c.Metric, c.A, c.B, c.NA, c.NB = metric, a.median, b.median, a.n, b.n
	c.ValuesA, c.ValuesB = a.values, b.values
	delta, defined := deltaPct(a.median, b.median)
	if defined {
		c.DeltaPct = &delta
	}
	c.Direction = direction(metric, b.median-a.median)
	big := !defined || math.Abs(delta) >= o.MinEffect
	switch {
	case (metric == results.MetricErrorRate || metric == MetricDelivered) && math.Abs(b.median-a.median) < MinErrorDelta:
		big = false
	case isLatency(metric) && c.Control && a.n >= 2 && b.n >= 2:
		// With repeats the test tells jitter from a move: the floor is the
		// control's own scale, up to --min-abs.
		c.FloorMS = max(min(ms(o.MinAbs), ControlFloorShare*a.median), floorMS(0, 0, max(a.median, b.median)))
		big = big && math.Abs(b.median-a.median) >= c.FloorMS
	case isLatency(metric):
		c.FloorMS = floorMS(o.MinAbs, p50, max(a.median, b.median))
		big = big && math.Abs(b.median-a.median) >= c.FloorMS
	}
	switch {
	case a.n >= MinRankRepeats && b.n >= MinRankRepeats:
		c.Test = TestRank
		p, u := rankTest(a.values, b.values)
		c.PValue, c.U = &p, &u
		c.Significant = p < Alpha && big
	case a.n >= 2 && b.n >= 2:
		c.Test = TestCoV
		if defined {
			c.Significant = big && math.Abs(delta) > CoVFactor*max(a.cov, b.cov)
		} else {
			c.Significant = big && beyondRange(a, b)
		}
	default:
		c.Test = TestNone
	}
	if a.n >= 2 && b.n >= 2 {
		c.CoVA, c.CoVB = a.cov, b.cov
	}
	if c.Direction == Same {
		c.Significant = false
	}
	r.Changes = append(r.Changes, c)
}

// isLatency reports whether metric is a latency percentile.
func isLatency(metric string) bool {
	return metric == results.MetricP50 || metric == results.MetricP95 || metric == results.MetricP99
}

// floorMS is a latency's floor, in milliseconds: the least it must move to
// count. It is the largest of minAbs, FloorShareOfP50 of the p50 and the
// histogram's resolution at the larger of the two figures (values closer
// than that are recorded as one).
func floorMS(minAbs time.Duration, p50, larger float64) float64 {
	res := metrics.Resolution(time.Duration(larger * float64(time.Millisecond)))
	return max(ms(minAbs), FloorShareOfP50*p50, ms(res))
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// beyondRange is the CoV rule's test of a change from 0, whose delta has
// no percentage: B's median lies outside A's range [min, max] by more than
// CoVFactor times the larger side's sample standard deviation.
func beyondRange(a, b sample) bool {
	lo, hi := slices.Min(a.values), slices.Max(a.values)
	gap := max(b.median-hi, lo-b.median)
	return gap > CoVFactor*max(stdDev(a.values), stdDev(b.values))
}

// stdDev returns the sample standard deviation of v; 0 for fewer than two
// values.
func stdDev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	var sum, ss float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}

// deltaPct returns (b − a) / a in percent; false when a is 0 and b is
// not, or a is so small that the percentage is not finite.
func deltaPct(a, b float64) (float64, bool) {
	if a == b {
		return 0, true
	}
	if a == 0 {
		return 0, false
	}
	d := 100 * (b - a) / math.Abs(a)
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return 0, false // from a tiny a: no percentage, as from 0
	}
	return d, true
}

// direction says whether a change of d in metric is worse or better: up
// is worse for latencies, errors and the target's CPU and memory (more of
// them for the same load), down for throughput and the share delivered.
func direction(metric string, d float64) string {
	if d == 0 {
		return Same
	}
	if (d > 0) == upIsWorse(metric) {
		return Worse
	}
	return Better
}

func upIsWorse(metric string) bool {
	return metric != results.MetricThroughput && metric != results.MetricAchieved && metric != MetricDelivered
}
