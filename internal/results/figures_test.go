package results

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// tables hold, for each type a merge puts together field by field, the
// check of its rules (coverFields).
var tables = map[reflect.Type]func(t *testing.T){
	reflect.TypeFor[Figures]():   func(t *testing.T) { coverFields(t, stepRules) },
	reflect.TypeFor[Breakdown](): func(t *testing.T) { coverFields(t, breakdownRules) },
	reflect.TypeFor[Logins]():    func(t *testing.T) { coverFields(t, loginRules) },
	reflect.TypeFor[Generator](): func(t *testing.T) { coverFields(t, generatorRules) },
	reflect.TypeFor[Point]():     func(t *testing.T) { coverFields(t, pointRules) },
	reflect.TypeFor[Delivery]():  func(t *testing.T) { coverFields(t, deliveryRules) },
}

// Every field of a step's figures, and of the values inside them that are
// put together field by field, has one rule for the parts of a step and
// one for its repeats: a field added without one would be a wrong merged
// figure for agents, segments or repeats, and nothing else would fail.
func TestRulesCoverEveryField(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		check, ok := tables[typ]
		if !ok {
			t.Fatalf("no rules for %s", typ)
		}
		check(t)
		for i := range typ.NumField() {
			if inner := elem(typ.Field(i).Type); tables[inner] != nil {
				walk(inner)
			}
		}
	}
	walk(reflect.TypeFor[Figures]())
	for typ := range tables {
		if !seen[typ] {
			t.Errorf("rules for %s, which no figure holds", typ)
		}
	}
}

// coverFields checks that each rule reaches a field of T of its own, and
// that every field of T has exactly one rule, both of whose ways are
// named.
func coverFields[T any](t *testing.T, rules []rule[T]) {
	t.Helper()
	var x T
	v := reflect.ValueOf(&x).Elem()
	typ := v.Type()
	count := make([]int, typ.NumField())
	for k, r := range rules {
		i := fieldAt(v, reflect.ValueOf(r.at(&x)))
		if i < 0 {
			t.Errorf("%s: rule %d reaches no field of %s", typ.Name(), k, typ.Name())
			continue
		}
		count[i]++
		if r.Parts.name == "" || r.Repeats.name == "" {
			t.Errorf("%s.%s: a rule without a name", typ.Name(), typ.Field(i).Name)
		}
	}
	for i, n := range count {
		switch {
		case n == 0:
			t.Errorf("%s.%s is in no merge rule: add it to the rules of %s (rules.go), saying how parts of a step and repeats of it put it together", typ.Name(), typ.Field(i).Name, typ.Name())
		case n > 1:
			t.Errorf("%s.%s has %d rules", typ.Name(), typ.Field(i).Name, n)
		}
	}
}

// fieldAt is the index of the field of the struct v that the pointer p
// points at (its address and type), -1 when none.
func fieldAt(v, p reflect.Value) int {
	for i := range v.NumField() {
		if a := v.Field(i).Addr(); a.Pointer() == p.Pointer() && a.Type() == p.Type() {
			return i
		}
	}
	return -1
}

// elem is the struct type a field holds, through pointers, slices and maps.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

// notFigures are Step's fields besides its figures: who made a step of
// several generators' shares, which MergeSteps and a coordinator set and
// Combine keeps the last repeat's of.
var notFigures = map[string]string{
	"Agents":    "parts: how many; repeats: the last's",
	"Parts":     "parts: each one's line; repeats: the last's",
	"Lost":      "set by the coordinator that lost an agent",
	"LostParts": "set by the coordinator that lost an agent",
}

// Step is its figures first (embedded: their fields are result.json's
// first, in their order), then what is said of who made it; a field
// measured of the step belongs in Figures, where a rule puts it together.
func TestStepIsFiguresAndWhoMadeThem(t *testing.T) {
	st := reflect.TypeFor[Step]()
	if f := st.Field(0); !f.Anonymous || f.Type != reflect.TypeFor[Figures]() {
		t.Fatalf("Step's first field is %s, want Figures embedded", f.Name)
	}
	for i := 1; i < st.NumField(); i++ {
		if _, ok := notFigures[st.Field(i).Name]; !ok {
			t.Errorf("Step.%s is not said of who made the step (notFigures): a figure belongs in Figures, with its rule", st.Field(i).Name)
		}
	}
}

