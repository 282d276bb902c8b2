package outputs

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// label is one label of a series.
type label struct{ name, value string }

// sample is one value of one series at one time.
type sample struct {
	name   string
	labels []label // sorted by name, without __name__
	value  float64
	at     time.Time
	gauge  bool // else a counter
}

// key identifies a series: its name and labels.
func (s *sample) key() string {
	k := s.name
	for _, l := range s.labels {
		k += "\x00" + l.name + "\x00" + l.value
	}
	return k
}

// state keeps the counters of each step, which outputs send as running
// totals.
type state struct {
	steps  map[string]*stepState
	labels []string // the tag keys written as labels (plan.Labels)
}

type stepState struct {
	requests metrics.Counts
	late     int64
	iters    []metrics.Counts
	tags     map[string]map[string]*metrics.Counts // key → value → counts
}

func newState(labels []string) *state { return &state{steps: map[string]*stepState{}, labels: labels} }

// outcomes are the values of the outcome label, and how a Counts splits
// into them.
var outcomes = []struct {
	name string
	of   func(*metrics.Counts) int64
}{
	{"ok", func(c *metrics.Counts) int64 { return c[transport.OK] }},
	{"failed", func(c *metrics.Counts) int64 { return c.Failed() }},
	{"limited", func(c *metrics.Counts) int64 { return c[transport.Limited] }},
}

// second adds sec to the step's totals and returns its samples.
func (s *state) second(runID string, sec *run.Second) []sample {
	st := s.steps[sec.Label]
	if st == nil {
		st = &stepState{}
		s.steps[sec.Label] = st
	}
	for k := range sec.Kinds {
		st.requests[k] += sec.Kinds[k]
	}
	st.late += sec.Late
	s.addTags(st, sec)
	for len(st.iters) < len(sec.Iterations) {
		st.iters = append(st.iters, metrics.Counts{})
	}
	for i := range sec.Iterations {
		for k := range sec.Iterations[i] {
			st.iters[i][k] += sec.Iterations[i][k]
		}
	}
	base := []label{{"run_id", runID}, {"step", sec.Label}}
	var out []sample
	add := func(name string, v float64, gauge bool, extra ...label) {
		ls := append(append([]label(nil), base...), extra...)
		slices.SortFunc(ls, func(a, b label) int { return strings.Compare(a.name, b.name) })
		out = append(out, sample{name: name, labels: ls, value: v, at: sec.At, gauge: gauge})
	}
	for _, oc := range outcomes {
		add(RequestsTotal, float64(oc.of(&st.requests)), false, label{"outcome", oc.name})
	}
	for i, name := range sec.Scenarios {
		if i >= len(st.iters) {
			break
		}
		for _, oc := range outcomes {
			add(IterationsTotal, float64(oc.of(&st.iters[i])), false, label{"outcome", oc.name}, label{"scenario", name})
		}
	}
	for _, key := range s.labels {
		values := slices.Sorted(maps.Keys(st.tags[key]))
		for _, v := range values {
			for _, oc := range outcomes {
				add(TagIterationsTotal, float64(oc.of(st.tags[key][v])), false, label{"outcome", oc.name}, label{key, v})
			}
		}
	}
	add(LateTotal, float64(st.late), false)
	add(StepIndex, float64(sec.Step), true)
	if sec.TargetRate > 0 {
		add(TargetRate, sec.TargetRate, true)
	}
	if sec.WindowS >= 0.5 { // a sliver of the window's edge gives a noisy rate
		add(AchievedRate, sec.Rate, true)
	}
	if h := sec.Latency; h != nil && h.TotalCount() > 0 {
		for _, q := range Quantiles {
			add(LatencySeconds, quantileSeconds(h.ValueAtQuantile, q), true, label{"quantile", q})
		}
	}
	if sec.TargetCPU != nil {
		add(TargetCPURatio, *sec.TargetCPU/100, true)
	}
	if sec.TargetRSS != nil {
		add(TargetRSSBytes, *sec.TargetRSS*(1<<20), true)
	}
	return out
}

// addTags adds sec's iterations of the tag keys written as labels to the
// step's totals.
func (s *state) addTags(st *stepState, sec *run.Second) {
	for i, key := range sec.TagKeys {
		if i >= len(sec.Tags) || !slices.Contains(s.labels, key) {
			continue
		}
		if st.tags == nil {
			st.tags = map[string]map[string]*metrics.Counts{}
		}
		if st.tags[key] == nil {
			st.tags[key] = map[string]*metrics.Counts{}
		}
		for v, c := range sec.Tags[i] {
			t := st.tags[key][v]
			if t == nil {
				t = &metrics.Counts{}
				st.tags[key][v] = t
			}
			for k := range c {
				t[k] += c[k]
			}
		}
	}
}

// quantileSeconds reads quantile q (a label value such as "0.99") of a
// histogram of microseconds, in seconds; "1" is the maximum.
func quantileSeconds(at func(float64) int64, q string) float64 {
	f, _ := strconv.ParseFloat(q, 64)
	return float64(at(f*100)) / 1e6
}

// step returns a finished step's own samples: its quantiles over the window.
func (s *state) step(runID string, st *results.Step) []sample {
	label0 := stepLabelOf(st)
	at := time.Now()
	lat := st.LatencyMS
	out := make([]sample, 0, len(Quantiles))
	for _, q := range []struct {
		q string
		v float64
	}{{"0.5", lat.P50}, {"0.9", lat.P90}, {"0.99", lat.P99}, {"0.999", lat.P999}, {"1", lat.Max}} {
		out = append(out, sample{name: StepLatencySeconds, labels: []label{{"quantile", q.q}, {"run_id", runID}, {"step", label0}}, value: q.v / 1e3, at: at, gauge: true})
	}
	byState := func(name string, states []string, values ...int64) {
		for i, v := range values {
			out = append(out, sample{name: name, labels: []label{{"run_id", runID}, {"state", states[i]}, {"step", label0}}, value: float64(v), at: at, gauge: true})
		}
	}
	if d := st.Delivery; d != nil {
		byState(StepDeliveryIDs, []string{"expected", "delivered", "lost", "duplicates"}, d.Expected, d.Delivered, d.Lost, d.Duplicates)
	}
	if w := st.WebSocket; w != nil {
		byState(StepSockets, []string{"open", "opened", "failed", "dropped"}, w.Open, w.Opened, w.Failed, w.Dropped)
	}
	return out
}

// stepLabelOf names a finished step as run.Second's Label does.
func stepLabelOf(st *results.Step) string {
	if st.VUs > 0 {
		return strconv.Itoa(st.VUs) + " VUs"
	}
	return strconv.FormatFloat(st.TargetRate, 'g', -1, 64) + "/s"
}
