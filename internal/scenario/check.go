package scenario

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// checks are a request's expectations beyond its status.
type checks struct {
	contains []byte
	regex    *regexp.Regexp
	json     []jsonCheck
	header   []headerCheck
}

type jsonCheck struct {
	path string
	want any // string, float64/int/uint64, bool or nil
}

type headerCheck struct {
	name, want string
}

func compileChecks(e *plan.Expect) (checks, error) {
	c := checks{}
	if e.BodyContains != "" {
		c.contains = []byte(e.BodyContains)
	}
	if e.BodyRegex != "" {
		re, err := regexp.Compile(e.BodyRegex)
		if err != nil {
			return c, fmt.Errorf("body_regex: %w", err)
		}
		c.regex = re
	}
	for path, want := range e.JSON {
		c.json = append(c.json, jsonCheck{path: path, want: want})
	}
	slices.SortFunc(c.json, func(a, b jsonCheck) int { return cmp.Compare(a.path, b.path) })
	for name, want := range e.Header {
		c.header = append(c.header, headerCheck{name: name, want: want})
	}
	slices.SortFunc(c.header, func(a, b headerCheck) int { return cmp.Compare(a.name, b.name) })
	return c, nil
}

func (c checks) needBody() bool { return c.contains != nil || c.regex != nil || len(c.json) > 0 }

// ok reports whether out passes every check.
func (c checks) ok(out *transport.Outcome) bool {
	if c.contains != nil && !bytes.Contains(out.Body, c.contains) {
		return false
	}
	if c.regex != nil && !c.regex.Match(out.Body) {
		return false
	}
	for _, j := range c.json {
		if !jsonEquals(gjson.GetBytes(out.Body, j.path), j.want) {
			return false
		}
	}
	for _, h := range c.header {
		v, found := out.HeaderValue(h.name)
		if !found || string(v) != h.want {
			return false
		}
	}
	return true
}

// failure says which of c's checks out fails first, "" when none does.
// It is for messages, off the hot path: ok decides.
func (c checks) failure(out *transport.Outcome) string {
	if c.contains != nil && !bytes.Contains(out.Body, c.contains) {
		return fmt.Sprintf("body_contains %q not in the body", c.contains)
	}
	if c.regex != nil && !c.regex.Match(out.Body) {
		return fmt.Sprintf("body_regex %q does not match the body", c.regex)
	}
	for _, j := range c.json {
		if r := gjson.GetBytes(out.Body, j.path); !jsonEquals(r, j.want) {
			got := "it is missing"
			if r.Exists() {
				got = "got " + r.Raw
				if len(r.Raw) > 40 {
					got = "got " + r.Raw[:40] + "…"
				}
			}
			return fmt.Sprintf("json %s = %v: %s", j.path, j.want, got)
		}
	}
	for _, h := range c.header {
		if v, found := out.HeaderValue(h.name); !found || string(v) != h.want {
			return fmt.Sprintf("header %s = %q: not so", h.name, h.want)
		}
	}
	return ""
}

// excerpt quotes at most n bytes of b, marking a cut.
func excerpt(b []byte, n int) string {
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + "…"
}

// jsonEquals compares a JSON value with a YAML scalar.
func jsonEquals(r gjson.Result, want any) bool {
	if !r.Exists() {
		return false
	}
	switch w := want.(type) {
	case nil:
		return r.Type == gjson.Null
	case bool:
		return (r.Type == gjson.True || r.Type == gjson.False) && r.Bool() == w
	case string:
		return r.Type == gjson.String && r.Str == w
	}
	f, err := strconv.ParseFloat(fmt.Sprint(want), 64)
	return err == nil && r.Type == gjson.Number && r.Num == f
}

// value extracts e's value from out.
func (e extractor) value(out *transport.Outcome) (string, bool) {
	switch e.from {
	case "json":
		r := gjson.GetBytes(out.Body, e.arg)
		if !r.Exists() {
			return "", false
		}
		return r.String(), true
	case "header":
		v, ok := out.HeaderValue(e.arg)
		return string(v), ok
	case "cookie":
		var val string
		found := false
		out.EachHeader("Set-Cookie", func(line []byte) bool {
			if c, err := http.ParseSetCookie(string(line)); err == nil && c.Name == e.arg {
				val, found = c.Value, true
				return false
			}
			return true
		})
		return val, found
	}
	m := e.re.FindSubmatch(out.Body)
	switch {
	case m == nil:
		return "", false
	case len(m) > 1:
		return string(m[1]), true
	}
	return string(m[0]), true
}
