package metrics

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Layout says which breakdowns a Tally keeps besides its totals.
type Layout struct {
	// Scenarios is the number of scenarios; iterations are counted per
	// scenario index.
	Scenarios int
	// TagKeys is the number of tag keys; iterations are counted per value of
	// each key.
	TagKeys int
	// TagLimit caps the distinct values kept per tag key; further values
	// fold into Other. Zero: 50.
	TagLimit int
	// Login keeps a histogram of login attempts (Tally.Logins): the plan
	// has a login flow.
	Login bool
}

// Other is the tag value that values past the limit fold into.
const Other = "other"

func (l Layout) limit() int {
	if l.TagLimit <= 0 {
		return 50
	}
	return l.TagLimit
}

// Sub is one breakdown's figures: the iterations of a scenario, or those
// carrying one tag value.
type Sub struct {
	// Latency holds iteration response times (end of the last request −
	// intended start) in microseconds; nil in an interim tally's breakdown
	// (NewInterimTallyFor), which keeps each time in vals instead.
	Latency *hdrhistogram.Histogram
	// Kinds counts iterations by how they ended.
	Kinds Counts
	// BodyBytes sums the response body bytes of the iterations.
	BodyBytes int64
	// vals are an interim breakdown's iteration times in microseconds
	// (clamped to HighestUS, which fits 32 bits), recorded into a
	// histogram when merged into a full tally: a second's iterations cost
	// 4 bytes each, where a histogram costs up to 184 KB (three figures, one
	// hour) whether it holds one time or a million.
	vals []uint32
}

// Scenario breakdowns keep three significant digits like the totals; tag
// breakdowns, which may be many, keep two (a quantile within 1 %).
const tagSigFigs = 2

func newSub(sig int, interim bool) *Sub {
	if interim {
		return &Sub{}
	}
	return &Sub{Latency: hdrhistogram.New(LowestUS, HighestUS, sig)}
}

// Completed counts the iterations that ended.
func (s *Sub) Completed() int64 { return s.Kinds.Completed() }

// OK counts iterations whose every request was accepted.
func (s *Sub) OK() int64 { return s.Kinds[transport.OK] }

// Limited counts iterations ended by a limited status.
func (s *Sub) Limited() int64 { return s.Kinds[transport.Limited] }

// Failed counts iterations that failed.
func (s *Sub) Failed() int64 { return s.Kinds.Failed() }

func (s *Sub) reset() {
	h := s.Latency
	if h != nil {
		h.Reset()
	}
	*s = Sub{Latency: h, vals: s.vals[:0]}
}

// merge adds o into s: o's histogram or times into s's histogram, or, s
// being interim, o's times after its own (an interim breakdown only ever
// takes another's: an interim tally is merged into a full one).
func (s *Sub) merge(o *Sub) {
	switch {
	case s.Latency == nil:
		s.vals = append(s.vals, o.vals...)
	default:
		if o.Latency != nil {
			s.Latency.Merge(o.Latency)
		}
		for _, us := range o.vals {
			_ = s.Latency.RecordValue(int64(us))
		}
	}
	s.Kinds.add(&o.Kinds)
	s.BodyBytes += o.BodyBytes
}

// Iteration is one finished iteration of a scenario.
type Iteration struct {
	// Scenario is the scenario's index.
	Scenario int
	// Tags holds the iteration's value for each tag key ("" when the
	// scenario has no such tag).
	Tags []string
	// Of is when the arrival that began the iteration was meant to start
	// (its login included), which decides the step that counts it;
	// Intended is when its scenario was meant to start (after the login),
	// which its latency is measured from; End when its last request ended.
	Of, Intended, End time.Duration
	// Kind is how it ended: OK, or the kind of the request that ended it.
	Kind transport.Kind
	// BodyBytes sums its responses' body bytes.
	BodyBytes int64
	// Counted is true when Of falls inside the step's counted window.
	Counted bool
}

// breakdowns are a Tally's per-scenario and per-tag figures.
type breakdowns struct {
	layout Layout
	// interim breakdowns keep their iterations' times rather than
	// histograms (NewInterimTallyFor).
	interim   bool
	Scenarios []*Sub
	Tags      []map[string]*Sub
	// Folded counts iterations whose tag value was past the limit and
	// counted under Other.
	Folded int64
}

func newBreakdowns(l Layout, interim bool) breakdowns {
	b := breakdowns{layout: l, interim: interim, Scenarios: make([]*Sub, l.Scenarios), Tags: make([]map[string]*Sub, l.TagKeys)}
	for i := range b.Scenarios {
		b.Scenarios[i] = newSub(SigFigs, interim)
	}
	for i := range b.Tags {
		b.Tags[i] = map[string]*Sub{}
	}
	return b
}

func (b *breakdowns) add(it *Iteration) {
	if !it.Counted || it.Scenario < 0 || it.Scenario >= len(b.Scenarios) {
		return
	}
	us := int64((it.End - it.Intended) / time.Microsecond)
	b.Scenarios[it.Scenario].record(us, it)
	for k, v := range it.Tags {
		if v == "" || k >= len(b.Tags) {
			continue
		}
		sub := b.tagSub(k, v)
		sub.record(us, it)
	}
}

// tagSub returns the Sub of value v of tag key k, creating it while under
// the limit and folding into Other past it.
func (b *breakdowns) tagSub(k int, v string) *Sub {
	m := b.Tags[k]
	if sub, ok := m[v]; ok {
		return sub
	}
	if kept(m) >= b.layout.limit() {
		b.Folded++
		v = Other
		if sub, ok := m[v]; ok {
			return sub
		}
	}
	sub := newSub(tagSigFigs, b.interim)
	m[v] = sub
	return sub
}

func (s *Sub) record(us int64, it *Iteration) {
	us = min(max(us, LowestUS), HighestUS)
	if s.Latency == nil {
		s.vals = append(s.vals, uint32(us))
	} else {
		_ = s.Latency.RecordValue(us)
	}
	s.Kinds[it.Kind]++
	s.BodyBytes += it.BodyBytes
}

func (b *breakdowns) merge(o *breakdowns) {
	for i, s := range o.Scenarios {
		if i < len(b.Scenarios) {
			b.Scenarios[i].merge(s)
		}
	}
	for k, m := range o.Tags {
		if k >= len(b.Tags) {
			continue
		}
		for v, s := range m {
			if s.Completed() == 0 {
				continue // kept from an earlier interval, empty now
			}
			dst, ok := b.Tags[k][v]
			if !ok {
				if kept(b.Tags[k]) >= b.layout.limit() && v != Other {
					b.Folded += s.Completed()
					v = Other
				}
				if dst, ok = b.Tags[k][v]; !ok {
					dst = newSub(tagSigFigs, b.interim)
					b.Tags[k][v] = dst
				}
			}
			dst.merge(s)
		}
	}
	b.Folded += o.Folded
}

func (b *breakdowns) reset() {
	for _, s := range b.Scenarios {
		s.reset()
	}
	for _, m := range b.Tags {
		for _, s := range m {
			s.reset()
		}
	}
	b.Folded = 0
}

// kept counts the values of m other than Other.
func kept(m map[string]*Sub) int {
	if _, ok := m[Other]; ok {
		return len(m) - 1
	}
	return len(m)
}
