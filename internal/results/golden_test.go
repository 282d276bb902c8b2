package results

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// A step with every field set, the merge of three such parts and the
// combination of three such repeats, and the same of a step with nothing
// measured, are written in result.json as the
// golden files say, byte for byte: field names, their order, what is
// left out when empty. The values come from each field's path, so the
// files do not depend on how the Go types are laid out.
func TestStepJSONGolden(t *testing.T) {
	parts := []Step{filled(t, 1), filled(t, 2), filled(t, 3)}
	parts[1].Logins, parts[2].Generator = nil, nil
	merged, err := MergeSteps(parts, []string{"a:1", "b:1"})
	if err != nil {
		t.Fatal(err)
	}
	reps := []Step{filled(t, 1), filled(t, 2), filled(t, 3), filled(t, 4)}
	reps[3].Interrupted = true
	reps[0].Delivery = nil
	combined, err := Combine(reps, []bool{true, false, true, true})
	if err != nil {
		t.Fatal(err)
	}
	var bare Step // nothing measured: what is null, what is [] and what is left out
	bare.Model = "open"
	bareMerged, err := MergeSteps([]Step{bare, bare}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bareCombined, err := Combine([]Step{bare, bare}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Step{
		"step": filled(t, 1), "merged": merged, "combined": combined,
		"bare": bare, "bare-merged": bareMerged, "bare-combined": bareCombined,
	} {
		data, err := json.MarshalIndent(&s, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("testdata", name+".json"), append(data, '\n'))
	}
}

// golden compares got with the file at path (go test -update writes it).
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", path, got)
	}
}

// filled is a step of the same index and model as every other, with every
// field set from its path and seed: histograms hold values, the trace
// exchanges, and the step is not interrupted.
func filled(t *testing.T, seed int) Step {
	t.Helper()
	var s Step
	fillPath(t, reflect.ValueOf(&s).Elem(), "step", seed)
	s.Index, s.Model, s.Interrupted = 2, "open", false
	return s
}

// fillPath sets every field under v to a value made of its path (the
// fields' names from the step, an embedded struct's left out) and seed:
// two elements in a slice or a map; encoded histograms and traces that
// decode.
func fillPath(t *testing.T, v reflect.Value, path string, seed int) {
	n := num(path, seed)
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(n)
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.String:
		v.SetString(path)
	case reflect.Pointer:
		if v.Type() == reflect.TypeFor[*Trace]() {
			v.Set(reflect.ValueOf(tracePath(t, n)))
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fillPath(t, v.Elem(), path, seed)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillPath(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i), seed)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for i := range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillPath(t, k, fmt.Sprintf("%s#%d", path, i), 0)
			fillPath(t, e, fmt.Sprintf("%s[%d]", path, i), seed)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		fillFields(t, v, path, seed)
	default:
		t.Fatalf("fillPath: %s at %s", v.Type(), path)
	}
}

// num is a number in [1, 997] made of a path and a seed.
func num(path string, seed int) int64 {
	h := fnv.New32a()
	fmt.Fprint(h, path, "/", seed)
	return int64(h.Sum32()%997) + 1
}

// fillFields fills the fields of the struct v, each under its name but
// an embedded struct's, whose fields are named as v's own.
func fillFields(t *testing.T, v reflect.Value, path string, seed int) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		switch {
		case f.Anonymous:
			fillPath(t, v.Field(i), path, seed)
		case f.Type.Kind() == reflect.String && (f.Name == "Histogram" || f.Name == "ServiceHist"):
			v.Field(i).SetString(histogramPath(t, num(path+"."+f.Name, seed)))
		default:
			fillPath(t, v.Field(i), path+"."+f.Name, seed)
		}
	}
}

// histogramPath is an encoded histogram of a few response times made of n.
func histogramPath(t *testing.T, n int64) string {
	h := metrics.NewHistogram()
	for _, us := range []int64{n * 100, n * 1000, n * 3000} {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// tracePath is a trace of three exchanges made of n.
func tracePath(t *testing.T, n int64) *Trace {
	tr, err := NewTrace(float64(n)/10, []Exchange{
		{IntendedUS: n * 100_000, LatencyUS: n * 1000, Class: "ok", Weight: 1},
		{IntendedUS: n*100_000 + 5000, LatencyUS: n * 10, Class: "timeout", Weight: 2},
		{IntendedUS: n * 200_000, LatencyUS: 7, Class: "ok", Weight: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
