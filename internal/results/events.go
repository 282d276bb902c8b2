package results

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// Event is what an event did during a run, and what it cost.
type Event struct {
	Name string `json:"name"`
	// Action is pause, kill, restart, rolling, cpu, or run (a command).
	Action string `json:"action"`
	// Step is the index of the step it happened in, from 0 (Step.Index).
	Step int `json:"step"`
	// AtS is when it began, in seconds from the start of the step's
	// counted window.
	AtS float64 `json:"at_s"`
	// StartS is when it began on the series clock: seconds from the run's
	// start, as Point.T.
	StartS float64 `json:"start_s"`
	// DurationS is how long it lasted: a pause its for, a restart until
	// the new target answered, a command until it exited.
	DurationS float64 `json:"duration_s"`
	// ExitCode is a run command's; nil for an action.
	ExitCode *int `json:"exit_code,omitempty"`
	// Output is the tail of a run command's output.
	Output string `json:"output,omitempty"`
	// Error says why the action failed, if it did.
	Error string `json:"error,omitempty"`
	// Required says its failure fails the run.
	Required bool `json:"required,omitempty"`
	// Handover says how a rolling deploy knew that its new copy was ready
	// before it stopped the old one: the new copy's own listening socket
	// (Linux), or, after HandoverNotChecked, why that could not be checked.
	Handover string `json:"handover,omitempty"`

	// Window is what the exchanges of the seconds from its start until
	// its recovery did (filled by CostEvents).
	Window *EventWindow `json:"window,omitempty"`
	// RecoveryS is the seconds from its end until the first of
	// RecoverySeconds consecutive seconds within the limits (see
	// CostEvents); nil when that never came within its step, or could not
	// be measured, and Recovery then says which.
	RecoveryS *float64 `json:"recovery_s"`
	Recovery  string   `json:"recovery,omitempty"`
}

