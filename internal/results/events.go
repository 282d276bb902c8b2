package results

import (
	"cmp"
	"math"
	"slices"

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

	// Window is what the exchanges from its start until its recovery did
	// (filled by CostEvents).
	Window *EventWindow `json:"window,omitempty"`
	// RecoveryS is the seconds from its end until the target was back
	// within the limits, to the millisecond: the intended start of the
	// first exchange from which on they held for RecoveryHoldS (see
	// CostEvents), 0 when that is the first exchange after its end; nil
	// when that never came within its step, or could not be measured, and
	// Recovery then says which.
	RecoveryS *float64 `json:"recovery_s"`
	Recovery  string   `json:"recovery,omitempty"`
}

// EventWindow is the figures of what an event cost: its step's exchanges
// that ended after it began and were meant to start before it recovered
// (or before the step's window ended), from the step's trace. Its counts
// are exact while the trace kept every exchange, and otherwise the kept
// ones' weights (see Trace.Kept).
type EventWindow struct {
	// FromS and ToS bound the window on the series clock: the event's
	// start, and its recovery (or the end of the step's window).
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// Completed and Failed count the window's exchanges; Errors splits
	// Failed by class.
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
	// RecoveryHoldS is how long, in seconds, the exchanges from a recovery
	// on must keep within the limits together: those meant to start in
	// that time, cut short by the next event's start and by the end of the
	// step's window.
	RecoveryHoldS = 1.0
	// BaselineSeconds is how many seconds before an event set the limits
	// an exchange must meet when the SLO has no term for them, and
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
	NoTrace           = "its step kept no trace of its exchanges"
	seriesClockSlackS = 1e-6 // float noise on the series clock
)

