package sink

import (
	"fmt"
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
	// IDs counts the distinct message ids seen, whatever their status. It
	// stops at the sink's MaxIDs: later new ids are counted in Unchecked.
	IDs int64 `json:"ids"`
	// Duplicates counts the arrivals of an id seen before (among the
	// remembered ones).
	Duplicates int64 `json:"duplicates"`
	// NoID counts the bodies read in which no id was found (too large
	// bodies are not read and not counted here).
	NoID int64 `json:"no_id"`
	// Unchecked counts the arrivals, once MaxIDs ids are remembered, whose
	// id is not among them: each is a new id or a repeat of one the sink
	// did not remember, it cannot tell. Non-zero makes IDs and Duplicates
	// incomplete.
	Unchecked int64 `json:"unchecked"`
	// Unlogged counts the arrivals not kept for the reader (the delivery
	// ledger) because MaxUnread arrivals were already waiting to be read.
	// Non-zero makes the reader's figures incomplete.
	Unlogged int64 `json:"unlogged"`
	// Warnings say, in a sentence each, which counts are incomplete and
	// why. Empty: none is.
	Warnings []string `json:"warnings,omitempty"`
}

// ledger counts answered requests, remembers ids and keeps the arrivals
// the reader has not read yet. One mutex guards it: each request holds it
// for a map lookup, a few appends and increments, well under a
// microsecond, and never while waiting.
//
// Memory is bounded: what stays per id is its 12-byte fingerprint in ids
// (up to ids.max of them), and an arrival's id, time and status stay in
// log only until the reader's next call.
type ledger struct {
	start time.Time // base of the log's offsets
	mu    sync.Mutex
	ids   idSet
	log   unread
	stats Stats
}

func newLedger(start time.Time, maxIDs int) *ledger {
	return &ledger{
		start: start,
		ids:   newIDSet(maxIDs),
		log:   newUnread(),
		stats: Stats{ByStatus: make(map[int]int64)},
	}
}

// record counts one answered request. An empty a.ID means the request
// carried no id: it is counted in NoID if its body was read, and not
// logged.
func (l *ledger) record(a Arrival, read bool) {
	var fp fingerprint
	if a.ID != "" {
		fp = l.ids.hash(a.ID) // outside the lock: the seeds never change
	}
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
	l.log.add(a.ID, a.At.Sub(l.start), a.Status)
	switch l.ids.add(fp) {
	case fresh:
		l.stats.IDs++
	case repeat:
		l.stats.Duplicates++
	case unchecked:
		l.stats.Unchecked++
	}
}

// since hands the reader the arrivals of index i and after that it has
// not read yet, and returns the index to pass next time.
func (l *ledger) since(i int) ([]Arrival, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.since(i, l.start)
}

func (l *ledger) snapshot() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.ByStatus = maps.Clone(l.stats.ByStatus)
	s.Unlogged = l.log.dropped
	if s.Unchecked > 0 {
		s.Warnings = append(s.Warnings, fullWarning(l.ids.max, s.Unchecked))
	}
	if s.Unlogged > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("unread log full: %d arrivals were not kept for the delivery ledger "+
			"(it read too seldom to keep up with %d waiting), so its figures are incomplete", s.Unlogged, l.log.max))
	}
	return s
}
