package sink

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	l := newLimiter(2) // one token every 500ms, burst 1
	ms := time.Millisecond
	for _, step := range []struct {
		key      string
		at       time.Duration
		ok       bool
		wait     time.Duration
		retryHdr string
	}{
		{"a", 0, true, 0, ""},
		{"a", 100 * ms, false, 400 * ms, "1"},
		{"b", 100 * ms, true, 0, ""},
		{"a", 499 * ms, false, 1 * ms, "1"},
		{"a", 500 * ms, true, 0, ""},
		{"a", 2 * time.Second, true, 0, ""}, // an idle key does not bank tokens: burst 1
		{"a", 2*time.Second + ms, false, 499 * ms, "1"},
		{"", 0, true, 0, ""},
	} {
		ok, wait := l.allow(step.key, step.at)
		if ok != step.ok || wait != step.wait {
			t.Errorf("allow(%q, %v) = %v, %v, want %v, %v", step.key, step.at, ok, wait, step.ok, step.wait)
		}
	}
}

func TestLimiterForgetsFullBuckets(t *testing.T) {
	l := newLimiter(1)
	for i := range 100_000 {
		l.allow(string(rune('a'+i%26))+time.Duration(i).String(), time.Duration(i)*time.Millisecond)
	}
	total := 0
	for i := range l.shards {
		total += len(l.shards[i].tat)
	}
	// Only keys used in the last second can hold state: about 1000, plus
	// what the shards have not pruned yet.
	if total > limiterShards*2*pruneAt {
		t.Errorf("keys kept after 100000 one-off keys = %d, want at most %d", total, limiterShards*2*pruneAt)
	}
	if ok, _ := l.allow("a0s", 200*time.Second); !ok {
		t.Error("a forgotten key is refused, want a full bucket")
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{
		{0, "1"}, {time.Nanosecond, "1"}, {time.Second, "1"}, {time.Second + 1, "2"}, {9500 * time.Millisecond, "10"},
	} {
		if got := retryAfter(tc.wait); got != tc.want {
			t.Errorf("retryAfter(%v) = %q, want %q", tc.wait, got, tc.want)
		}
	}
}

func TestRateLimitKey(t *testing.T) {
	h := http.Header{"X-Team": {"t1"}}
	body := []byte(`{"channel":"C1","n":{"k":2}}`)
	for _, tc := range []struct{ per, want string }{
		{"", ""}, {"channel", "C1"}, {"n.k", "2"}, {"missing", ""}, {"header:X-Team", "t1"}, {"header: x-team", "t1"}, {"header:X-None", ""},
	} {
		if got := (&RateLimit{Per: tc.per, RPS: 1}).key(body, h); got != tc.want {
			t.Errorf("RateLimit{Per: %q}.key = %q, want %q", tc.per, got, tc.want)
		}
	}
}

// A sender cannot make the limiter keep what it sends: 3000 keys of
// 200 KB each (which once grew the sink by 830 MB) are kept by their hash,
// still limited each; a flood of distinct keys within one refill stops
// growing the buckets at the bound, the keys past it admitted.
func TestLimiterBoundsKeys(t *testing.T) {
	l := newLimiter(1)
	long := strings.Repeat("x", 200<<10)
	for i := range 3000 {
		k := long + strconv.Itoa(i)
		if ok, _ := l.allow(k, 0); !ok {
			t.Fatalf("a new long key %d was refused", i)
		}
		if ok, _ := l.allow(k, time.Millisecond); ok {
			t.Fatalf("long key %d admitted twice within its refill: a long key must still be limited", i)
		}
	}
	kept, bytes := 0, 0
	for i := range l.shards {
		for k := range l.shards[i].tat {
			kept, bytes = kept+1, bytes+len(k)
		}
	}
	if kept != 3000 || bytes > 3000*(maxKeyBytes+1) {
		t.Errorf("3000 keys of 200 KB: %d kept in %d bytes, want 3000 in at most %d", kept, bytes, 3000*(maxKeyBytes+1))
	}

	l = newLimiter(1)
	for i := range 600_000 {
		if ok, _ := l.allow(strconv.Itoa(i), time.Duration(i)); !ok {
			t.Fatalf("a new key %d was refused", i)
		}
	}
	kept = 0
	for i := range l.shards {
		kept += len(l.shards[i].tat)
	}
	if kept > limiterShards*maxShardKeys {
		t.Errorf("600,000 keys within one refill: %d kept, want at most %d", kept, limiterShards*maxShardKeys)
	}
}