// Figures go through result.json without loss: in a step, written, read,
// and taken out again, every field is as it was.
func TestFiguresLossless(t *testing.T) {
	var f Figures
	fill(reflect.ValueOf(&f).Elem(), new(int))
	data, err := json.Marshal(&Step{Figures: f})
	if err != nil {
		t.Fatal(err)
	}
	var back Step
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, back.Figures); diff != "" {
		t.Errorf("read(write(f)) differs from f (-want +got):\n%s", diff)
	}
}

// Every rule fits its field's type: parts and repeats of figures with
// every field set are put together without a panic or an error.
func TestRulesFitTheirFields(t *testing.T) {
	var f Figures
	fill(reflect.ValueOf(&f).Elem(), new(int))
	valid(reflect.ValueOf(&f).Elem())
	if _, err := MergeFigures([]Figures{f, f}); err != nil {
		t.Errorf("MergeFigures: %v", err)
	}
	if _, err := CombineFigures([]Figures{f, f}); err != nil {
		t.Errorf("CombineFigures: %v", err)
	}
}

// Each rule writes its own field only, and none of its inputs: applied
// alone to a zero result, every other field stays zero.
func TestRulesWriteTheirFieldOnly(t *testing.T) {
	ownFieldOnly(t, stepRules)
	ownFieldOnly(t, breakdownRules)
	ownFieldOnly(t, loginRules)
	ownFieldOnly(t, generatorRules)
	ownFieldOnly(t, pointRules)
	ownFieldOnly(t, deliveryRules)
}

// ownFieldOnly applies each rule of rules, each column, to two inputs
// with every field set.
func ownFieldOnly[T any](t *testing.T, rules []rule[T]) {
	t.Helper()
	inputs := func() []T {
		in := make([]T, 2)
		for k := range in {
			fill(reflect.ValueOf(&in[k]).Elem(), new(int))
			valid(reflect.ValueOf(&in[k]).Elem())
		}
		return in
	}
	for _, r := range rules {
		for _, h := range []how[T]{r.Parts, r.Repeats} {
			if h.do == nil {
				continue
			}
			in, was := inputs(), inputs()
			var out T
			v := reflect.ValueOf(&out).Elem()
			own := v.Type().Field(fieldAt(v, reflect.ValueOf(r.at(&out)))).Name
			if err := h.do(&out, []*T{&in[0], &in[1]}); err != nil {
				t.Errorf("%s.%s by %q: %v", v.Type().Name(), own, h.name, err)
				continue
			}
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.Name != own && !v.Field(i).IsZero() {
					t.Errorf("%s.%s by %q sets %s too", v.Type().Name(), own, h.name, f.Name)
				}
			}
			if !reflect.DeepEqual(in, was) {
				t.Errorf("%s.%s by %q changes its inputs", v.Type().Name(), own, h.name)
			}
		}
	}
}

// valid makes the encoded fields of filled figures decode: empty
// histograms, traces of no exchange.
func valid(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice:
		if v.Kind() == reflect.Pointer {
			valid(v.Elem())
			return
		}
		for i := range v.Len() {
			valid(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(it.Value().Type()).Elem()
			e.Set(it.Value())
			valid(e)
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			switch v.Type().Field(i).Name {
			case "Histogram", "ServiceHist":
				v.Field(i).SetString(emptyHistogram())
			case "Data":
				v.Field(i).SetString("")
			default:
				valid(v.Field(i))
			}
		}
	}
}

// emptyHistogram is an encoded histogram without a value.
var emptyHistogram = sync.OnceValue(func() string {
	enc, err := metrics.Encode(metrics.NewHistogram())
	if err != nil {
		panic(err)
	}
	return enc
})

// fill sets every field of v to a value of its own, not zero.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.String:
		v.SetString(fmt.Sprint("s", *n))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	default:
		panic("fill: " + v.Type().String())
	}
}
