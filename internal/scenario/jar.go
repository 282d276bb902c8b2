package scenario

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// MaxCookies is how many cookie names a virtual user keeps, as a browser
// bounds its jar: a cookie of a new name past it is not stored (and
// counted, see Set.DroppedCookies), so a target that sets a new name with
// every response cannot grow the Cookie header without end.
const MaxCookies = 50

// jar is a virtual user's cookies. It stays empty, and costs nothing,
// until a response sets a cookie.
type jar struct {
	j       *cookiejar.Jar
	cookies []*http.Cookie // scratch
	names   map[string]struct{}
	dropped *atomic.Int64 // the Set's count of cookies not stored
}

func (j *jar) active() bool { return j.j != nil }

// update stores the cookies out sets for rawURL.
func (j *jar) update(rawURL string, out *transport.Outcome) {
	j.cookies = j.cookies[:0]
	out.EachHeader("Set-Cookie", func(line []byte) bool {
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
}

// header returns the Cookie header for rawURL, or "".
func (j *jar) header(rawURL string) string {
	if j.j == nil {
		return ""
	}
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
