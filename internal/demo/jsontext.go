package demo

import (
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// clientID returns the client's id as the store keeps it: the JSON text of
// a non-empty string or of a number. Anything else (missing, null, "",
// an object) is no id: ok is false. The text is a substring of the frame
// when the frame's spelling is already plain (ASCII, no escapes), so the
// common case allocates nothing.
func clientID(r gjson.Result) (id string, ok bool) {
	switch r.Type {
	case gjson.Number:
		return r.Raw, true
	case gjson.String:
		if r.Str == "" {
			return "", false
		}
		if plain(r.Raw) {
			return r.Raw, true
		}
		return string(appendString(nil, r.Str)), true
	}
	return "", false
}

// plain reports whether a JSON string literal needs no re-encoding: only
// printable ASCII and no backslash.
func plain(raw string) bool {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// appendString appends s to b as a JSON string literal. Invalid UTF-8
// becomes U+FFFD, as encoding/json does.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}
