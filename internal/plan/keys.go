package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// yamlFields maps the yaml key of each of t's fields to the field's index.
func yamlFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if name, ok := yamlName(t.Field(i)); ok {
			fields[name] = i
		}
	}
	return fields
}

// yamlName returns a field's yaml key, false for unexported and "-" fields.
func yamlName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return strings.ToLower(f.Name), true
	}
	return name, true
}

// knownKeys lists t's yaml keys in declaration order.
func knownKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if name, ok := yamlName(t.Field(i)); ok {
			keys = append(keys, name)
		}
	}
	return keys
}

// exampleKeys lists t's keys for a message, e.g. "name, target, load".
func exampleKeys(t reflect.Type) string {
	keys := knownKeys(t)
	if len(keys) > 3 {
		keys = keys[:3]
	}
	return strings.Join(keys, ", ")
}

// planned lists the stable keys of the plan format (see the product
// description) that this version does not read yet, by the struct that will
// hold them, so that using one says so instead of calling it a typo.
var planned = map[reflect.Type][]string{}

// unknownKey explains a key that t has no field for, suggesting the
// nearest known key when it looks like a typo.
func unknownKey(t reflect.Type, key string) string {
	if slices.Contains(planned[t], key) {
		return fmt.Sprintf("key %q is not supported yet", key)
	}
	keys := knownKeys(t)
	best, bestDist := "", len(key)
	for _, k := range keys {
		if d := Distance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	// A typo changes a few letters; more than a third of the key is another word.
	if best != "" && bestDist <= max(1, len(best)/3) {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", key, best)
	}
	return fmt.Sprintf("unknown key %q (known keys: %s)", key, strings.Join(keys, ", "))
}
