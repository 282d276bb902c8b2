package plan

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

// schemaFile is the JSON Schema of plan files that editors use.
var schemaFile = filepath.Join("..", "..", "docs", "plan.schema.json")

// TestSchemaMatchesTypes walks the plan's Go types and the JSON Schema
// together: every yaml key is a property of the schema at the same place,
// with a description, and the schema has no property the types lack, so
// that the two cannot drift apart.
func TestSchemaMatchesTypes(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("parse schema: %v", err)
	}
	if got := root["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", got)
	}
	w := &schemaWalk{t: t, root: root}
	w.structure("", reflect.TypeFor[Plan](), root)
	if w.keys < 50 {
		t.Errorf("walked %d keys, want the whole plan", w.keys)
	}

	enums := []struct {
		path string
		want []any
	}{
		{"load.model", []any{Open, Closed}},
		{"load.arrival", []any{Uniform, Poisson}},
		{"events.action", anys(Actions)}, // a new action is in the schema too
	}
	for _, e := range enums {
		node := w.at(e.path)
		if diff := cmp.Diff(e.want, node["enum"]); diff != "" {
			t.Errorf("schema %s enum mismatch (-want +got):\n%s", e.path, diff)
		}
	}
	var kinds []string
	for _, k := range OutputKinds {
		kinds = append(kinds, k.Name)
	}
	items, _ := w.at("outputs")["items"].(map[string]any)
	if want := "^(" + strings.Join(kinds, "|") + ")=.+"; items["pattern"] != want {
		t.Errorf("schema outputs pattern %v, want %q: the kinds of OutputKinds", items["pattern"], want)
	}
}

// anys returns ss as []any, as a JSON array decodes.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// schemaWalk compares Go types with schema nodes.
type schemaWalk struct {
	t    *testing.T
	root map[string]any
	keys int // yaml keys compared
}

// resolve follows a node's $ref, "#/$defs/name", merging the node's own
// keywords over the definition's.
func (w *schemaWalk) resolve(node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	defs, _ := w.root["$defs"].(map[string]any)
	def, found := defs[name].(map[string]any)
	if !ok || !found {
		w.t.Fatalf("schema $ref %q does not name a definition", ref)
	}
	out := maps.Clone(w.resolve(def))
	for k, v := range node {
		if k != "$ref" {
			out[k] = v
		}
	}
	return out
}

// structure compares struct type typ, at field path, with an object node.
func (w *schemaWalk) structure(path string, typ reflect.Type, node map[string]any) {
	node = w.resolve(node)
	if node["additionalProperties"] != false {
		w.t.Errorf("schema %q: want additionalProperties: false, so that unknown keys are errors as in ceiling", path)
	}
	props, _ := node["properties"].(map[string]any)
	keys := knownKeys(typ)
	if diff := cmp.Diff(slices.Sorted(slices.Values(keys)), slices.Sorted(maps.Keys(props))); diff != "" {
		w.t.Errorf("schema %q properties differ from the yaml keys of %s (-yaml +schema):\n%s", path, typ, diff)
	}
	fields := yamlFields(typ)
	for _, key := range keys {
		prop, ok := props[key].(map[string]any)
		if !ok {
			continue
		}
		w.keys++
		p := join(path, key)
		if d, _ := prop["description"].(string); d == "" {
			w.t.Errorf("schema %q has no description", p)
		}
		w.value(p, typ.Field(fields[key]).Type, prop)
	}
}

// value compares a field's type with its schema node, descending into
// structs, lists and maps of structs.
func (w *schemaWalk) value(path string, typ reflect.Type, node map[string]any) {
	node = w.resolve(node)
	switch {
	case typ == reflect.TypeFor[Duration](), typ == reflect.TypeFor[Percent]():
		// Scalars with their own UnmarshalYAML, not mappings: their
		// patterns are checked by TestSchemaScalarPatterns.
		if node["type"] != "string" {
			w.t.Errorf("schema %q: want type string for a %s, not %v", path, typ, node["type"])
		}
	case typ == reflect.TypeFor[SinkLatency]():
		w.latency(path, node)
	case typ.Kind() == reflect.Pointer:
		w.value(path, typ.Elem(), node)
	case typ.Kind() == reflect.Struct:
		w.structure(path, typ, node)
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct:
		items, ok := node["items"].(map[string]any)
		if !ok {
			w.t.Errorf("schema %q: want items for a list of %s", path, typ.Elem())
			return
		}
		w.structure(path+"[]", typ.Elem(), items)
	case typ.Kind() == reflect.Map && typ.Elem().Kind() == reflect.Struct:
		values, ok := node["additionalProperties"].(map[string]any)
		if !ok {
			w.t.Errorf("schema %q: want additionalProperties for a map of %s", path, typ.Elem())
			return
		}
		w.structure(path+".*", typ.Elem(), values)
	}
}

