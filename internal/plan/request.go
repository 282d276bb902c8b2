package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// URL returns the absolute URL of a scenario's request: its url when that is
// absolute, else the plan's target followed by it ("http://h:3000/api" and
// "/users" give "http://h:3000/api/users"). Template actions ("{{uuid}}")
// are kept as written. Call it on a validated plan.
func (p *Plan) URL(s *Scenario) string {
	raw := s.Request.URL
	if isAbsolute(raw) || p.Target == "" {
		return raw
	}
	base := strings.TrimRight(p.Target, "/")
	switch {
	case raw == "" || strings.HasPrefix(raw, "?"):
		return base + "/" + raw
	case strings.HasPrefix(raw, "/"):
		return base + raw
	}
	return base + "/" + raw
}

// Headers returns the headers of a scenario's request: the plan's
// http.headers merged with the scenario's own, the scenario's winning when
// both name a header (names compare case-insensitively). Each pair is
// {name, value}, sorted by canonical name so that runs repeat.
func (p *Plan) Headers(s *Scenario) [][2]string {
	byName := make(map[string][2]string, len(p.HTTP.Headers)+len(s.Request.Headers))
	for _, hs := range []map[string]string{p.HTTP.Headers, s.Request.Headers} {
		// Sorted, so that names differing only in case (refused by Validate)
		// still give the same answer every time.
		for _, name := range slices.Sorted(maps.Keys(hs)) {
			byName[textproto.CanonicalMIMEHeaderKey(name)] = [2]string{name, hs[name]}
		}
	}
	out := make([][2]string, 0, len(byName))
	for _, kv := range byName {
		out = append(out, kv)
	}
	slices.SortFunc(out, func(a, b [2]string) int {
		return cmp.Compare(textproto.CanonicalMIMEHeaderKey(a[0]), textproto.CanonicalMIMEHeaderKey(b[0]))
	})
	return out
}

// target checks the base URL.
func (c *checker) target() {
	t := c.p.Target
	if t == "" {
		return
	}
	if msg := httpURLProblem(t); msg != "" {
		c.add("target", "%s", msg)
		c.badTarget = true
		return
	}
	if strings.ContainsAny(fill(t), "?#") {
		c.add("target", "want a base URL without ?query or #fragment, not %q", t)
		c.badTarget = true
	}
}

// scenarios checks each scenario and that there is exactly one.
func (c *checker) scenarios() {
	switch n := len(c.p.Scenarios); {
	case n == 0:
		c.add("scenarios", "want at least one scenario, e.g. [{request: {url: /}}]")
	case n > 1:
		c.add("scenarios", "several scenarios (weighted mixes) are not supported yet")
	}
	for i := range c.p.Scenarios {
		c.scenario(fmt.Sprintf("scenarios[%d]", i), &c.p.Scenarios[i])
	}
}

// scenario checks one scenario's weight, request and expectations.
func (c *checker) scenario(path string, s *Scenario) {
	if math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.Weight < 0 {
		c.add(path+".weight", "want a positive weight, not %v", s.Weight)
	}
	r := &s.Request
	if !isToken(r.Method) {
		c.add(path+".request.method", "want a method made of letters, such as GET or POST, not %q", r.Method)
	}
	switch {
	case r.URL == "":
		c.add(path+".request.url", "required: an absolute URL, or a path relative to target")
	case !isAbsolute(r.URL) && c.p.Target == "":
		c.add(path+".request.url", "%q is relative: set target (e.g. http://127.0.0.1:3000) or give an absolute URL", r.URL)
	case !isAbsolute(r.URL) && c.badTarget:
		// The target's problem is reported; the resolved URL would repeat it.
	default:
		if msg := httpURLProblem(c.p.URL(s)); msg != "" {
			c.add(path+".request.url", "%s", msg)
		}
	}
	c.headers(path+".request.headers", r.Headers)
	c.statuses(path+".expect.status", s.Expect.Status)
}

// isToken reports whether a method is a non-empty run of ASCII letters.
func isToken(m string) bool {
	if m == "" {
		return false
	}
	for _, b := range []byte(m) {
		if (b < 'A' || b > 'Z') && (b < 'a' || b > 'z') {
			return false
		}
	}
	return true
}

// isAbsolute reports whether raw names a scheme, like "http://h/x".
func isAbsolute(raw string) bool {
	u, err := url.Parse(fill(raw))
	return err == nil && u.Scheme != ""
}

// httpURLProblem says what is wrong with an absolute http(s) URL, or "".
// Template actions count as ordinary text.
func httpURLProblem(raw string) string {
	u, err := url.Parse(fill(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Sprintf("want a valid URL, not %q: %v", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && !strings.Contains(raw, "://"):
		return fmt.Sprintf("want an http:// or https:// URL, such as %q, not %q", "http://"+raw, raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("want an http:// or https:// URL, not %q", raw)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("want a URL with a host, such as http://127.0.0.1:3000, not %q", raw)
	}
	return ""
}

// fill replaces each template action "{{...}}" with a plain letter, so that
// a templated URL can be checked as a URL.
func fill(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString("x")
		s = s[i+2+j+2:]
	}
	b.WriteString(s)
	return b.String()
}

// urlPath returns the path of a URL as written, for a default scenario
// name: "http://h/api?x=1" gives "/api".
func urlPath(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			rest = "/"
		} else {
			rest = rest[j:]
		}
		raw = rest
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if raw == "" {
		return "/"
	}
	return raw
}

// headerNameProblem says what is wrong with a header name, or "".
func headerNameProblem(name string) string {
	if name == "" {
		return "want a header name"
	}
	for _, b := range []byte(name) {
		if b <= ' ' || b == ':' || b >= 0x7f {
			return fmt.Sprintf("header name %q must not contain spaces, colons or control characters", name)
		}
	}
	return ""
}

// headerValueProblem says what is wrong with a header value, or "".
func headerValueProblem(v string) string {
	if strings.ContainsAny(v, "\r\n\x00") {
		return "a header value must not contain line breaks or NUL"
	}
	return ""
}
