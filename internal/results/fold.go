package results

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// The engine that applies the rules of rules.go: put makes one value of
// several, field by field, each by its rule.

// how is one way of putting a field's values together.
type how struct {
	// name says it, in the tables' documentation and in test failures.
	name string
	// after marks a figure read from other fields of the result once they
	// are put together (percentiles from the merged histogram): it is
	// computed last.
	after bool
	// do sets the field of f.out from the same field of f.in; nil leaves
	// it zero.
	do func(f *fold) error
}

// fold is one field being put together.
type fold struct {
	i   int             // the field's index in its struct
	out reflect.Value   // the struct being made (addressable)
	in  []reflect.Value // the structs it is made of (addressable)
}

func (f *fold) dst() reflect.Value      { return f.out.Field(f.i) }
func (f *fold) src(k int) reflect.Value { return f.in[k].Field(f.i) }

// put makes one T of ins, each field by its rule in rules: the Parts
// column when parts, else Repeats.
func put[T any](rules []rule, parts bool, ins []T) (T, error) {
	var out T
	o := reflect.ValueOf(&out).Elem()
	in := make([]reflect.Value, len(ins))
	for k := range ins {
		in[k] = reflect.ValueOf(&ins[k]).Elem()
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
			f, ok := o.Type().FieldByName(r.Field)
			if !ok {
				panic(fmt.Sprintf("results: rule for %s.%s, which has no such field", o.Type().Name(), r.Field))
			}
			if err := h.do(&fold{i: f.Index[0], out: o, in: in}); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// The rules that apply to a field of any type they fit.
var (
	// sum adds numbers, and maps of counts key by key (a map always).
	sum = how{name: "sum", do: func(f *fold) error {
		d := f.dst()
		for k := range f.in {
			add(d, f.src(k))
		}
		return nil
	}}
	// sumOrAbsent is sum, with no map when no key was counted.
	sumOrAbsent = how{name: "sum, absent when none", do: func(f *fold) error {
		d := f.dst()
		for k := range f.in {
			add(d, f.src(k))
		}
		if d.Kind() == reflect.Map && d.Len() == 0 {
			d.SetZero()
		}
		return nil
	}}
	// greatest is the largest value (or 0, when every one is below it).
	greatest = how{name: "max", do: func(f *fold) error {
		d := f.dst()
		for k := range f.in {
			switch s := f.src(k); s.Kind() {
			case reflect.Float64:
				d.SetFloat(max(d.Float(), s.Float()))
			default:
				d.SetInt(max(d.Int(), s.Int()))
			}
		}
		return nil
	}}
	// first is the first part's: the same in every part, or said once.
	first = how{name: "first", do: func(f *fold) error {
		f.dst().Set(f.src(0))
		return nil
	}}
	// last is the last repeat's: not a figure of the repeats (the level,
	// the window), or the state they left (the series of the last).
	last = how{name: "last", do: func(f *fold) error {
		f.dst().Set(f.src(len(f.in) - 1))
		return nil
	}}
	// anyOf is true when any one is.
	anyOf = how{name: "or", do: func(f *fold) error {
		for k := range f.in {
			if f.src(k).Bool() {
				f.dst().SetBool(true)
			}
		}
		return nil
	}}
	// median is the median of the repeats' values; of a Latency, each
	// percentile's median and the largest maximum.
	median = how{name: "median of repeats", do: func(f *fold) error {
		switch f.dst().Interface().(type) {
		case float64:
			f.dst().SetFloat(Median(valuesOf[float64](f)))
		case metrics.Latency:
			f.dst().Set(reflect.ValueOf(medianLatency(valuesOf[metrics.Latency](f))))
		default:
			panic("results: median of a " + f.dst().Type().String())
		}
		return nil
	}}
	// union lists every value once, in the order they came.
	union = how{name: "union", do: func(f *fold) error {
		var out []string
		for _, v := range valuesOf[[]string](f) {
			for _, e := range v {
				if !slices.Contains(out, e) {
					out = append(out, e)
				}
			}
		}
		f.dst().Set(reflect.ValueOf(out))
		return nil
	}}
	// judged is left unset: measured where the merged step is judged (the
	// coordinator's monitor, sinks and sockets), never by a part.
	judged = unset("none: measured where the merged step is judged")
	// whole marks the fields of a value that the enclosing rule takes or
	// leaves whole, never put together field by field.
	whole = unset("whole: by the enclosing field's rule")
)

// unset is a rule that leaves the field zero, for the reason it names.
func unset(why string) how { return how{name: why} }

// valuesOf returns the inputs' values of f's field.
func valuesOf[V any](f *fold) []V {
	out := make([]V, len(f.in))
	for k := range f.in {
		out[k] = f.src(k).Interface().(V)
	}
	return out
}

// values is a rule made of a function of the inputs' values of the field.
func values[V any](name string, of func([]V) (V, error)) how {
	return how{name: name, do: func(f *fold) error {
		v, err := of(valuesOf[V](f))
		if err != nil {
			return err
		}
		f.dst().Set(reflect.ValueOf(&v).Elem())
		return nil
	}}
}

// ofWhole is a rule made of a function of the result and its inputs, for
// a field that reads others; it sets that field only.
func ofWhole[T any](name string, after bool, of func(out *T, in []*T) error) how {
	return how{name: name, after: after, do: func(f *fold) error {
		in := make([]*T, len(f.in))
		for k := range f.in {
			in[k] = f.in[k].Addr().Interface().(*T)
		}
		return of(f.out.Addr().Interface().(*T), in)
	}}
}

// add adds s into d: numbers, or a map of counts.
func add(d, s reflect.Value) {
	switch d.Kind() {
	case reflect.Int, reflect.Int64:
		d.SetInt(d.Int() + s.Int())
	case reflect.Float64:
		d.SetFloat(d.Float() + s.Float())
	case reflect.Map:
		if d.IsNil() {
			d.Set(reflect.MakeMap(d.Type()))
		}
		for it := s.MapRange(); it.Next(); {
			k := it.Key()
			var v int64
			if e := d.MapIndex(k); e.IsValid() {
				v = e.Int()
			}
			d.SetMapIndex(k, reflect.ValueOf(v+it.Value().Int()))
		}
	default:
		panic("results: sum of a " + d.Type().String())
	}
}

// meanBy is the mean of the inputs' means weighted by the counts in their
// field weight: the mean of everything they are a mean of.
func meanBy(weight string) how {
	return how{name: "mean weighted by " + weight, do: func(f *fold) error {
		var total, w float64
		for k, in := range f.in {
			wk := in.FieldByName(weight)
			n := float64(wk.Int())
			total += f.src(k).Float() * n
			w += n
		}
		if w > 0 {
			total /= w
		}
		f.dst().SetFloat(total)
		return nil
	}}
}

// summaryOf reads the percentiles of the merged histogram in the field
// hist, once it is merged: never averaged.
func summaryOf(hist string) how {
	return how{name: "recompute from " + hist, after: true, do: func(f *fold) error {
		h, err := decodeOrEmpty(f.out.FieldByName(hist).String())
		if err != nil {
			return err
		}
		f.dst().Set(reflect.ValueOf(metrics.Summarize(h)))
		return nil
	}}
}

// When a merged histogram is written.
const (
	always      = iota // always, empty or not
	unlessEmpty        // when it holds a value
	unlessNone         // when an input had one
)

// histogram merges encoded histograms ("" is none).
func histogram(when int) how {
	name := map[int]string{always: "hist-merge", unlessEmpty: "hist-merge, absent when empty", unlessNone: "hist-merge, absent when none"}[when]
	return values(name, func(encoded []string) (string, error) {
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
	})
}