// latency compares a SinkLatency's schema node, a scalar or a mapping with
// its own UnmarshalYAML: one of a duration and an object whose properties
// are exactly the percentile keys ceiling reads, each with a description.
func (w *schemaWalk) latency(path string, node map[string]any) {
	alts, _ := node["oneOf"].([]any)
	var duration, object bool
	for _, a := range alts {
		alt, _ := a.(map[string]any)
		if alt["$ref"] == "#/$defs/duration" {
			duration = true
			continue
		}
		alt = w.resolve(alt)
		if alt["type"] != "object" {
			continue
		}
		object = true
		if alt["additionalProperties"] != false {
			w.t.Errorf("schema %q: want additionalProperties: false on the percentiles", path)
		}
		props, _ := alt["properties"].(map[string]any)
		var keys []string
		for _, k := range latencyKeys {
			keys = append(keys, k.key)
		}
		if diff := cmp.Diff(slices.Sorted(slices.Values(keys)), slices.Sorted(maps.Keys(props))); diff != "" {
			w.t.Errorf("schema %q percentiles differ from ceiling's (-ceiling +schema):\n%s", path, diff)
		}
		for _, key := range keys {
			prop, _ := props[key].(map[string]any)
			if d, _ := prop["description"].(string); d == "" || prop["$ref"] != "#/$defs/duration" {
				w.t.Errorf("schema %q: want a described duration, not %v", join(path, key), prop)
			}
			w.keys++
		}
	}
	if !duration || !object {
		w.t.Errorf("schema %q: want oneOf a duration and a mapping of percentiles, not %v", path, node)
	}
}

// at returns the resolved schema node of a dotted path of plain keys; the
// key of a list steps into its items ("events.action").
func (w *schemaWalk) at(path string) map[string]any {
	node := w.root
	for _, key := range strings.Split(path, ".") {
		node = w.resolve(node)
		if items, ok := node["items"].(map[string]any); ok {
			node = w.resolve(items) // a list's key: its items' key
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[key].(map[string]any)
		if !ok {
			w.t.Fatalf("schema has no %q", path)
		}
		node = next
	}
	return w.resolve(node)
}

// TestSchemaScalarPatterns checks that the schema's patterns for durations,
// percentages and rate-limit keys accept and refuse what ceiling does, so that an editor
// agrees with `ceiling validate` on the common spellings. (The patterns
// leave out rare ones that ceiling accepts, such as "1e1%", and the per
// pattern accepts the rare "{{.json.header:x}}" that ceiling refuses.)
func TestSchemaScalarPatterns(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	var root struct {
		Defs map[string]struct {
			Pattern string `json:"pattern"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("parse schema: %v", err)
	}
	pattern := func(name string) *regexp.Regexp {
		re, err := regexp.Compile(root.Defs[name].Pattern)
		if err != nil || root.Defs[name].Pattern == "" {
			t.Fatalf("schema $defs/%s pattern %q: %v", name, root.Defs[name].Pattern, err)
		}
		return re
	}
	tests := []struct {
		def     string
		samples []string
		accepts func(s string) bool
	}{
		{"duration", []string{"250ms", "60s", "1m30s", "0s", "0", ".5s", "1.5h", "2h45m0.5s", "10µs", " 5s ", "60", "soon", "-1s", "1 s", "s", ""},
			func(s string) bool { _, err := ParseDuration(s); return err == nil }},
		{"per", []string{"", "{{.json.channel}}", "{{ .json.a.b }}", "{{.json.items.#.id}}", "{{.header.X-Channel}}", "{{ .header.x }}",
			"channel", "header:X", "{{.channel}}", "{{.json.}}", "{{.json.a b}}", "{{.header.X A}}", "{{.header.X:Y}}", "{{.header.}}",
			"{{.header.X}}}", " {{.json.a}}", "{{.json.a}}-x", "{{.json.{a}}}"},
			func(s string) bool { _, _, ok := parsePer(s); return ok }},
		{"percent", []string{"1%", "0.5%", ".5%", "5.%", "0%", "95%", "100%", "100.0%", "007%", " 1 % ", "1", "100.5%", "101%", "-1%", "%", "1%%", "x%", "1 %%", ""},
			func(s string) bool {
				var v struct {
					P Percent `yaml:"p"`
				}
				return yaml.Unmarshal([]byte("p: "+strconv.Quote(s)), &v) == nil
			}},
	}
	for _, tt := range tests {
		re := pattern(tt.def)
		for _, s := range tt.samples {
			if got, want := re.MatchString(s), tt.accepts(s); got != want {
				t.Errorf("schema $defs/%s pattern matches %q = %v, want %v as ceiling", tt.def, s, got, want)
			}
		}
	}
}
