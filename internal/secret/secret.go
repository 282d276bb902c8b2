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

// headers are the header names whose values are secret, lower case,
// beyond those Name finds by their words.
var headers = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// words are the parts of a name (a header, a query parameter, a flag, a
// variable) that say its value is a secret, lower case: X-Vendor-Token,
// private_token, X-Amz-Signature, --db-password, API_KEY, access-token.
var words = []string{"token", "secret", "signature", "password", "passwd", "passphrase", "key", "auth", "session",
	"credential", "cookie", "jwt"}

// exact are short names that are secrets only whole ("sig=", "pwd=").
var exact = []string{"sig", "pwd", "pass", "sid", "otp", "pin", "passcode", "refresh"}

// public are names that contain a secret word but hold no secret: an
// idempotency key is a request's id, a file's path is not its content.
var public = []string{"idempotency-key", "x-idempotency-key", "keep-alive"}

// Name reports whether a value stored under name is a secret: the name
// contains a secret word (token, secret, signature, password, passphrase,
// key, auth, session, credential, cookie, jwt), or is a short secret name
// whole (sig, pwd, pass, sid, otp, pin, passcode, refresh). Names of files and paths (--token-file) are not:
// their values are where a secret is, not the secret.
func Name(name string) bool {
	l := strings.ToLower(strings.TrimLeft(name, "-"))
	switch {
	case l == "" || slices.Contains(public, l):
		return false
	case strings.HasSuffix(l, "-file"), strings.HasSuffix(l, "_file"), strings.HasSuffix(l, "-path"), strings.HasSuffix(l, "_path"):
		return false
	case slices.Contains(exact, l):
		return true
	}
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) })
}

// Names are the header names a run treats as secret beyond the built-in
// ones (a plan's http.secret_headers). The zero value holds none.
type Names []string

// Header reports whether the value of the header name is secret: a
// credential header (Authorization, Cookie), one whose name says so
// (Name: PRIVATE-TOKEN, X-Vendor-Token, X-API-Key), or one the plan names.
func (n Names) Header(name string) bool {
	l := strings.ToLower(name)
	return slices.Contains(headers, l) || Name(l) || slices.ContainsFunc(n, func(s string) bool { return strings.EqualFold(s, name) })
}

// URL returns raw with the password of its user information and the values
// of secret query parameters (Name) redacted. What does not parse as a URL with a
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
			if n, err := url.QueryUnescape(name); err == nil && Name(n) {
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

// Args returns a command line's arguments with secrets redacted: the
// values of --header flags that name a secret header, of flags whose name
// says they hold a secret (--password X, --api-token=X), of name=value
// assignments whose name does (API_TOKEN=...), and every URL's password and
// secret query parameters, also inside an argument that is a whole command
// (--monitor-cmd "server --db postgres://app:pw@db/x").
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
		case strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && Name(a) && i+1 < len(args):
			out[i] = a
			i++
			out[i] = Redacted
		default:
			out[i] = Command(a)
		}
	}
	return out
}

// Command returns a command (a shell command line, or one argument of
// one) with its secrets redacted, as Args does: every URL's password and
// secret query parameters, flags whose name says they hold a secret
// (--password X, --api-token=X, -p is not: a short flag says nothing), and
// name=value assignments whose name does. It is what ceiling writes or
// prints of a command the user gave it: a target's, an event's, a sweep's.
func Command(c string) string {
	var b strings.Builder
	last := 0
	for _, loc := range urlInText.FindAllStringIndex(c, -1) {
		b.WriteString(redactFlags(c[last:loc[0]]))
		b.WriteString(URL(c[loc[0]:loc[1]]))
		last = loc[1]
	}
	b.WriteString(redactFlags(c[last:]))
	return b.String()
}

// redactFlags redacts, in a text that holds no URL, the values of flags
// and assignments whose name says they hold a secret.
func redactFlags(c string) string {
	c = flagSpaced.ReplaceAllStringFunc(c, func(m string) string {
		sub := flagSpaced.FindStringSubmatch(m)
		if !Name(sub[1]) || sub[3] == Redacted {
			return m
		}
		return sub[1] + sub[2] + Redacted
	})
	return redactAssignments(c)
}

var (
	// urlInText finds URLs inside a text: a scheme, ://, and what follows
	// up to a space or a quote.
	urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s'"]+`)
	// flagSpaced finds "--name value", its value a word or a quoted string
	// that does not start with "-".
	flagSpaced = regexp.MustCompile(`(--[A-Za-z0-9][A-Za-z0-9_.\-]*)(\s+)('[^']*'|"[^"]*"|[^\s'"\-][^\s'"]*)`)
)

// assignment matches name=value inside an argument: an --env KEY=value, a
// --set db.password=value, an --api-token=value in a command line.
var assignment = regexp.MustCompile(`([A-Za-z0-9_.\-]+)=('[^']*'|"[^"]*"|[^\s'"]+)`)

// redactAssignments redacts the value of every name=value in a whose name
// says it is a secret (API_TOKEN=..., db.password=..., --api-token=...).
func redactAssignments(a string) string {
	if !strings.Contains(a, "=") {
		return a
	}
	return assignment.ReplaceAllStringFunc(a, func(m string) string {
		name, value, _ := strings.Cut(m, "=")
		if !(Name(name) || Mentions([]byte(name))) || value == Redacted {
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

// jwt is a JSON Web Token's shape: a base64url JSON header ("eyJ" is
// `{"`), a payload and a signature (empty when unsigned), dot-separated.
var jwt = regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$`)

// vendorKeys are the shapes of API keys that say whose they are: Stripe,
// GitHub, GitLab, Slack, AWS, Google.
var vendorKeys = regexp.MustCompile(`^(?:(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|` +
	`glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[0-9A-Za-z_-]{35})$`)

// tokenChars are the characters of a token: base64 (standard and URL's)
// and a few separators.
var tokenChars = regexp.MustCompile(`^[A-Za-z0-9_\-+/=.~]+$`)

// LooksSecret reports whether a value is a secret by its shape, whatever
// the name it is stored under, and says what it looks like: a JWT, an
// API key with a vendor's prefix, or a long random-looking token (20
// characters or more of base64's, with upper and lower case letters and
// digits that change class at least every third character, as random
// bytes do and words with numbers do not). Numbers, UUIDs and hex
// digests are ids, not secrets: they are not.
func LooksSecret(v string) (why string, ok bool) {
	switch {
	case jwt.MatchString(v):
		return "a JWT, by its shape", true
	case vendorKeys.MatchString(v):
		return "an API key, by its prefix", true
	case len(v) < 20 || len(v) > 4096 || !tokenChars.MatchString(v):
		return "", false
	}
	class := func(c byte) int {
		switch {
		case c >= 'A' && c <= 'Z':
			return 1
		case c >= 'a' && c <= 'z':
			return 2
		case c >= '0' && c <= '9':
			return 3
		}
		return 0
	}
	var seen [4]bool
	changes := 0
	for i := 0; i < len(v); i++ {
		seen[class(v[i])] = true
		if i > 0 && class(v[i]) != class(v[i-1]) {
			changes++
		}
	}
	if seen[1] && seen[2] && seen[3] && float64(changes) >= 0.35*float64(len(v)-1) {
		return "a long random-looking token", true
	}
	return "", false
}
