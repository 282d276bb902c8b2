package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// jsonBody is a JSON document with templated string leaves: static bytes
// with holes, each hole a template whose output is written as a JSON string.
type jsonBody struct {
	parts []jsonPart
}

type jsonPart struct {
	raw  []byte // static JSON
	leaf text   // a templated string leaf, when raw is nil
}

// compileJSON turns the YAML value of request.json into a jsonBody. Map
// keys are sorted so that bodies repeat exactly.
func compileJSON(ts *templates, name string, v any) (*jsonBody, error) {
	b := &jsonBody{}
	if err := b.add(ts, name, v); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *jsonBody) static(s string) {
	if n := len(b.parts); n > 0 && b.parts[n-1].raw != nil {
		b.parts[n-1].raw = append(b.parts[n-1].raw, s...)
		return
	}
	b.parts = append(b.parts, jsonPart{raw: []byte(s)})
}

func (b *jsonBody) add(ts *templates, name string, v any) error {
	switch x := v.(type) {
	case map[string]any:
		b.static("{")
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b.static(",")
			}
			kb, _ := json.Marshal(k)
			b.static(string(kb) + ":")
			if err := b.add(ts, name+"."+k, x[k]); err != nil {
				return err
			}
		}
		b.static("}")
	case []any:
		b.static("[")
		for i, e := range x {
			if i > 0 {
				b.static(",")
			}
			if err := b.add(ts, fmt.Sprintf("%s[%d]", name, i), e); err != nil {
				return err
			}
		}
		b.static("]")
	case string:
		if !plan.IsTemplate(x) {
			sb, _ := json.Marshal(x)
			b.static(string(sb))
			return nil
		}
		t, err := ts.text(name, x)
		if err != nil {
			return err
		}
		b.parts = append(b.parts, jsonPart{leaf: t})
	default:
		vb, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b.static(string(vb))
	}
	return nil
}

// isStatic reports whether the body has no template.
func (b *jsonBody) isStatic() bool {
	return len(b.parts) <= 1 && (len(b.parts) == 0 || b.parts[0].raw != nil)
}

// render appends the body to dst.
func (v *VU) renderJSON(dst []byte, b *jsonBody) ([]byte, error) {
	for _, p := range b.parts {
		if p.raw != nil {
			dst = append(dst, p.raw...)
			continue
		}
		s, err := v.render(v.leaf[:0], p.leaf)
		v.leaf = s
		if err != nil {
			return dst, err
		}
		dst = appendJSONString(dst, s)
	}
	return dst, nil
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(dst, '"')
}
