package metrics

import (
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Login attempts are tallied apart from the exchanges: their own counts,
// retries and histogram, merged by Collect and emptied after it; the
// step's totals stay empty.
func TestLoginsApart(t *testing.T) {
	r := NewRecorderFor(2, Layout{Login: true})
	r.Shard(0).RecordLogin(&Login{Intended: 0, End: time.Second, Kind: transport.Timeout})
	r.Shard(1).RecordLogin(&Login{Intended: time.Second, End: time.Second + 20*time.Millisecond, Kind: transport.HTTP5xx, Retry: true})
	r.Shard(0).RecordLogin(&Login{Intended: 0, End: 5 * time.Millisecond, Kind: transport.OK, Retry: true})
	r.Shard(1).SkipForLogin(true)
	r.Shard(1).SkipForLogin(false) // a warm-up arrival
	total := NewTallyFor(Layout{Login: true})
	r.Collect(total)
	l := &total.Logins
	if l.Attempts() != 3 || l.OK() != 1 || l.Failed() != 2 || l.Retries != 2 || l.Skipped != 1 {
		t.Errorf("attempts/ok/failed/retries/skipped = %d/%d/%d/%d/%d, want 3/1/2/2/1", l.Attempts(), l.OK(), l.Failed(), l.Retries, l.Skipped)
	}
	if got := Quantile(l.Latency, 1); got < 999 || got > 1001 {
		t.Errorf("login max = %v ms, want 1000", got)
	}
	if total.Completed() != 0 || total.Latency.TotalCount() != 0 {
		t.Errorf("step totals: %d completed, %d latencies; want none from logins", total.Completed(), total.Latency.TotalCount())
	}
	again := NewTallyFor(Layout{Login: true})
	r.Collect(again)
	if again.Logins.Attempts() != 0 || again.Logins.Latency.TotalCount() != 0 {
		t.Errorf("a second Collect found %d attempts: the shards were not emptied", again.Logins.Attempts())
	}
	if n := testing.AllocsPerRun(100, func() { r.Shard(0).RecordLogin(&Login{End: time.Millisecond}) }); n != 0 {
		t.Errorf("RecordLogin allocates %v times", n)
	}
	plain := NewTally() // a plan without a login keeps no histogram, and merging one is safe
	plain.Merge(total)
	if plain.Logins.Latency != nil || plain.Logins.Attempts() != 3 {
		t.Errorf("merge into a tally without login layout: %+v", plain.Logins)
	}
}
