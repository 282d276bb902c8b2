package draft

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/secret"
)

// A source's own reference to an environment variable ($TOKEN in a curl
// line) travels through parsing as a sentinel, NAME between two
// characters of Unicode's private use area, which no JSON, form or URL
// treats specially; lit turns it into {{env "NAME"}}.
const (
	envOpen  = "\uE000"
	envClose = "\uE001"
)

var sentinel = regexp.MustCompile(envOpen + `([A-Za-z_][A-Za-z0-9_]*)` + envClose)

// hasEnv reports whether s holds a reference to an environment variable.
func hasEnv(s string) bool { return strings.Contains(s, envOpen) }

// withEnv returns s with its references replaced by the variables' values
// (for what must be known now: a file's path, the target's host), and the
// names of those that are not set.
func withEnv(s string) (string, []string) {
	var unset []string
	out := sentinel.ReplaceAllStringFunc(s, func(m string) string {
		name := sentinel.FindStringSubmatch(m)[1]
		v, ok := lookupEnv(name)
		if !ok {
			unset = append(unset, name)
		}
		return v
	})
	return out, unset
}

// headerValue returns the plan's value of a request header from a
// source: a secret becomes an environment reference (keeping an
// Authorization scheme such as "Bearer " in the plan), an idempotency key
// a fresh {{uuid}}, anything else literal text. The comment, if any, says
// what was done.
func (s *sketch) headerValue(name, value string) (v, comment string) {
	why := ""
	switch {
	case isIdempotency(name):
		return "{{uuid}}", "a new key for each request: the recorded one would be a duplicate after the first"
	case value == "" || hasEnv(value):
		return lit(value), "" // nothing, or the source already reads it from the environment
	case !s.secretHeader(name):
		cred := value
		if scheme, c, ok := strings.Cut(value, " "); ok && isScheme(scheme) {
			cred = c
		}
		var ok bool
		if why, ok = secretValue(cred); !ok {
			return lit(value), ""
		}
	}
	if !secret.Names(nil).Header(name) && !slices.ContainsFunc(s.http.secretHeaders, func(n string) bool { return strings.EqualFold(n, name) }) {
		s.http.secretHeaders = append(s.http.secretHeaders, name)
	}
	if scheme, cred, ok := strings.Cut(value, " "); ok && isScheme(scheme) && cred != "" {
		env := s.env.ref(name, fmt.Sprintf("the credentials of the %s header, after %q%s", name, scheme+" ", why), value)
		return scheme + " " + envTemplate(env), ""
	}
	env := s.env.ref(name, fmt.Sprintf("the value of the %s header%s", name, why), value)
	return envTemplate(env), ""
}

// secretValue reports whether a value is a secret by its shape
// (secret.LooksSecret), whatever its name, with the words that say so
// for the variable's description: " (a JWT, by its shape)".
func secretValue(v string) (string, bool) {
	why, ok := secret.LooksSecret(v)
	if !ok {
		return "", false
	}
	return " (" + why + ")", true
}

// oauthCode reports whether a query parameter or form field named name
// holds an OAuth authorization code (code=SplxlOBeZQ...): a word of
// letters and digits, eight or more, not a number.
func oauthCode(name, value string) bool {
	if !strings.EqualFold(name, "code") || len(value) < 8 {
		return false
	}
	letters, digits := false, false
	for _, r := range value {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters = true
		case r != '-' && r != '_' && r != '.' && r != '~':
			return false
		}
	}
	return letters && (digits || len(value) >= 16)
}

// pathSegment returns one segment of a URL's path for the plan: a secret
// by its shape (a token in the path) from the environment, else literal.
func (s *sketch) pathSegment(seg string) string {
	v, err := url.PathUnescape(seg)
	if err != nil {
		v = seg
	}
	why, ok := secretValue(v)
	if !ok || hasEnv(seg) {
		return lit(seg)
	}
	return envTemplate(s.env.ref("path token", "a path segment of the URL"+why, seg))
}

// isScheme reports whether s looks like an authentication scheme (Bearer,
// Basic, Token, Digest...).
func isScheme(s string) bool {
	if len(s) == 0 || len(s) > 16 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	return true
}

