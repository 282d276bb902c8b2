package scenario

import (
	"bytes"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// MaxCookies is how many cookie names a virtual user keeps, as a browser
// bounds its jar: a cookie of a new name past it is not stored (and
// counted, see Set.DroppedCookies), so a target that sets a new name with
// every response cannot grow the Cookie header without end.
const MaxCookies = 50

// jar is a virtual user's cookies. It stays empty, and costs nothing,
// until a response sets a cookie.
//
// A session cookie set again as it was (a login that hands out the same
// cookie at every iteration) changes nothing, and the Cookie header of a
// URL is the same until the jar changes: both are remembered, so that a
// flow's requests do not parse URLs and walk the jar each time.
type jar struct {
	j       *cookiejar.Jar
	cookies []*http.Cookie // scratch
	names   map[string]struct{}
	dropped *atomic.Int64 // the Set's count of cookies not stored
	// same holds, by cookie name, the URL (without its query) and the
	// Set-Cookie line that last set a session cookie (no Max-Age, no
	// Expires) of that name: the same line from the same URL again is
	// not set again.
	same map[string]string
	// headers holds the Cookie header of each URL (without its query)
	// worked out since the jar last changed; until is the earliest expiry
	// of a cookie that carried one (expires, by cookie and the URL that
	// set it), past which none is trusted until the expired ones are
	// forgotten. Past maxExpiring such cookies none is remembered.
	headers  map[string]string
	until    time.Time
	expires  map[string]time.Time
	uncached bool
}

// maxExpiring bounds the cookies with an expiry a jar follows (a target
// that sets one from every URL would otherwise grow it without end).
const maxExpiring = 256

// maxHeaders bounds the Cookie headers a jar remembers.
const maxHeaders = 32

// withoutQuery is rawURL up to its query or fragment.
func withoutQuery(rawURL string) string {
	if i := strings.IndexAny(rawURL, "?#"); i >= 0 {
		return rawURL[:i]
	}
	return rawURL
}

// unchanged reports whether line, from rawURL, sets a session cookie the
// way it was last set.
func (j *jar) unchanged(at string, line []byte) bool {
	eq := bytes.IndexByte(line, '=')
	if eq <= 0 || j.same == nil {
		return false
	}
	prev, ok := j.same[string(bytes.TrimSpace(line[:eq]))]
	return ok && len(prev) == len(at)+1+len(line) && prev[:len(at)] == at && prev[len(at)] == ' ' && prev[len(at)+1:] == string(line)
}

func (j *jar) active() bool { return j.j != nil }

// update stores the cookies out sets for rawURL.
func (j *jar) update(rawURL string, out *transport.Outcome) {
	j.cookies = j.cookies[:0]
	at := withoutQuery(rawURL)
	out.EachHeader("Set-Cookie", func(line []byte) bool {
		if j.unchanged(at, line) {
			return true
		}
		c, err := http.ParseSetCookie(string(line))
		if err != nil {
			return true
		}
		if _, known := j.names[c.Name]; !known {
			if len(j.names) >= MaxCookies {
				j.dropped.Add(1)
				return true
			}
			if j.names == nil {
				j.names = map[string]struct{}{}
			}
			j.names[c.Name] = struct{}{}
		}
		j.cookies = append(j.cookies, c)
		j.remember(at, line, c)
		return true
	})
	if len(j.cookies) == 0 {
		return
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if j.j == nil {
		j.j, _ = cookiejar.New(nil) // nil options cannot fail
	}
	j.j.SetCookies(u, j.cookies)
	clear(j.headers)
}

// remember notes how c, stored from line at URL at, was set: a session
// cookie's line to skip when it comes again unchanged, or the expiry past
// which no remembered Cookie header is trusted.
func (j *jar) remember(at string, line []byte, c *http.Cookie) {
	if c.MaxAge == 0 && c.RawExpires == "" {
		if j.same == nil {
			j.same = map[string]string{}
		}
		j.same[c.Name] = at + " " + string(line)
		return
	}
	delete(j.same, c.Name)
	exp := expiry(c)
	if exp.IsZero() || j.uncached {
		return // a cookie deleted has nothing to expire: the jar's change cleared the headers
	}
	key := c.Name + "\x00" + c.Domain + "\x00" + c.Path + "\x00" + at
	if _, ok := j.expires[key]; !ok && len(j.expires) >= maxExpiring {
		j.uncached, j.expires = true, nil
		return
	}
	if j.expires == nil {
		j.expires = map[string]time.Time{}
	}
	j.expires[key] = exp
	if j.until.IsZero() || exp.Before(j.until) {
		j.until = exp
	}
}

// expiry is when c expires, zero for a session cookie or one deleted
// (Max-Age < 0, or an Expires already past).
func expiry(c *http.Cookie) time.Time {
	switch {
	case c.MaxAge < 0:
		return time.Time{}
	case c.MaxAge > 0:
		return time.Now().Add(time.Duration(c.MaxAge) * time.Second)
	case !c.Expires.IsZero() && !c.Expires.After(time.Now()):
		return time.Time{}
	}
	return c.Expires
}

// expired forgets the Cookie headers and the expiries past at now, and
// trusts the headers again up to the earliest expiry left.
func (j *jar) expired(now time.Time) {
	clear(j.headers)
	j.until = time.Time{}
	for k, e := range j.expires {
		switch {
		case !e.After(now):
			delete(j.expires, k)
		case j.until.IsZero() || e.Before(j.until):
			j.until = e
		}
	}
}

// header returns the Cookie header for rawURL, or "".
func (j *jar) header(rawURL string) string {
	if j.j == nil {
		return ""
	}
	at := withoutQuery(rawURL)
	if !j.until.IsZero() {
		if now := time.Now(); !now.Before(j.until) {
			j.expired(now)
		}
	}
	trusted := !j.uncached
	if h, ok := j.headers[at]; ok && trusted {
		return h
	}
	h := j.cookieHeader(rawURL)
	if trusted {
		if j.headers == nil || len(j.headers) >= maxHeaders {
			j.headers = make(map[string]string, maxHeaders)
		}
		j.headers[at] = h
	}
	return h
}

// cookieHeader works out the Cookie header for rawURL from the jar.
func (j *jar) cookieHeader(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	cs := j.j.Cookies(u)
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.Name + "=" + c.Value)
	}
	return b.String()
}
