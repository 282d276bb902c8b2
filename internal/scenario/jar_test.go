package scenario

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// setCookies is an outcome whose header sets each line as a cookie.
func setCookies(lines ...string) *transport.Outcome {
	var h []byte
	for _, l := range lines {
		h = append(h, "Set-Cookie: "+l+"\r\n"...)
	}
	return &transport.Outcome{Header: h}
}

// The jar remembers what it can (a session cookie set again as it was, the
// Cookie header of a URL) and never answers from memory what the jar
// itself would answer otherwise: a changed value, another path or host,
// an expired cookie. On a fake clock (the jar's expiries and
// net/http/cookiejar's read time.Now, which synctest's bubble fakes): a
// Max-Age of 1 s passes at once.
func TestJarRemembersOnlyWhatHolds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testJarRemembersOnlyWhatHolds)
}

func testJarRemembersOnlyWhatHolds(t *testing.T) {
	j := jar{dropped: new(atomic.Int64)}
	// want checks the header against the jar's own answer, and the
	// cookies in it (in any order) against those named.
	want := func(url, cookies string) {
		t.Helper()
		got, fresh := j.header(url), j.cookieHeader(url)
		if got != fresh {
			t.Errorf("Cookie for %s = %q, the jar itself says %q", url, got, fresh)
		}
		parts := strings.Split(got, "; ")
		slices.Sort(parts)
		if strings.Join(parts, "; ") != cookies {
			t.Errorf("Cookie for %s = %q, want %q", url, got, cookies)
		}
	}
	j.update("http://a.test/login", setCookies("sid=1; Path=/", "pref=x; Path=/cart"))
	want("http://a.test/cart?n=1", "pref=x; sid=1")
	want("http://a.test/checkout", "sid=1")
	j.update("http://a.test/login", setCookies("sid=1; Path=/")) // unchanged: skipped
	want("http://a.test/cart?n=2", "pref=x; sid=1")
	j.update("http://a.test/login", setCookies("sid=2; Path=/")) // changed
	want("http://a.test/cart", "pref=x; sid=2")
	want("http://b.test/cart", "")
	j.update("http://b.test/login", setCookies("sid=2; Path=/")) // the same line from another host
	want("http://b.test/cart", "sid=2")
	// A cookie without a Path belongs to the directory of the URL that set
	// it: the same line from another directory is another cookie.
	j.update("http://a.test/d1/page", setCookies("c=1"))
	want("http://a.test/d2/page", "sid=2")
	j.update("http://a.test/d2/page", setCookies("c=1"))
	want("http://a.test/d2/page", "c=1; sid=2")
	want("http://a.test/d1/x", "c=1; sid=2")
	j.update("http://a.test/login", setCookies("tmp=1; Path=/; Max-Age=1"))
	want("http://a.test/x", "sid=2; tmp=1")
	time.Sleep(1100 * time.Millisecond)
	want("http://a.test/x", "sid=2")
	j.update("http://a.test/login", setCookies("sid=; Path=/; Max-Age=0")) // deleted
	want("http://a.test/cart", "pref=x")
	j.update("http://a.test/login", setCookies("sid=2; Path=/")) // the line it had before: set again
	want("http://a.test/cart", "pref=x; sid=2")
}

// A flow's steady state costs no allocation in the jar: the login's same
// session cookie, then the Cookie header of the flow's next requests.
func TestJarSteadyStateAllocatesNothing(t *testing.T) {
	j := jar{dropped: new(atomic.Int64)}
	login := setCookies("sid=abc; Path=/")
	j.update("http://a.test/login", login)
	j.header("http://a.test/cart")
	allocs := testing.AllocsPerRun(100, func() {
		j.update("http://a.test/login", login)
		if j.header("http://a.test/cart") != "sid=abc" {
			t.Fatal("lost the cookie")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per iteration, want 0", allocs)
	}
}

// A cookie that expired, or was deleted, does not stop the jar from
// remembering Cookie headers afterwards: once the expired one is
// forgotten, a URL's header is remembered again (and still right). On a
// fake clock.
func TestJarRemembersAgainAfterExpiryAndDeletion(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testJarRemembersAgainAfterExpiryAndDeletion)
}

func testJarRemembersAgainAfterExpiryAndDeletion(t *testing.T) {
	j := jar{dropped: new(atomic.Int64)}
	remembered := func(url, want string) {
		t.Helper()
		got := j.header(url)
		_, kept := j.headers[withoutQuery(url)]
		if !kept || got != want || got != j.cookieHeader(url) {
			t.Errorf("Cookie for %s = %q, remembered %v; want %q, remembered", url, got, kept, want)
		}
	}
	j.update("http://a.test/login", setCookies("sid=1; Path=/", "tmp=1; Path=/; Max-Age=1"))
	remembered("http://a.test/cart", "sid=1; tmp=1")
	j.update("http://a.test/login", setCookies("sid=1; Path=/", "tmp=1; Path=/; Max-Age=1")) // later expiry
	time.Sleep(1100 * time.Millisecond)
	remembered("http://a.test/cart", "sid=1")
	j.update("http://a.test/logout", setCookies("sid=; Path=/; Max-Age=0")) // deleted
	remembered("http://a.test/cart", "")
	j.update("http://a.test/login", setCookies("sid=2; Path=/", "old=1; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"))
	remembered("http://a.test/cart", "sid=2")
	if j.uncached || len(j.expires) != 0 {
		t.Errorf("uncached %v, %d expiries followed; want none left", j.uncached, len(j.expires))
	}
}

// Past maxExpiring cookies with an expiry, the jar remembers no header,
// and still answers right.
func TestJarTooManyExpiringCookies(t *testing.T) {
	t.Parallel()
	j := jar{dropped: new(atomic.Int64)}
	for i := range maxExpiring + 1 {
		j.update(fmt.Sprintf("http://a.test/item/%d", i), setCookies("seen=1; Path=/; Max-Age=600"))
	}
	if got := j.header("http://a.test/cart"); !j.uncached || len(j.headers) != 0 || got != "seen=1" {
		t.Errorf("Cookie %q, uncached %v, %d headers remembered; want seen=1, none remembered", got, j.uncached, len(j.headers))
	}
}
