package scenario

import (
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Fixed returns each scenario's request, in scenario order, when every
// scenario is one HTTP request that never changes and asks nothing of its
// answer but its status: nothing templated, no checks of body or headers,
// no extraction, tags, delivery, login, vars, repeated ids to watch or
// obeyed Retry-After. Such a set needs no virtual user, and an executor may
// send its requests from an event loop (transport.Loop) and record each
// with Record, which is what Iterate would have recorded. It returns nil
// for any other set.
func (s *Set) Fixed() []*transport.Request {
	if len(s.login) > 0 || len(s.vars) > 0 || len(s.tagKeys) > 0 || s.obeyRetryAfter {
		return nil
	}
	out := make([]*transport.Request, 0, len(s.scenarios))
	for _, c := range s.scenarios {
		if c.ws != nil || c.delivery != nil || len(c.steps) != 1 {
			return nil
		}
		r := c.steps[0]
		if r.static == nil || r.capture || len(r.extract) > 0 || len(r.checks.header) > 0 || len(r.ids) > 0 {
			return nil
		}
		out = append(out, r.static)
	}
	return out
}

// Record records one exchange of fixed scenario sc (see Fixed) as the
// whole iteration it is, as Iterate does: the Retry-After of a limited
// answer, the exchange, then the iteration, in it (the caller's scratch,
// so that recording allocates nothing).
func (s *Set) Record(rec Recorder, it *metrics.Iteration, sc int, intended, start, end time.Duration, out *transport.Outcome) {
	if ws := s.scenarios[sc].ws; ws != nil && ws.idle {
		rec.Idle(intended) // an idle soak's arrival (Frames): no exchange, no iteration
		return
	}
	if out.Kind == transport.Limited {
		out.RetryAfter = retryAfter(out)
	}
	// A check failure with no status and nothing sent is a frame that could
	// not be made (Frames): it was never an exchange, as Iterate records it.
	if out.Kind != transport.Check || out.Status != 0 || out.BytesOut != 0 {
		rec.Exchange(intended, intended, start, end, out)
	}
	*it = metrics.Iteration{Scenario: sc, Of: intended, Intended: intended, End: end, Kind: out.Kind, BodyBytes: out.BytesIn, Tags: it.Tags[:0]}
	rec.Iteration(it)
}

// OnLoop reports whether an event loop can drive every iteration of the set
// through Begin and Answer, one request at a time: every scenario is HTTP
// (none a websocket), and every request's URL, the login's included, is
// plain http:// to a host written out (see Origins), so that none can
// render to a scheme or protocol the loop does not speak (the run gives a
// loop only to a plan over HTTP/1.1 without redirects), nor to a host the
// loop would have to look up in the middle of a step.
func (s *Set) OnLoop() bool {
	_, ok := s.origins()
	return ok
}

// Origins returns the distinct http://host[:port] of the set's requests
// when OnLoop holds, for the loop to resolve before the first step.
func (s *Set) Origins() []string {
	o, _ := s.origins()
	return o
}

func (s *Set) origins() ([]string, bool) {
	var out []string
	add := func(rs []*request) bool {
		for _, r := range rs {
			rest, ok := strings.CutPrefix(r.url.s, "http://")
			if !ok {
				return false
			}
			host := rest[:strings.IndexAny(rest+"/", "/?#")]
			if host == "" || strings.Contains(host, "{{") {
				return false
			}
			if o := "http://" + host; !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
		return true
	}
	if !add(s.login) {
		return nil, false
	}
	for _, c := range s.scenarios {
		if c.ws != nil || !add(c.steps) {
			return nil, false
		}
	}
	return out, true
}
