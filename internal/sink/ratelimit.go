package sink

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// RateLimit limits how often the sink accepts requests per key, as real
// APIs do (Slack: about one post a second per channel). Each key has a
// token bucket with burst 1; a request that finds it empty is answered 429
// with Retry-After.
type RateLimit struct {
	// Per says where the key is: a gjson path into the JSON body
	// ("channel"), "header:X-Name" for a request header, or "" for one
	// bucket shared by all requests. A request without the key (no such
	// field or header) uses the bucket of the empty key.
	Per string
	// RPS is the sustained rate each key may post at, in requests per
	// second. It must be positive.
	RPS float64
}

// headerPrefix marks a RateLimit.Per that names a header.
const headerPrefix = "header:"

func (r *RateLimit) validate() error {
	var errs []error
	if math.IsNaN(r.RPS) || math.IsInf(r.RPS, 0) || r.RPS <= 0 {
		errs = append(errs, fmt.Errorf("rate_limit.rps: %v is not a positive rate", r.RPS))
	}
	if h, ok := strings.CutPrefix(r.Per, headerPrefix); ok && strings.TrimSpace(h) == "" {
		errs = append(errs, fmt.Errorf("rate_limit.per: %q names no header", r.Per))
	}
	return errors.Join(errs...)
}

// key extracts the rate-limit key of a request.
func (r *RateLimit) key(body []byte, h http.Header) string {
	switch {
	case r.Per == "":
		return ""
	case strings.HasPrefix(r.Per, headerPrefix):
		return h.Get(strings.TrimSpace(r.Per[len(headerPrefix):]))
	default:
		return gjson.GetBytes(body, r.Per).String()
	}
}

// limiterShards spreads keys over independent locks so that posts to
// different channels do not contend.
const limiterShards = 32

// pruneAt is the number of keys a shard holds before it forgets the keys
// whose buckets are full again (forgetting those changes nothing).
const pruneAt = 4096

// Bounds on what a sender can make the limiter keep: a key longer than
// maxKeyBytes is kept as its 64-bit hash (a channel name is short; 3000
// keys of 200 KB once took 850 MB), and a shard holds at most
// maxShardKeys keys whose buckets are still refilling (524,288 in all): a
// new key past that is admitted without a bucket, as if seen the first
// time, rather than grow the sink without end.
const (
	maxKeyBytes  = 64
	maxShardKeys = 1 << 14
)

// limiter is a set of burst-1 token buckets, one per key, kept as the
// "theoretical arrival time" of GCRA: tat is the earliest offset at which
// the key's bucket holds a token again. A request at now is admitted when
// tat <= now, and then tat = now + interval; otherwise it waits tat − now.
// For burst 1 this is exactly a token bucket of rate 1/interval.
type limiter struct {
	interval time.Duration
	seed     maphash.Seed
	shards   [limiterShards]limiterShard
}

type limiterShard struct {
	mu    sync.Mutex
	tat   map[string]time.Duration // offsets from the sink's start
	prune int                      // size that triggers the next prune
}

func newLimiter(rps float64) *limiter {
	l := &limiter{interval: time.Duration(float64(time.Second) / rps), seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].tat = make(map[string]time.Duration)
		l.shards[i].prune = pruneAt
	}
	return l
}

// allow admits or refuses a request of key at offset now. Refused, it
// returns how long until the key's bucket holds a token again.
func (l *limiter) allow(key string, now time.Duration) (bool, time.Duration) {
	h := maphash.String(l.seed, key)
	if len(key) > maxKeyBytes {
		key = "\x00" + strconv.FormatUint(h, 16) // no key of a request starts with NUL
	}
	sh := &l.shards[h%limiterShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tat, seen := sh.tat[key]
	if seen && tat > now {
		return false, tat - now
	}
	if !seen && len(sh.tat) >= sh.prune {
		sh.forget(now)
	}
	if !seen && len(sh.tat) >= maxShardKeys {
		return true, 0 // the shard is full of refilling buckets: admitted, not kept
	}
	sh.tat[key] = now + l.interval
	return true, 0
}

// forget drops the keys whose bucket is full at now and sets the next
// prune size so that pruning stays amortised O(1) per request.
func (sh *limiterShard) forget(now time.Duration) {
	for k, tat := range sh.tat {
		if tat <= now {
			delete(sh.tat, k)
		}
	}
	sh.prune = max(pruneAt, 2*len(sh.tat))
}

// retryAfter renders a wait as the Retry-After header value: whole
// seconds, rounded up, at least 1.
func retryAfter(wait time.Duration) string {
	s := int64(math.Ceil(wait.Seconds()))
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10)
}