// cleanURL percent-encodes what may not stand in a URL as it is sent:
// spaces, control characters, bytes beyond ASCII, and a % that starts no
// escape. References to environment variables are kept.
func cleanURL(u string) string {
	var b strings.Builder
	last := 0
	for _, m := range append(sentinel.FindAllStringIndex(u, -1), []int{len(u), len(u)}) {
		part := u[last:m[0]]
		for i := 0; i < len(part); i++ {
			c := part[i]
			switch {
			case c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}':
				fmt.Fprintf(&b, "%%%02X", c)
			case c == '%' && (i+2 >= len(part) || !isHex(part[i+1]) || !isHex(part[i+2])):
				b.WriteString("%25")
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString(u[m[0]:m[1]])
		last = m[1]
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// pathQuery returns a URL's path and query for the plan: the values of
// secret query parameters become environment references, idempotency
// keys fresh uuids, the rest is literal.
func (s *sketch) pathQuery(rest string) string {
	path, query, hasQuery := strings.Cut(cleanURL(rest), "?")
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		segs[i] = s.pathSegment(seg)
	}
	out := strings.Join(segs, "/")
	if !hasQuery {
		return out
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		parts[i] = s.formField(p, "query parameter", true)
	}
	return out + "?" + strings.Join(parts, "&")
}

// formBody returns an application/x-www-form-urlencoded body for the
// plan, its secret fields read from the environment.
func (s *sketch) formBody(body string) string {
	parts := strings.Split(body, "&")
	for i, p := range parts {
		parts[i] = s.formField(p, "form field", true)
	}
	return strings.Join(parts, "&")
}

// formField returns one name=value of a query or form, URL-encoded as it
// is: a secret value becomes an environment reference, encoded when it is
// sent ({{env "X" | urlquery}}).
func (s *sketch) formField(p, kind string, encoded bool) string {
	k, v, hasValue := strings.Cut(p, "=")
	name, err := url.QueryUnescape(k)
	if err != nil {
		name = k
	}
	value, err := url.QueryUnescape(v)
	if err != nil {
		value = v
	}
	if t, ok := s.handedOut(value, encoded); hasValue && ok {
		return lit(k) + "=" + t
	}
	why := ""
	switch {
	case !hasValue || v == "" || hasEnv(v):
		return lit(p)
	case isIdempotency(name):
		return lit(k) + "={{uuid}}"
	case oauthCode(name, value):
		why = " (an OAuth authorization code)"
	case !s.secretName(name):
		var ok bool
		if why, ok = secretValue(value); !ok {
			return lit(p)
		}
	}
	env := s.env.ref(name, fmt.Sprintf("the value of the %s %s%s", kind, name, why), value)
	if encoded {
		return lit(k) + fmt.Sprintf("={{env %q | urlquery}}", env)
	}
	return lit(k) + "=" + envTemplate(env)
}

// bodyFor sets a request's body from a source's, to send the bytes the
// source sent: JSON (an object or an array) as written, its secret
// fields' values from the environment and the values an earlier answer
// handed out extracted, each where it stood; a form with its secret
// fields from the environment; other text as it is. It returns the
// Content-Type the request must send.
func (s *sketch) bodyFor(r *request, body, contentType, where string) string {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	if v, err := parseJSON([]byte(body)); err == nil && (v.kind == jobject || v.kind == jarray) {
		s.jsonSecrets(v, where)
		r.body, r.isJSON = rawJSON(body, v), true
	} else if ct == "application/x-www-form-urlencoded" || ct == "" && looksLikeForm(body) {
		r.body = s.formBody(body)
	} else {
		r.body = lit(body)
	}
	// A large body that holds nothing to put in its place (a secret, a
	// value handed out) goes in a file as it is; one that does stays.
	if len(body) > maxInlineBody && r.body == lit(body) {
		s.bodyFile(r, body, contentType, strings.ToUpper(where[:1])+where[1:])
	}
	return contentType
}

// looksLikeForm reports whether a body reads as name=value&name=value.
func looksLikeForm(body string) bool {
	if body == "" || strings.ContainsAny(body, " \n{}<>") {
		return false
	}
	for _, p := range strings.Split(body, "&") {
		if k, _, ok := strings.Cut(p, "="); !ok || k == "" {
			return false
		}
	}
	return true
}
