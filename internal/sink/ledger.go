package sink

import (
	"maps"
	"sync"
	"time"
)

// Arrival is one request that carried a message id.
type Arrival struct {
	// ID is the message id found in the body.
	ID string `json:"id"`
	// At is when the sink finished reading the request, before its
	// latency (it carries the monotonic clock reading within a process).
	At time.Time `json:"at"`
	// Status is what the sink answered: a 429 or 500 is recorded too, and
	// is not a delivery.
	Status int `json:"status"`
}

// Stats are the sink's counts since Start.
type Stats struct {
	// Received counts the requests answered, reserved paths excepted.
	Received int64 `json:"received"`
	// ByStatus counts the requests by the status they were answered with.
	ByStatus map[int]int64 `json:"by_status"`
	// IDs counts the distinct message ids seen, whatever their status.
	IDs int64 `json:"ids"`
	// Duplicates counts the arrivals of an id seen before.
	Duplicates int64 `json:"duplicates"`
	// NoID counts the bodies read in which no id was found (too large
	// bodies are not read and not counted here).
	NoID int64 `json:"no_id"`
}

// ledger records arrivals and counts. One mutex guards it: each request
// holds it for an append, a map lookup and a few increments, well under a
// microsecond, and never while waiting.
type ledger struct {
	mu       sync.Mutex
	arrivals []Arrival
	seen     map[string]struct{}
	stats    Stats
}

func newLedger() *ledger {
	return &ledger{seen: make(map[string]struct{}), stats: Stats{ByStatus: make(map[int]int64)}}
}

// record counts one answered request. An empty a.ID means the request
// carried no id: it is counted in NoID if its body was read, and not
// appended to the arrivals.
func (l *ledger) record(a Arrival, read bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Received++
	l.stats.ByStatus[a.Status]++
	switch {
	case a.ID == "" && read:
		l.stats.NoID++
		return
	case a.ID == "":
		return
	}
	l.arrivals = append(l.arrivals, a)
	if _, dup := l.seen[a.ID]; dup {
		l.stats.Duplicates++
		return
	}
	l.seen[a.ID] = struct{}{}
	l.stats.IDs++
}

// since copies the arrivals after index i and returns the index to pass
// next time.
func (l *ledger) since(i int) ([]Arrival, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.arrivals)
	if i < 0 {
		i = 0
	}
	if i >= n {
		return nil, n
	}
	return append([]Arrival(nil), l.arrivals[i:]...), n
}

func (l *ledger) snapshot() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.ByStatus = maps.Clone(l.stats.ByStatus)
	return s
}
