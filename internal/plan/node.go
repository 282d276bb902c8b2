package plan

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// leaf decodes a scalar node into v with goccy's decoder, turning its type
// and overflow errors into problems at goccy's position.
func (d *decoder) leaf(path string, n ast.Node, v reflect.Value) {
	if !isScalar(n) {
		d.add(path, n, "%s, not %s", want(v), describe(n))
		return
	}
	switch v.Kind() {
	case reflect.String:
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
			// Keep the text as written: a header value 010 or 1e3 is not a number.
			v.SetString(n.GetToken().Value)
			return
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f, ok := n.(*ast.FloatNode); ok && f.Value != math.Trunc(f.Value) {
			d.add(path, n, "%s, not %s", want(v), describe(n))
			return
		}
	}
	err := yaml.NodeToValue(n, v.Addr().Interface())
	if err == nil {
		return
	}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		d.add(path, n, "%s", err.Error()) // from an UnmarshalYAML: Duration's, Percent's
		return
	}
	pos := nodePos(n)
	if tk := ye.GetToken(); tk != nil {
		pos = position{tk.Position.Line, tk.Position.Column}
	}
	var over *yaml.OverflowError
	if errors.As(err, &over) {
		d.addAt(path, pos, "%s, not %s (out of range)", want(v), clip(n.GetToken().Value))
		return
	}
	d.addAt(path, pos, "%s, not %s", want(v), describe(n))
}

// want says what kind of value v takes.
func want(v reflect.Value) string {
	switch v.Type() {
	case reflect.TypeFor[Duration]():
		return errNotDuration.Error()
	case reflect.TypeFor[Percent]():
		return errNotPercent.Error()
	case reflect.TypeFor[SinkLatency]():
		return errNotLatency.Error()
	}
	switch v.Kind() {
	case reflect.String:
		return "want a string"
	case reflect.Bool:
		return "want true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "want a whole number"
	case reflect.Float32, reflect.Float64:
		return "want a number"
	case reflect.Slice:
		return "want a list"
	case reflect.Map, reflect.Struct:
		return "want a mapping"
	}
	return "want a " + v.Type().String()
}

// describe names a node's kind (and a scalar's text) for messages.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "null"
	case *ast.StringNode:
		return fmt.Sprintf("the string %q", clip(v.Value))
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "the number " + clip(n.GetToken().Value)
	case *ast.BoolNode:
		return clip(n.GetToken().Value)
	case *ast.TagNode:
		return "a tagged value"
	}
	return "a " + n.Type().String()
}

// clip shortens s for a message.
func clip(s string) string {
	const max = 40
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// isScalar reports whether n is a single value rather than a collection.
func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		return false
	}
	return true
}

// placeAtValue reports whether a key's position should be its value's:
// yes for a value written on the key's line, no for a block or a null.
func placeAtValue(n ast.Node) bool {
	if _, null := n.(*ast.NullNode); null {
		return false
	}
	return isScalar(n)
}

// nodePos returns where n starts. A block mapping's own token is its first
// colon, so it is placed at its first key instead.
func nodePos(n ast.Node) position {
	if n == nil {
		return position{}
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return nodePos(v.Values[0])
		}
	case *ast.MappingValueNode:
		return nodePos(v.Key)
	}
	tk := n.GetToken()
	if tk == nil {
		return position{}
	}
	return position{tk.Position.Line, tk.Position.Column}
}

// anything decodes free-form YAML into v, an interface such as a request's
// json: mappings become map[string]any, lists []any, and scalars string,
// int64 (uint64 past its range), float64 or bool. Strings are kept as
// written, so "010" stays text; null leaves v nil.
func (d *decoder) anything(path string, n ast.Node, v reflect.Value) {
	switch n := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		entries, _ := d.mapping(path, n)
		m := make(map[string]any, len(entries))
		for _, e := range entries {
			p := join(path, e.key)
			d.record(p, e)
			var x any
			d.value(p, e.value, reflect.ValueOf(&x).Elem())
			m[e.key] = x
		}
		v.Set(reflect.ValueOf(m))
	case *ast.SequenceNode:
		s := make([]any, len(n.Values))
		for i, item := range n.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.pos[p] = nodePos(item)
			d.value(p, item, reflect.ValueOf(&s[i]).Elem())
		}
		v.Set(reflect.ValueOf(s))
	default:
		x, msg := scalarValue(n)
		if msg != "" {
			d.add(path, n, "%s", msg)
			return
		}
		v.Set(reflect.ValueOf(x))
	}
}

// scalarValue returns the value of a scalar node for free-form YAML, or a
// message saying why it has none that JSON could carry.
func scalarValue(n ast.Node) (any, string) {
	switch s := n.(type) {
	case *ast.StringNode:
		return s.Value, ""
	case *ast.LiteralNode:
		if s.Value != nil {
			return s.Value.Value, ""
		}
		return "", ""
	case *ast.IntegerNode:
		switch i := s.Value.(type) {
		case int64:
			return i, ""
		case uint64:
			if i <= math.MaxInt64 {
				return int64(i), ""
			}
			return i, ""
		}
	case *ast.FloatNode:
		return s.Value, ""
	case *ast.BoolNode:
		return s.Value, ""
	case *ast.InfinityNode, *ast.NanNode:
		return nil, fmt.Sprintf("JSON has no infinity or NaN: want a finite number, not %s", clip(n.GetToken().Value))
	case *ast.TagNode: // only !!str reaches here (see resolve)
		switch s.Value.(type) {
		case *ast.StringNode, *ast.LiteralNode:
			return scalarValue(s.Value)
		}
		if s.Value == nil || s.Value.GetToken() == nil {
			return "", ""
		}
		return s.Value.GetToken().Value, ""
	}
	return nil, fmt.Sprintf("want text, a number, true, false or null, not %s", describe(n))
}
