package secret

import (
	"errors"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces a secret value.
const Redacted = "<redacted>"

// headers are the header names whose values are secret, lower case.
var headers = []string{
	"authorization", "proxy-authorization", "cookie", "set-cookie",
	"x-api-key", "api-key", "x-auth-token", "x-access-token", "x-csrf-token",
}

// params are the query parameters whose values are secret, lower case.
var params = []string{
	"access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "api-key", "key",
	"secret", "client_secret", "password", "passwd", "pwd", "auth", "signature", "sig",
	"session", "sessionid", "session_id", "jwt",
}

// Names are the header names a run treats as secret beyond the built-in
// ones (a plan's http.secret_headers). The zero value holds none.
type Names []string

// Header reports whether the value of the header name is secret.
func (n Names) Header(name string) bool {
	l := strings.ToLower(name)
	return slices.Contains(headers, l) || slices.ContainsFunc(n, func(s string) bool { return strings.EqualFold(s, name) })
}

// URL returns raw with the password of its user information and the values
// of secret query parameters redacted. What does not parse as a URL with a
// host is returned as it is.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Redacted)
			changed = true
		}
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			name, _, found := strings.Cut(p, "=")
			if !found {
				continue
			}
			if n, err := url.QueryUnescape(name); err == nil && slices.Contains(params, strings.ToLower(n)) {
				parts[i] = name + "=" + Redacted
				changed = true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return raw
	}
	// String escapes the placeholder's angle brackets in the user
	// information; show it as written.
	return strings.Replace(u.String(), url.PathEscape(Redacted), Redacted, 1)
}

// Args returns a command line's arguments with secrets redacted: the values
// of --header flags that name a secret header, and every URL.
func (n Names) Args(args []string) []string {
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--header" && i+1 < len(args):
			out[i] = a
			i++
			out[i] = n.headerArg(args[i])
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + n.headerArg(strings.TrimPrefix(a, "--header="))
		default:
			out[i] = redactAssignments(redactURLs(a))
		}
	}
	return out
}

// assignment matches name=value inside an argument: an --env KEY=value, a
// --set db.password=value in a command line.
var assignment = regexp.MustCompile(`([A-Za-z0-9_.\-]+)=([^\s'"]+)`)

// redactAssignments redacts the value of every name=value in a whose name
// mentions a secret word (API_TOKEN=..., db.password=...).
func redactAssignments(a string) string {
	if !strings.Contains(a, "=") {
		return a
	}
	return assignment.ReplaceAllStringFunc(a, func(m string) string {
		name, _, _ := strings.Cut(m, "=")
		if !Mentions([]byte(name)) || strings.Contains(m, Redacted) {
			return m
		}
		return name + "=" + Redacted
	})
}

// headerArg redacts the value of a "Name: value" argument naming a secret
// header.
func (n Names) headerArg(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if name = strings.TrimSpace(name); !ok || !n.Header(name) {
		return h
	}
	return name + ": " + Redacted
}

// redactURLs redacts a flag's value that is a URL, whole ("http://...") or
// after an "=" ("--url=http://...").
func redactURLs(a string) string {
	if i := strings.Index(a, "://"); i > 0 {
		start := strings.LastIndexByte(a[:i], '=') + 1
		return a[:start] + URL(a[start:])
	}
	return a
}

// mentioned are the words that make a text (a response body) likely to
// hold a secret, lower case.
var mentioned = []string{"token", "password", "passwd", "secret", "api_key", "apikey", "api-key", "session", "jwt",
	"authorization", "cookie", "bearer", "credential", "private", "signature", "access_key", "auth"}

// Mentions reports whether b mentions a word that secrets are stored
// under (token, password, secret, ...): such a text is not shown.
func Mentions(b []byte) bool {
	l := strings.ToLower(string(b))
	return slices.ContainsFunc(mentioned, func(w string) bool { return strings.Contains(l, w) })
}

// Withheld stands for a line of output that mentions a secret word.
const Withheld = "(a line that mentions a secret, withheld)"

// Tail returns the last lines (at most n, from the file's last maxBytes)
// of a log file, a line that mentions a secret word withheld: what a
// command or a target said last, safe to write into a result. It reads
// only the file's end, however large the file is; "" when it cannot.
func Tail(path string, n, maxBytes int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return ""
	}
	from := max(st.Size()-int64(maxBytes), 0)
	buf := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines {
		if Mentions([]byte(l)) {
			lines[i] = Withheld
		}
	}
	return strings.Join(lines, "\n")
}