// CostEvents fills each event's Window and recovery from its step's
// trace (Step.Trace), exchange by exchange. It is pure: it reads the
// events and the steps, and writes the events only. Evaluate calls it, so
// that every judgement recomputes it.
//
// The limits are the SLO's terms on p99 and errors (with < or <=, of the
// whole step or of the scenario it ran alone), or, for a figure the SLO
// has no term on, BaselineFactor × that figure over the BaselineSeconds
// before the event (see baseline).
//
// The recovery is the intended start of the first exchange, of those
// meant to start at or after the event's end (StartS + DurationS), that
// succeeded within the p99 limits itself and from which on the exchanges
// meant to start within RecoveryHoldS (cut short by the next event's start
// and by the end of the step's window) meet the limits together: their
// p99 and their error rate. RecoveryS is its distance from the event's
// end, 0 when it is the first exchange after the end: a target that never
// left the limits recovered at once. Its resolution is the spacing of the
// exchanges.
//
// The Window is what the event cost: the exchanges that ended after it
// began and were meant to start before its recovery (without one, before
// the step's window ended).
func (r *Result) CostEvents(terms []slo.Term) {
	traces := map[int][]Exchange{} // decoded once per call
	for i := range r.Events {
		e := &r.Events[i]
		e.Window, e.RecoveryS, e.Recovery = nil, nil, ""
		s := r.stepOf(e.Step)
		if s == nil || s.Trace == nil {
			e.Recovery = NoTrace
			continue
		}
		xs, ok := traces[s.Index]
		if !ok {
			var err error
			if xs, err = s.Trace.Decode(); err != nil {
				e.Recovery = "its step's trace does not read: " + err.Error()
				continue
			}
			traces[s.Index] = xs
		}
		end := e.StartS + e.DurationS
		to := s.StartS + s.WarmupS + s.DurationS // the window's end
		lim, ok := limitsFor(s, terms, e.StartS)
		at, found := 0.0, false
		if ok {
			at, found = recovery(xs, lim, end, r.holdEnd(e, to))
		}
		switch {
		case found:
			rec := math.Round(max(at-end, 0)*1000) / 1000 // to the ms: no float noise
			e.RecoveryS, to = &rec, at
		case !ok:
			e.Recovery = NoBaseline
		case s.Interrupted:
			e.Recovery = NotRecoveredYet
		default:
			e.Recovery = NotRecovered
		}
		w := window(xs, e.StartS, max(to, e.StartS))
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

// holdEnd is where the hold of e's recovery is cut at the latest: the
// start of the next event of its step that begins after e ends (what
// comes after is that event's), or the end of the step's window.
func (r *Result) holdEnd(e *Event, windowEnd float64) float64 {
	cut := windowEnd
	for _, o := range r.Events {
		if o.Step == e.Step && o.StartS > e.StartS+e.DurationS {
			cut = min(cut, o.StartS)
		}
	}
	return cut
}

// limits are what exchanges must meet to count as recovered: the SLO's
// terms, and the baseline's bounds for the figures they leave out.
type limits struct {
	// p99 bounds the response times: the p99 of exchanges taken together,
	// and each exchange that starts a recovery.
	p99 []bound
	// errs are the SLO's terms on errors.
	errs []slo.Term
	// errRate is the baseline's bound on the error rate (a fraction),
	// when set.
	errRate *float64
}

// bound is a response time's limit, in µs: below it, or up to it too.
type bound struct {
	us     float64
	strict bool
}

func (b bound) admits(us int64) bool {
	if b.strict {
		return float64(us) < b.us
	}
	return float64(us) <= b.us
}

// limitsFor returns the limits of the step's exchanges after an event that
// began at start; false when a figure needs a baseline and there is none.
func limitsFor(s *Step, terms []slo.Term, start float64) (limits, bool) {
	var l limits
	for _, t := range terms {
		if t.Op != "<" && t.Op != "<=" || t.Scenario != "" && t.Scenario != s.Scenario {
			continue
		}
		switch t.Metric {
		case "p99":
			l.p99 = append(l.p99, bound{us: 1000 * t.Value, strict: t.Op == "<"})
		case "errors":
			l.errs = append(l.errs, t)
		}
	}
	if len(l.p99) > 0 && len(l.errs) > 0 {
		return l, true
	}
	b, ok := baseline(s.Series, start)
	if !ok {
		return l, false
	}
	if len(l.p99) == 0 {
		l.p99 = []bound{{us: 1000 * max(BaselineFactor*b.P99MS, b.P99MS+BaselineSlackMS)}}
	}
	if len(l.errs) == 0 {
		v := BaselineFactor * b.ErrorRate
		l.errRate = &v
	}
	return l, true
}

// admits reports whether exchange x may start a recovery: it succeeded
// within every p99 bound.
func (l limits) admits(x Exchange) bool {
	if x.Failed() {
		return false
	}
	for _, b := range l.p99 {
		if !b.admits(x.LatencyUS) {
			return false
		}
	}
	return true
}

// hold is a running sum of exchanges, weighed, against the limits.
type hold struct {
	total, failed int64
	within        []int64 // the weight within each of the limits' p99 bounds
}

func (h *hold) add(l limits, x Exchange, sign int64) {
	if h.within == nil {
		h.within = make([]int64, len(l.p99))
	}
	h.total += sign * x.Weight
	if x.Failed() {
		h.failed += sign * x.Weight
	}
	for i, b := range l.p99 {
		if b.admits(x.LatencyUS) {
			h.within[i] += sign * x.Weight
		}
	}
}

// met reports whether the exchanges of h, together, are within the
// limits. Their p99 is the response time of rank round(0.99 × n), as a
// histogram reads it: it is within a bound when at least that many are.
// Baseline bounds admit equality, so a baseline without errors (1.5 × 0)
// admits no error: a target that failed nothing before the event has
// recovered when it fails nothing again.
func (l limits) met(h *hold) bool {
	if h.total == 0 {
		return false
	}
	rank := max(int64(0.99*float64(h.total)+0.5), 1)
	for i := range l.p99 {
		if h.within[i] < rank {
			return false
		}
	}
	f := slo.Figures{Completed: h.total, Failed: h.failed}
	for _, t := range l.errs {
		if _, ok := t.Eval(f); !ok {
			return false
		}
	}
	return l.errRate == nil || float64(h.failed)/float64(h.total) <= *l.errRate
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

// recovery returns the recovery after an event that ended at end (see
// CostEvents), on the series clock: end itself when the first exchange
// meant to start at or after it starts the recovery; false when none
// before cut does.
func recovery(xs []Exchange, l limits, end, cut float64) (float64, bool) {
	endUS, cutUS, holdUS := toUS(end), toUS(cut), toUS(RecoveryHoldS)
	first, _ := slices.BinarySearchFunc(xs, endUS, func(x Exchange, t int64) int { return cmp.Compare(x.IntendedUS, t) })
	var h hold
	j := first // xs[i:j] are in h
	for i := first; i < len(xs) && xs[i].IntendedUS < cutUS; i++ {
		for until := min(xs[i].IntendedUS+holdUS, cutUS); j < len(xs) && xs[j].IntendedUS < until; j++ {
			h.add(l, xs[j], 1)
		}
		if l.admits(xs[i]) && l.met(&h) {
			if i == first {
				return end, true
			}
			return float64(xs[i].IntendedUS) / 1e6, true
		}
		h.add(l, xs[i], -1)
	}
	return 0, false
}

// toUS converts seconds on the series clock to µs.
func toUS(s float64) int64 { return int64(math.Round(s * 1e6)) }

// window returns the figures of the exchanges that ended after from and
// were meant to start before to: counts, errors by class and the
// percentiles of their response times.
func window(xs []Exchange, from, to float64) EventWindow {
	w := EventWindow{FromS: from, ToS: to}
	fromUS, toUS := toUS(from), toUS(to)
	h := metrics.NewHistogram()
	for _, x := range xs {
		if x.IntendedUS >= toUS {
			break
		}
		if x.endUS() <= fromUS {
			continue
		}
		w.Completed += x.Weight
		if x.Failed() {
			w.Failed += x.Weight
			if w.Errors == nil {
				w.Errors = map[string]int64{}
			}
			w.Errors[x.Class] += x.Weight
		}
		_ = h.RecordValues(min(max(x.LatencyUS, metrics.LowestUS), metrics.HighestUS), x.Weight)
	}
	if w.Completed > 0 {
		w.ErrorRate = float64(w.Failed) / float64(w.Completed)
		w.P50MS, w.P99MS, w.MaxMS = metrics.Quantile(h, 0.50), metrics.Quantile(h, 0.99), metrics.Quantile(h, 1)
	}
	return w
}

// figures sums seconds: counts, errors by class, and the percentiles of
// their merged histograms. When a second that completed something has no
// histogram (a run that did not keep them) or one does not decode, the
// percentiles are the greatest of the seconds' own: an upper bound of
// their p50 and p99 (their max is exact either way).
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
// term has nothing to judge there, which is not a failure of the step: a
// recovery term in a step without events, a login term ("login.p99") in a
// step whose users had all logged in during an earlier step.
func (r *Result) TermFigures(s *Step, t slo.Term) (slo.Figures, bool) {
	if !t.OfEvents() {
		if s.readsLogins(t.Scenario) && s.Logins.Earlier() {
			return slo.Figures{}, false
		}
		return s.FiguresOf(t.Scenario), true
	}
	f := r.EventFigures(s.Index)
	return f, f.Events > 0
}
