package demo

import (
	"strings"
	"sync"
	"time"
)

// brake is the flood brake: a token bucket per site. A site starts with
// burst tokens, each message takes one, and tokens come back at rate per
// second up to burst; a message that finds no token is rejected. With the
// defaults (10 a second, 600) a site can send 600 messages at once and then
// 10 a second: "600 messages a minute, 10 a second".
type brake struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	sites   map[string]*bucket
	sweepAt int // the number of sites at which full buckets are swept
}

// minSweep is the smallest number of sites at which the brake forgets sites
// whose bucket has refilled (a full bucket is the same as none).
const minSweep = 10_000

func newBrake(rate float64, burst int) *brake {
	return &brake{rate: rate, burst: float64(burst), sites: map[string]*bucket{}, sweepAt: minSweep}
}

// allow takes a token from site's bucket. Without one it returns false and
// how long until the next token.
func (b *brake) allow(site string, now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, found := b.sites[site]
	if !found {
		if len(b.sites) >= b.sweepAt {
			b.sweep(now)
		}
		k = &bucket{tokens: b.burst, last: now}
		b.sites[strings.Clone(site)] = k
	}
	k.tokens = min(b.burst, k.tokens+now.Sub(k.last).Seconds()*b.rate)
	k.last = now
	if k.tokens < 1 {
		return false, time.Duration((1 - k.tokens) / b.rate * float64(time.Second))
	}
	k.tokens--
	return true, 0
}

// sweep forgets the sites whose bucket is full again, so that many sites
// over a long run do not grow the map without bound. Called with mu held.
func (b *brake) sweep(now time.Time) {
	for site, k := range b.sites {
		if k.tokens+now.Sub(k.last).Seconds()*b.rate >= b.burst {
			delete(b.sites, site)
		}
	}
	b.sweepAt = max(minSweep, 2*len(b.sites))
}
