package results

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Trace is a step's exchanges one by one, kept when the step has events:
// from a second before its first event to the end of its drain, when each
// was meant to start, how long it took and how it ended. Events' recovery
// and windows are measured from it (CostEvents), to the microsecond of
// the exchanges' own times.
type Trace struct {
	// FromS is where the trace begins on the series clock (seconds from the
	// run's start, as Point.T): it holds the step's counted exchanges that
	// ended at or after FromS.
	FromS float64 `json:"from_s"`
	// Kept counts the exchanges in Data, Exchanges those they stand for:
	// the same unless the step had more than a trace holds
	// (metrics.TraceCapacity), when a worker group's exchanges were kept
	// evenly one in 2^k, each standing for 2^k.
	Kept      int64 `json:"kept"`
	Exchanges int64 `json:"exchanges"`
	// Classes names the outcomes ("ok", "limited", "refused"...) that Data
	// refers to by index.
	Classes []string `json:"classes"`
	// Data holds the exchanges in the order of their intended starts, as
	// base64 (standard, padded) of unsigned varints, four per exchange: its
	// intended start in µs (the first's from the run's start, each next
	// one's after the one before), its response time in µs, its class (an
	// index into Classes) and how many exchanges it stands for.
	Data string `json:"data"`
}

// Exchange is one exchange of a Trace.
type Exchange struct {
	// IntendedUS is when it was meant to start, in µs on the series clock.
	IntendedUS int64
	// LatencyUS is its response time (end − intended) in µs.
	LatencyUS int64
	// Class is how it ended: "ok", "limited", or a failure class.
	Class string
	// Weight is how many exchanges it stands for (see Trace.Kept).
	Weight int64
}

// Failed reports whether the exchange failed (it was neither answered OK
// nor limited).
func (x Exchange) Failed() bool { return x.Class != "ok" && x.Class != "limited" }

// endUS is when it ended, in µs on the series clock.
func (x Exchange) endUS() int64 { return x.IntendedUS + x.LatencyUS }

// NewTrace encodes exchanges (in any order) as a Trace beginning at fromS.
func NewTrace(fromS float64, xs []Exchange) (*Trace, error) {
	xs = slices.SortedStableFunc(slices.Values(xs), func(a, b Exchange) int { return cmp.Compare(a.IntendedUS, b.IntendedUS) })
	t := &Trace{FromS: fromS, Kept: int64(len(xs)), Classes: []string{}}
	buf := make([]byte, 0, 6*len(xs))
	prev := int64(0)
	for _, x := range xs {
		if x.IntendedUS < 0 || x.LatencyUS < 0 || x.Weight < 1 {
			return nil, fmt.Errorf("trace: exchange %+v: want times from the run's start and a weight of at least 1", x)
		}
		c := slices.Index(t.Classes, x.Class)
		if c < 0 {
			c = len(t.Classes)
			t.Classes = append(t.Classes, x.Class)
		}
		buf = binary.AppendUvarint(buf, uint64(x.IntendedUS-prev))
		buf = binary.AppendUvarint(buf, uint64(x.LatencyUS))
		buf = binary.AppendUvarint(buf, uint64(c))
		buf = binary.AppendUvarint(buf, uint64(x.Weight))
		prev = x.IntendedUS
		t.Exchanges += x.Weight
	}
	t.Data = base64.StdEncoding.EncodeToString(buf)
	return t, nil
}

// Decode returns the trace's exchanges, in the order of their intended
// starts.
func (t *Trace) Decode() ([]Exchange, error) {
	b, err := base64.StdEncoding.DecodeString(t.Data)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	out := make([]Exchange, 0, max(t.Kept, 0))
	at := int64(0)
	for len(b) > 0 {
		var v [4]uint64
		for i := range v {
			n := 0
			if v[i], n = binary.Uvarint(b); n <= 0 || v[i] > math.MaxInt64/2 {
				return nil, errors.New("trace: truncated or out-of-range data")
			}
			b = b[n:]
		}
		if v[2] >= uint64(len(t.Classes)) || v[3] < 1 {
			return nil, fmt.Errorf("trace: exchange %d: class %d of %d, weight %d", len(out), v[2], len(t.Classes), v[3])
		}
		if int64(v[0]) > math.MaxInt64-at {
			return nil, errors.New("trace: out-of-range data")
		}
		at += int64(v[0])
		out = append(out, Exchange{IntendedUS: at, LatencyUS: int64(v[1]), Class: t.Classes[v[2]], Weight: int64(v[3])})
	}
	return out, nil
}

// mergeTraces merges the traces of one step's parts (agents, segments),
// on one series clock: every part's exchanges, from the latest start of
// theirs (before it, only some parts' would be there). nil when no part
// has a trace.
func mergeTraces(parts []*Trace) (*Trace, error) {
	var all []Exchange
	from, found := math.Inf(-1), false
	for _, p := range parts {
		if p == nil {
			continue
		}
		xs, err := p.Decode()
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		all = append(all, xs...)
		from, found = max(from, p.FromS), true
	}
	if !found {
		return nil, nil
	}
	fromUS := int64(math.Round(from * 1e6))
	all = slices.DeleteFunc(all, func(x Exchange) bool { return x.endUS() < fromUS })
	return NewTrace(from, all)
}

// Shift moves the trace by d seconds on the series clock: a part of a
// step, lined up with the others' (see Step.LineUp).
func (t *Trace) Shift(d float64) error {
	xs, err := t.Decode()
	if err != nil {
		return err
	}
	dUS := int64(math.Round(d * 1e6))
	for i := range xs {
		xs[i].IntendedUS = max(xs[i].IntendedUS+dUS, 0)
	}
	s, err := NewTrace(t.FromS+d, xs)
	if err != nil {
		return err
	}
	*t = *s
	return nil
}
