package draft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jvalue is a JSON value that keeps its objects' keys in order, so that a
// body reads in the plan as it was written.
type jvalue struct {
	kind  jkind
	text  string    // a string (literal, or a template when tmpl), a number's digits, true or false
	tmpl  bool      // text is a template, not literal text
	keys  []string  // an object's keys, in order
	items []*jvalue // an object's values (by keys) or an array's items
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
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (*jvalue, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jvalue{kind: jnull}, nil
	case bool:
		return &jvalue{kind: jbool, text: fmt.Sprint(t)}, nil
	case json.Number:
		return &jvalue{kind: jnumber, text: t.String()}, nil
	case string:
		return &jvalue{kind: jstring, text: t}, nil
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
			item, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, item)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
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
			v.items[i] = tmplStr(t)
			continue
		}
		switch {
		case item.kind == jobject || item.kind == jarray:
			s.jsonSecretsIn(item, where, k, secret)
		case !inSecret && v.kind == jobject && item.kind == jstring && isIdempotency(k):
			v.items[i] = tmplStr("{{uuid}}")
		case secret && item.kind != jnull && !item.tmpl && !hasEnv(item.text):
			name := s.env.ref(k, fmt.Sprintf("the value of %q in %s", k, where), item.text)
			v.items[i] = tmplStr(envTemplate(name))
		}
	}
}
