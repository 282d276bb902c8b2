package results

import (
	"cmp"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// The engine that applies the rules of rules.go, and the ways of putting
// values together that fit a field of any struct: put makes one value of
// several, field by field, each by its rule.

// rule says how one field of T (a step's figures, or a value inside them:
// a breakdown, the logins, the generator's, a second, the deliveries)
// becomes one when several are put together: Parts for the parts of one
// step that several generators ran (agents, --segment), Repeats for the
// repeats of one step (--repeat N). Every field has one (field makes it):
// a test fails on a field without, or with two, so that a new figure
// cannot be forgotten by a merge.
type rule[T any] struct {
	// at returns the field's address in a T: what the tests hold the
	// rules to the fields with.
	at             func(*T) any
	Parts, Repeats how[T]
}

// how is one way of putting one field of T together.
type how[T any] struct {
	// name says it, in the tables' documentation and in test failures.
	name string
	// after marks a figure read from other fields of the result once they
	// are put together (percentiles from the merged histogram): it is
	// computed last.
	after bool
	// do sets the field of out from the inputs (and, after, from out's
	// other fields); nil leaves it zero. It writes no other field and
	// none of the inputs.
	do func(out *T, in []*T) error
}

// way is a way of putting together the values of a field of type V of
// T's, given the field: sum, greatest, a histogram merged... at returns
// the field of a T. A row of a table reads
//
//	field(func(s *Figures) *int64 { return &s.Sent }, sum, sum)
//
// where sum, a generic function of the accessor, takes its types from the
// row's: a way that does not fit the field's type does not compile. A way
// of one field's values is values (or a generic function of the accessor,
// as sum); one that reads other fields of T is ofWhole, or a function of
// the accessor typed on T (sameStep, backlog).
type way[T, V any] func(at func(*T) *V) how[T]

// field is the rule of the field at, of type V: its ways for parts and
// for repeats, each typed on V.
func field[T, V any](at func(*T) *V, parts, repeats way[T, V]) rule[T] {
	return rule[T]{at: func(x *T) any { return at(x) }, Parts: parts(at), Repeats: repeats(at)}
}

// put makes one T of ins, each field by its rule in rules: the Parts
// column when parts, else Repeats; the rules marked after last. Each rule
// runs in the order of the table, and the first error stops it.
func put[T any](rules []rule[T], parts bool, ins []T) (T, error) {
	var out T
	in := make([]*T, len(ins))
	for k := range ins {
		in[k] = &ins[k]
	}
	for _, after := range []bool{false, true} {
		for _, r := range rules {
			h := r.Repeats
			if parts {
				h = r.Parts
			}
			if h.after != after || h.do == nil {
				continue
			}
			if err := h.do(&out, in); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// valuesOf returns the inputs' values of the field at.
func valuesOf[T, V any](in []*T, at func(*T) *V) []V {
	out := make([]V, len(in))
	for k, x := range in {
		out[k] = *at(x)
	}
	return out
}

// values is a way made of a function of the inputs' values of the field.
func values[T, V any](name string, of func([]V) (V, error)) way[T, V] {
	return func(at func(*T) *V) how[T] {
		return how[T]{name: name, do: func(out *T, in []*T) error {
			v, err := of(valuesOf(in, at))
			if err != nil {
				return err
			}
			*at(out) = v
			return nil
		}}
	}
}

// ofWhole is a way made of a function of the result so far and the
// inputs, for a field whose value reads others; it returns the field's
// value. after: it reads fields of out, once they are put together.
func ofWhole[T, V any](name string, after bool, of func(out *T, in []*T) (V, error)) way[T, V] {
	return func(at func(*T) *V) how[T] {
		return how[T]{name: name, after: after, do: func(out *T, in []*T) error {
			v, err := of(out, in)
			if err != nil {
				return err
			}
			*at(out) = v
			return nil
		}}
	}
}

// unset is a way that leaves the field zero, for the reason it names.
func unset[T any](why string) how[T] { return how[T]{name: why} }

// number is what sum adds.
type number interface{ ~int | ~int64 | ~float64 }

// The ways that fit a field of any struct of the type they say.

// sum adds numbers.
func sum[T any, V number](at func(*T) *V) how[T] {
	return values[T]("sum", func(v []V) (V, error) {
		var n V
		for _, x := range v {
			n += x
		}
		return n, nil
	})(at)
}

// sumCounts adds maps of counts key by key: a map always.
func sumCounts[T any, K comparable](at func(*T) *map[K]int64) how[T] {
	return values[T]("sum", func(v []map[K]int64) (map[K]int64, error) { return addCounts(v), nil })(at)
}

// sumCountsOrAbsent is sumCounts, with no map when no key was counted.
func sumCountsOrAbsent[T any, K comparable](at func(*T) *map[K]int64) how[T] {
	return values[T]("sum, absent when none", func(v []map[K]int64) (map[K]int64, error) {
		if m := addCounts(v); len(m) > 0 {
			return m, nil
		}
		return nil, nil
	})(at)
}

// addCounts adds maps of counts key by key.
func addCounts[K comparable](v []map[K]int64) map[K]int64 {
	out := map[K]int64{}
	for _, m := range v {
		for k, n := range m {
			out[k] += n
		}
	}
	return out
}

// greatest is the largest value (or 0, when every one is below it).
func greatest[T any, V cmp.Ordered](at func(*T) *V) how[T] {
	return values[T]("max", func(v []V) (V, error) {
		var m V
		for _, x := range v {
			m = max(m, x)
		}
		return m, nil
	})(at)
}

// first is the first part's: the same in every part, or said once.
func first[T, V any](at func(*T) *V) how[T] {
	return values[T]("first", func(v []V) (V, error) { return v[0], nil })(at)
}

// last is the last repeat's: not a figure of the repeats (the level, the
// window), or the state they left (the series of the last).
func last[T, V any](at func(*T) *V) how[T] {
	return values[T]("last", func(v []V) (V, error) { return v[len(v)-1], nil })(at)
}

// anyOf is true when any one is.
func anyOf[T any](at func(*T) *bool) how[T] {
	return values[T]("or", func(v []bool) (bool, error) { return slices.Contains(v, true), nil })(at)
}

// median is the median of the repeats' values.
func median[T any](at func(*T) *float64) how[T] {
	return values[T]("median of repeats", func(v []float64) (float64, error) { return Median(v), nil })(at)
}

// medianPercentiles is each percentile's median over the repeats, and the
// largest maximum.
func medianPercentiles[T any](at func(*T) *metrics.Latency) how[T] {
	return values[T]("median of repeats", func(v []metrics.Latency) (metrics.Latency, error) { return medianLatency(v), nil })(at)
}

// union lists every value once, in the order they came; nil when none.
func union[T any](at func(*T) *[]string) how[T] {
	return values[T]("union", func(v [][]string) ([]string, error) { return unionOf(v, nil), nil })(at)
}

// unionOrEmpty is union, an empty list when none.
func unionOrEmpty[T any](at func(*T) *[]string) how[T] {
	return values[T]("union, [] when none", func(v [][]string) ([]string, error) { return unionOf(v, []string{}), nil })(at)
}

// unionOf appends to out every value of v once, in the order they come.
func unionOf(v [][]string, out []string) []string {
	for _, l := range v {
		for _, e := range l {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// meanBy is the mean of the inputs' means weighted by their counts in
// the field weight: the mean of everything they are a mean of.
func meanBy[T any](weight func(*T) *int64) way[T, float64] {
	return func(at func(*T) *float64) how[T] {
		return how[T]{name: "mean weighted by the count it is a mean of", do: func(out *T, in []*T) error {
			var total, w float64
			for _, x := range in {
				n := float64(*weight(x))
				total += *at(x) * n
				w += n
			}
			if w > 0 {
				total /= w
			}
			*at(out) = total
			return nil
		}}
	}
}

// summaryOf reads the percentiles of the merged histogram in the field
// hist, once it is merged: never averaged.
func summaryOf[T any](hist func(*T) *string) way[T, metrics.Latency] {
	return ofWhole("read again from the merged histogram", true, func(out *T, _ []*T) (metrics.Latency, error) {
		h, err := decodeOrEmpty(*hist(out))
		if err != nil {
			return metrics.Latency{}, err
		}
		return metrics.Summarize(h), nil
	})
}

// mergedHist merges encoded histograms ("" is none), empty or not.
func mergedHist[T any](at func(*T) *string) how[T] {
	return values[T]("hist-merge", histogram(always))(at)
}

// mergedHistOrEmpty merges encoded histograms, "" when they hold no value.
func mergedHistOrEmpty[T any](at func(*T) *string) how[T] {
	return values[T]("hist-merge, absent when empty", histogram(unlessEmpty))(at)
}

// mergedHistOrNone merges encoded histograms, "" when no input had one.
func mergedHistOrNone[T any](at func(*T) *string) how[T] {
	return values[T]("hist-merge, absent when none", histogram(unlessNone))(at)
}

// When a merged histogram is written.
const (
	always      = iota // always, empty or not
	unlessEmpty        // when it holds a value
	unlessNone         // when an input had one
)

// histogram merges encoded histograms ("" is none), written as when says.
func histogram(when int) func([]string) (string, error) {
	return func(encoded []string) (string, error) {
		h := metrics.NewHistogram()
		found := false
		for _, e := range encoded {
			if err := mergeEncoded(h, e); err != nil {
				return "", err
			}
			found = found || e != ""
		}
		if when == unlessNone && !found || when == unlessEmpty && h.TotalCount() == 0 {
			return "", nil
		}
		return metrics.Encode(h)
	}
}

// The ways that leave a field zero, each for the reason it names.

// judged: measured where the merged step is judged (the coordinator's
// monitor, sinks and sockets), never by a part.
func judged[T, V any](func(*T) *V) how[T] {
	return unset[T]("none: measured where the merged step is judged")
}

// whole marks the fields of a value that the enclosing field's rule takes
// or leaves whole, never put together field by field.
func whole[T, V any](func(*T) *V) how[T] { return unset[T]("whole: by the enclosing field's rule") }

// oneRun: a part of a step is one run, with no repeats to spread over.
func oneRun[T, V any](func(*T) *V) how[T] { return unset[T]("none: a part is one run") }

// oneGenerator: a figure of one generator, which its part's reason says.
func oneGenerator[T, V any](func(*T) *V) how[T] {
	return unset[T]("none: one generator's, which its part's reason says")
}

// ownMachine: each part ran on a machine of its own.
func ownMachine[T, V any](func(*T) *V) how[T] {
	return unset[T]("none: each part's machine is its own")
}

// judgedMerged: said of the merged step by whoever judges it, never by a
// part.
func judgedMerged[T, V any](func(*T) *V) how[T] {
	return unset[T]("none: said when the merged step is judged")
}

// judgedAgain: said of the combined step when it is judged again.
func judgedAgain[T, V any](func(*T) *V) how[T] {
	return unset[T]("none: said when the combined step is judged again")
}

// emptyUntilJudged is an empty list, filled when the merged step is
// judged.
func emptyUntilJudged[T any](at func(*T) *[]string) how[T] {
	return values[T]("[]: said when the merged step is judged", func([][]string) ([]string, error) { return []string{}, nil })(at)
}
