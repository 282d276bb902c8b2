package scenario

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// jar is a virtual user's cookies. It stays empty, and costs nothing,
// until a response sets a cookie.
type jar struct {
	j       *cookiejar.Jar
	cookies []*http.Cookie // scratch
}

func (j *jar) active() bool { return j.j != nil }

// update stores the cookies out sets for rawURL.
func (j *jar) update(rawURL string, out *transport.Outcome) {
	j.cookies = j.cookies[:0]
	out.EachHeader("Set-Cookie", func(line []byte) bool {
		if c, err := http.ParseSetCookie(string(line)); err == nil {
			j.cookies = append(j.cookies, c)
		}
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
