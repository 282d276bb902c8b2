package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// URL returns the absolute URL of a single-request scenario's request; see
// RequestURL.
func (p *Plan) URL(s *Scenario) string {
	return p.RequestURL(&s.Request)
}

// Headers returns the headers of a single-request scenario's request; see
// RequestHeaders.
func (p *Plan) Headers(s *Scenario) [][2]string {
	return p.RequestHeaders(&s.Request)
}

// RequestURL returns the absolute URL of a request (a scenario's, a step's
// or a login step's): its url when that is absolute, else the plan's target
// followed by it ("http://h:3000/api" and "/users" give
// "http://h:3000/api/users"). Template actions ("{{uuid}}") are kept as
// written. Call it on a validated plan.
func (p *Plan) RequestURL(r *Request) string {
	return p.resolve(r.URL)
}

// resolve returns raw when it is absolute or the plan has no target, else
// the target followed by raw.
func (p *Plan) resolve(raw string) string {
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

// RequestHeaders returns the headers of a request: the plan's http.headers
// merged with the request's own, the request's winning when both name a
// header (names compare case-insensitively). A request with json gets
// Content-Type: application/json unless one of them sets Content-Type.
// Each pair is {name, value}, sorted by canonical name so that runs repeat;
// values are templates, kept as written.
func (p *Plan) RequestHeaders(r *Request) [][2]string {
	var implied map[string]string
	if r.JSON != nil {
		implied = map[string]string{"Content-Type": "application/json"}
	}
	return mergeHeaders(implied, p.HTTP.Headers, r.Headers)
}

// mergeHeaders merges layers of headers, a later layer's value winning over
// an earlier one's for the same name (compared case-insensitively), and
// returns {name, value} pairs sorted by canonical name.
func mergeHeaders(layers ...map[string]string) [][2]string {
	n := 0
	for _, hs := range layers {
		n += len(hs)
	}
	byName := make(map[string][2]string, n)
	for _, hs := range layers {
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
	return urlProblem(raw, "http", "https", "an")
}

// urlProblem says what is wrong with an absolute URL whose scheme must be
// plain or secure (such as http or https), or "". article goes before
// "plain://" in messages. Template actions count as ordinary text.
func urlProblem(raw, plain, secure, article string) string {
	u, err := url.Parse(fill(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Sprintf("want a valid URL, not %q: %v", raw, err)
	}
	want := fmt.Sprintf("want %s %s:// or %s:// URL", article, plain, secure)
	switch {
	case u.Scheme != plain && u.Scheme != secure && !strings.Contains(raw, "://"):
		return fmt.Sprintf("%s, such as %q, not %q", want, plain+"://"+raw, raw)
	case u.Scheme != plain && u.Scheme != secure:
		return fmt.Sprintf("%s, not %q", want, raw)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("want a URL with a host, such as %s://127.0.0.1:3000, not %q", plain, raw)
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
