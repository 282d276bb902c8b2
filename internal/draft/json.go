package draft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// jvalue is a JSON value that keeps its objects' keys in order, so that a
// body reads in the plan as it was written.
type jvalue struct {
	kind  jkind
	text  string    // a string (literal, or a template when tmpl), a number's digits, true or false
	tmpl  bool      // text is a template, not literal text
	keys  []string  // an object's keys, in order
	items []*jvalue // an object's values (by keys) or an array's items
	// span is where the value is in the text it was read from, [start,
	// end) in bytes; a value made anew (a template that replaces one)
	// keeps the span of the one it replaces. {0, 0}: no text.
	span [2]int
	// was is the kind of the value a template replaced.
	was jkind
}

type jkind byte

const (
	jnull jkind = iota
	jbool
	jnumber
	jstring
	jarray
	jobject
)

// maxJSONDepth bounds the nesting of a body read from a source.
const maxJSONDepth = 64

// parseJSON reads one JSON value, keeping key order; trailing data other
// than white space is an error.
func parseJSON(data []byte) (*jvalue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, data, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// decodeValue reads the next value of dec, which reads data.
func decodeValue(dec *json.Decoder, data []byte, depth int) (*jvalue, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	start := tokenStart(data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	span := [2]int{start, int(dec.InputOffset())}
	switch t := tok.(type) {
	case nil:
		return &jvalue{kind: jnull, span: span}, nil
	case bool:
		return &jvalue{kind: jbool, text: fmt.Sprint(t), span: span}, nil
	case json.Number:
		return &jvalue{kind: jnumber, text: t.String(), span: span}, nil
	case string:
		return &jvalue{kind: jstring, text: t, span: span}, nil
	case json.Delim:
		v := &jvalue{kind: jarray}
		if t == '{' {
			v.kind = jobject
		}
		for dec.More() {
			if v.kind == jobject {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, k.(string))
			}
			item, err := decodeValue(dec, data, depth+1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, item)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		v.span = [2]int{start, int(dec.InputOffset())}
		return v, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// tokenStart is where the token after offset begins in data: past white
// space and the separators (, and :) that json.Decoder's offsets leave
// before it.
func tokenStart(data []byte, offset int64) int {
	i := int(offset)
	for i < len(data) && strings.IndexByte(" \t\r\n,:", data[i]) >= 0 {
		i++
	}
	return i
}

// set puts a value at key of an object, replacing one that is there.
func (v *jvalue) set(key string, val *jvalue) {
	for i, k := range v.keys {
		if k == key {
			v.items[i] = val
			return
		}
	}
	v.keys = append(v.keys, key)
	v.items = append(v.items, val)
}

// str is a JSON string of literal text.
func str(s string) *jvalue { return &jvalue{kind: jstring, text: s} }

// tmplStr is a JSON string that is a template.
func tmplStr(s string) *jvalue { return &jvalue{kind: jstring, text: s, tmpl: true} }

// instead returns v, a template, as the value that replaces old: where old
// was in its text.
func instead(old, v *jvalue) *jvalue {
	v.span, v.was = old.span, old.kind
	return v
}

// jsonSecrets replaces, in place, the values of fields whose names are
// secret (and everything inside such a field) with environment
// references, and those of idempotency keys with {{uuid}}. where names
// the body, for the variables' descriptions.
func (s *sketch) jsonSecrets(v *jvalue, where string) {
	s.jsonSecretsIn(v, where, "", false)
}

// jsonSecretsIn does jsonSecrets for the members of v, whose nearest
// key is key; inSecret says v is inside a secret field.
func (s *sketch) jsonSecretsIn(v *jvalue, where, key string, inSecret bool) {
	if v == nil {
		return
	}
	for i, item := range v.items {
		k := key
		if v.kind == jobject {
			k = v.keys[i]
		}
		secret := inSecret || v.kind == jobject && s.secretName(k)
		if t, ok := s.handedOut(item.text, false); ok && item.kind == jstring && !item.tmpl {
			v.items[i] = instead(item, tmplStr(t))
			continue
		}
		switch {
		case item.kind == jobject || item.kind == jarray:
			s.jsonSecretsIn(item, where, k, secret)
		case !inSecret && v.kind == jobject && item.kind == jstring && isIdempotency(k):
			v.items[i] = instead(item, tmplStr("{{uuid}}"))
		case secret && item.kind != jnull && !item.tmpl && !hasEnv(item.text):
			name := s.env.ref(k, fmt.Sprintf("the value of %q in %s", k, where), item.text)
			v.items[i] = instead(item, tmplStr(envTemplate(name)))
		case item.kind == jstring && !item.tmpl && !hasEnv(item.text):
			if why, ok := secretValue(item.text); ok {
				name := s.env.ref(k, fmt.Sprintf("the value of %q in %s%s", k, where, why), item.text)
				v.items[i] = instead(item, tmplStr(envTemplate(name)))
			}
		}
	}
}

// rawJSON is text, a JSON document read into v (and its secrets and
// handed-out values replaced since), as a body template that sends the
// document's own bytes: keys in their order, spaces and numbers as
// written. Each replaced value is a template where the value stood: a
// string's through json (a JSON string, escaped as JSON wants), a
// number's or a boolean's as it is; a string that read the environment
// (a curl line's $VAR) the same way.
func rawJSON(text string, v *jvalue) string {
	type hole struct {
		span [2]int
		tmpl string
	}
	var holes []hole
	var walk func(v *jvalue)
	walk = func(v *jvalue) {
		switch {
		case v.tmpl && v.span[1] > v.span[0]:
			t := v.text
			if v.was == jstring {
				t = strings.TrimSuffix(t, "}}") + " | json}}"
			}
			holes = append(holes, hole{v.span, t})
		case v.kind == jstring && hasEnv(v.text) && v.span[1] > v.span[0]:
			holes = append(holes, hole{v.span, "{{print " + envArgs(v.text) + " | json}}"})
		default:
			for _, item := range v.items {
				walk(item)
			}
		}
	}
	walk(v)
	slices.SortFunc(holes, func(a, b hole) int { return a.span[0] - b.span[0] })
	var b strings.Builder
	last := 0
	for _, h := range holes {
		b.WriteString(lit(text[last:h.span[0]]))
		b.WriteString(h.tmpl)
		last = h.span[1]
	}
	b.WriteString(lit(text[last:]))
	return b.String()
}

// envArgs writes text, which holds references to environment variables,
// as arguments of print: quoted literal parts and (env "NAME") calls.
func envArgs(text string) string {
	var args []string
	last := 0
	for _, m := range sentinel.FindAllStringSubmatchIndex(text, -1) {
		if m[0] > last {
			args = append(args, strconv.Quote(text[last:m[0]]))
		}
		args = append(args, fmt.Sprintf("(env %q)", text[m[2]:m[3]]))
		last = m[1]
	}
	if last < len(text) {
		args = append(args, strconv.Quote(text[last:]))
	}
	return strings.Join(args, " ")
}
