package results

import (
	"fmt"
	"math"
	"reflect"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// MaxFigure bounds every figure a result file may hold, in absolute value:
// far above any real one (a rate of 10^7/s, a latency of 10^8 ms, a count
// of 10^12), far below what makes a renderer or a statistic blow up (an
// axis to 1.7e308 drew a 2 GB page).
const MaxFigure = 1e15

// check walks a result read from a file and refuses what no run writes: a
// figure that is not finite or past MaxFigure (in any field, however
// deep), and a step with more repeats than a plan may ask for. A result is
// a file anyone can hand ceiling; the reports, merge and compare trust
// what passes here.
func (r *Result) check() error {
	if err := walkFigures(reflect.ValueOf(r).Elem(), ""); err != nil {
		return err
	}
	for _, s := range r.Steps {
		if s.Repeat == nil {
			continue
		}
		if s.Repeat.N > plan.MaxRepeat || len(s.Repeat.Histograms) > plan.MaxRepeat {
			return fmt.Errorf("steps[%d].repeat: %d repeats, more than a plan may ask for (%d)", s.Index, max(s.Repeat.N, len(s.Repeat.Histograms)), plan.MaxRepeat)
		}
		for metric, v := range s.Repeat.Values {
			if len(v) > plan.MaxRepeat {
				return fmt.Errorf("steps[%d].repeat.values.%s: %d values, more than a plan may ask for (%d)", s.Index, metric, len(v), plan.MaxRepeat)
			}
		}
	}
	return nil
}

// walkFigures checks every number under v; path names where it is.
func walkFigures(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return checkFigure(v, path)
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walkFigures(v.Elem(), path)
		}
	case reflect.Struct:
		return walkFields(v, path)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes: text, not figures
		}
		for i := range v.Len() {
			if err := walkFigures(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := walkFigures(it.Value(), join(path, fmt.Sprint(it.Key().Interface()))); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFigure checks one number: finite, and at most MaxFigure.
func checkFigure(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > MaxFigure {
			return fmt.Errorf("%s: %g is not a figure a run writes (at most %g)", path, f, MaxFigure)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i := v.Int(); i > MaxFigure || i < -MaxFigure {
			return fmt.Errorf("%s: %d is not a figure a run writes (at most %g)", path, i, MaxFigure)
		}
	default:
		if v.Uint() > MaxFigure {
			return fmt.Errorf("%s: %d is not a figure a run writes (at most %g)", path, v.Uint(), MaxFigure)
		}
	}
	return nil
}

// walkFields checks the exported fields of the struct v; an embedded
// struct's fields are named as v's own, as the file has them.
func walkFields(v reflect.Value, path string) error {
	t := v.Type()
	for i := range v.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		at := join(path, f.Name)
		if f.Anonymous {
			at = path
		}
		if err := walkFigures(v.Field(i), at); err != nil {
			return err
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