// EventWindow is the figures of an event's seconds: those that ended
// after its start, up to the start of its recovery (or to its step's last
// second). Counts are the seconds' sums; the percentiles are the merged
// seconds' (when every second kept its histogram; otherwise the greatest
// per-second figure, an upper bound).
type EventWindow struct {
	// FromS and ToS bound the window on the series clock: the event's
	// start, and its recovery's (or the step's last second's end).
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// Completed and Failed count the window's exchanges; Errors splits
	// Failed by class, when the series' points have them.
	Completed int64            `json:"completed"`
	Failed    int64            `json:"failed"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	// ErrorRate is Failed ÷ Completed, a fraction in [0, 1].
	ErrorRate float64 `json:"error_rate"`
	// P50MS, P99MS and MaxMS are response times, in milliseconds.
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
}

// HandoverNotChecked begins an Event's Handover when the rolling deploy
// could not tell its new copy's readiness from the old copy's.
const HandoverNotChecked = "not checked: "

// How CostEvents judges recovery.
const (
	// RecoverySeconds is how many consecutive seconds within the limits
	// make a recovery.
	RecoverySeconds = 3
	// BaselineSeconds is how many seconds before an event set the limits
	// a second must meet when the SLO has no term for them, and
	// BaselineFactor how far above those seconds' figures it may be.
	BaselineSeconds = 5
	BaselineFactor  = 1.5
	// BaselineSlackMS is the least a p99 limit taken from the baseline
	// allows above it: a sub-millisecond p99 moves by more than half of
	// itself from one second to the next (timers, the scheduler), which is
	// not a target still hurting.
	BaselineSlackMS = 5
)

// Why an event's RecoveryS is nil.
const (
	NotRecovered      = "did not recover"
	NotRecoveredYet   = "did not recover before the step was cut short"
	NoBaseline        = "no baseline before the event"
	NoSeries          = "its step has no series"
	seriesClockSlackS = 1e-6 // float noise on the series clock
)

// CostEvents fills each event's Window and recovery from its step's
// series. It is pure: it reads the events and the steps, and writes the
// events only. Evaluate calls it, so that every judgement recomputes it.
//
// A second counts as recovered when it completed an exchange (a dead
// target answers nothing) and its p99 and error rate are within the
// limits: the SLO's terms on them (p99 and errors with < or <=, of the
// whole step or of the scenario it ran alone), or, for a figure the SLO
// has no term on, BaselineFactor × that figure over the BaselineSeconds
// before the event (see baseline). The recovery is the first run of
// RecoverySeconds consecutive recovered seconds that begin at or after
// the event's end (StartS + DurationS); RecoveryS is that run's start
// minus the event's end. A missing second breaks a run.
func (r *Result) CostEvents(terms []slo.Term) {
	for i := range r.Events {
		e := &r.Events[i]
		e.Window, e.RecoveryS, e.Recovery = nil, nil, ""
		s := r.stepOf(e.Step)
		if s == nil || len(s.Series) == 0 {
			e.Recovery = NoSeries
			continue
		}
		to := s.Series[len(s.Series)-1].T
		lim, ok := limitsFor(s, terms, e.StartS)
		at, found := 0.0, false
		if ok {
			at, found = recovery(s.Series, lim, e.StartS+e.DurationS)
		}
		switch {
		case found:
			rec := math.Round(max(at-e.StartS-e.DurationS, 0)*1000) / 1000 // to the ms: no float noise
			e.RecoveryS, to = &rec, at
		case !ok:
			e.Recovery = NoBaseline
		case s.Interrupted:
			e.Recovery = NotRecoveredYet
		default:
			e.Recovery = NotRecovered
		}
		w := window(s.Series, e.StartS, max(to, e.StartS))
		e.Window = &w
	}
}

// stepOf returns the step of that index, or nil.
func (r *Result) stepOf(index int) *Step {
	for i := range r.Steps {
		if r.Steps[i].Index == index {
			return &r.Steps[i]
		}
	}
	return nil
}

// limits are what a second must meet to count as recovered: the SLO's
// terms, and the baseline's bounds for the figures they leave out.
type limits struct {
	terms []slo.Term
	// p99MS and errRate (a fraction) bound a second's figures when set.
	p99MS, errRate *float64
}

// limitsFor returns the limits of the step's seconds after an event that
// began at start; false when a figure needs a baseline and there is none.
func limitsFor(s *Step, terms []slo.Term, start float64) (limits, bool) {
	var l limits
	var p99, errs bool
	for _, t := range terms {
		if t.Op != "<" && t.Op != "<=" || t.Scenario != "" && t.Scenario != s.Scenario {
			continue
		}
		switch t.Metric {
		case "p99":
			p99 = true
		case "errors":
			errs = true
		default:
			continue
		}
		l.terms = append(l.terms, t)
	}
	if p99 && errs {
		return l, true
	}
	b, ok := baseline(s.Series, start)
	if !ok {
		return l, false
	}
	if !p99 {
		v := max(BaselineFactor*b.P99MS, b.P99MS+BaselineSlackMS)
		l.p99MS = &v
	}
	if !errs {
		v := BaselineFactor * b.ErrorRate
		l.errRate = &v
	}
	return l, true
}

// met reports whether second p is within the limits. Baseline bounds
// admit equality, so a baseline without errors (1.5 × 0) admits a second
// only without errors: a target that failed nothing before the event has
// recovered when it fails nothing again.
func (l limits) met(p Point) bool {
	if p.Completed == 0 {
		return false
	}
	f := slo.Figures{Latency: metrics.Latency{P99: p.P99}, Completed: p.Completed, Failed: p.Failed, Limited: p.Limited}
	for _, t := range l.terms {
		if _, ok := t.Eval(f); !ok {
			return false
		}
	}
	if l.p99MS != nil && p.P99 > *l.p99MS {
		return false
	}
	return l.errRate == nil || float64(p.Failed)/float64(p.Completed) <= *l.errRate
}

// baseline returns the figures of the BaselineSeconds seconds that ended
// at or before start (those that completed something: a quiet warm-up
// second says nothing); false when there is none.
func baseline(series []Point, start float64) (EventWindow, bool) {
	var in []Point
	for _, p := range series {
		if p.T <= start+seriesClockSlackS && p.T > start-BaselineSeconds+seriesClockSlackS && p.Completed > 0 {
			in = append(in, p)
		}
	}
	if len(in) == 0 {
		return EventWindow{}, false
	}
	return figures(in), true
}

// recovery returns the start, on the series clock, of the first run of
// RecoverySeconds consecutive seconds within l that begin at or after end.
func recovery(series []Point, l limits, end float64) (float64, bool) {
	run, first := 0, 0
	for i, p := range series {
		if secondStart(series, i) < end-seriesClockSlackS {
			continue
		}
		if run > 0 && p.T-series[i-1].T > 1.5 {
			run = 0 // a missing second: not consecutive
		}
		if !l.met(p) {
			run = 0
			continue
		}
		if run == 0 {
			first = i
		}
		if run++; run == RecoverySeconds {
			return secondStart(series, first), true
		}
	}
	return 0, false
}

// secondStart is when the i-th second began: a second before its end, or
// at the end of the one before when that is later (a step's last second
// can be short).
func secondStart(series []Point, i int) float64 {
	s := series[i].T - 1
	if i > 0 {
		s = max(s, series[i-1].T)
	}
	return s
}

// window returns the figures of the seconds that ended after from and by
// to.
func window(series []Point, from, to float64) EventWindow {
	var in []Point
	for _, p := range series {
		if p.T > from+seriesClockSlackS && p.T <= to+seriesClockSlackS {
			in = append(in, p)
		}
	}
	w := figures(in)
	w.FromS, w.ToS = from, to
	return w
}

// figures sums seconds: counts, errors by class, and the percentiles of
// their merged histograms. When a second that completed something has no
// histogram (a run that did not keep them) or one does not decode, the
// percentiles are the greatest of the seconds' own: an upper bound of
// the window's p50 and p99 (its max is exact either way).
func figures(points []Point) EventWindow {
	var w EventWindow
	h := metrics.NewHistogram()
	merged := true
	for _, p := range points {
		w.Completed += p.Completed
		w.Failed += p.Failed
		for k, v := range p.Errors {
			if w.Errors == nil {
				w.Errors = map[string]int64{}
			}
			w.Errors[k] += v
		}
		w.P50MS, w.P99MS, w.MaxMS = max(w.P50MS, p.P50), max(w.P99MS, p.P99), max(w.MaxMS, p.Max)
		merged = merged && mergeSecond(h, p)
	}
	if w.Completed > 0 {
		w.ErrorRate = float64(w.Failed) / float64(w.Completed)
	}
	if merged && h.TotalCount() > 0 {
		w.P50MS, w.P99MS, w.MaxMS = metrics.Quantile(h, 0.50), metrics.Quantile(h, 0.99), metrics.Quantile(h, 1)
	}
	return w
}

// mergeSecond merges p's histogram into h; false when p completed
// something and has no histogram that decodes.
func mergeSecond(h *hdrhistogram.Histogram, p Point) bool {
	if p.Completed == 0 {
		return true
	}
	if p.Histogram == "" {
		return false
	}
	return mergeEncoded(h, p.Histogram) == nil
}

// EventFigures returns what recovery terms judge: the events of the step
// of that index, or of every step not cut short when index is -1 (an
// interrupted step is not judged). An event that did not recover, or
// whose recovery was not measured, counts in Unrecovered, and as
// RecoveryMS the time it was watched after its end without recovering.
func (r *Result) EventFigures(index int) slo.Figures {
	var f slo.Figures
	for _, e := range r.Events {
		s := r.stepOf(e.Step)
		if s == nil || index >= 0 && e.Step != index || index < 0 && s.Interrupted {
			continue
		}
		f.Events++
		v := 0.0
		switch {
		case e.RecoveryS != nil:
			v = *e.RecoveryS
		case e.Window != nil:
			f.Unrecovered++
			v = max(e.Window.ToS-e.StartS-e.DurationS, 0)
		default:
			f.Unrecovered++
		}
		f.RecoveryMS = max(f.RecoveryMS, 1000*v)
	}
	return f
}

// TermFigures returns the figures term t reads in step s: the step's (or
// its scenario's), or for a recovery term its events'; false when the
// term has nothing to judge there (a recovery term in a step without
// events), which is not a failure of the step.
func (r *Result) TermFigures(s *Step, t slo.Term) (slo.Figures, bool) {
	if !t.OfEvents() {
		return s.FiguresOf(t.Scenario), true
	}
	f := r.EventFigures(s.Index)
	return f, f.Events > 0
}
