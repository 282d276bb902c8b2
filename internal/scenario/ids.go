package scenario

import (
	"hash/maphash"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ceiling-dev/ceiling/internal/secret"
)

// The duplicate-id detector. Values that templates make with uuid or seq
// are unique by construction. Ids that come from a data file or a literal in
// the plan may repeat, and a target that drops or merges repeats (a generator
// that reuses client ids) makes the run's own numbers wrong. So ceiling
// watches the values that look like ids, vars named ...id or ...key and
// Idempotency-Key / X-Request-Id headers, unless uuid or seq makes them,
// and counts the ones it has seen before in the run.

// maxIDs bounds the memory of the detector: past it, new values are not
// remembered (and the report says the detector stopped looking).
const maxIDs = 4 << 20

var idName = regexp.MustCompile(`(?i)(id|key)$`)

var idHeaders = []string{"idempotency-key", "x-request-id"}

// uniqueByConstruction reports whether a template's output is made unique by
// uuid or seq, itself or through one of the unique vars it reads.
func uniqueByConstruction(text string, uniqueVars []string) bool {
	if strings.Contains(text, "uuid") || strings.Contains(text, "seq") {
		return true
	}
	for _, v := range uniqueVars {
		if strings.Contains(text, "."+v) {
			return true
		}
	}
	return false
}

// ids remembers the id values seen in a run, in shards so that virtual users
// rarely wait on one another.
type ids struct {
	seed   maphash.Seed
	shards [64]idShard
	total  atomic.Int64

	mu      sync.Mutex
	dups    map[string]int64  // by source
	example map[string]string // a repeated value, by source
	full    bool
	hidden  map[string]bool // sources whose values come from a data file; written while compiling
}

// hideIfData keeps the values of source, made by template text, out of the
// examples when they come from the data file (a column such as a password
// could be one): the example then says only that it was redacted.
func (d *ids) hideIfData(source, text string) {
	if strings.Contains(text, ".user") {
		d.hidden[source] = true
	}
}

type idShard struct {
	mu   sync.Mutex
	seen map[uint64]struct{}
}

func newIDs() *ids {
	d := &ids{seed: maphash.MakeSeed(), dups: map[string]int64{}, example: map[string]string{}, hidden: map[string]bool{}}
	for i := range d.shards {
		d.shards[i].seen = map[uint64]struct{}{}
	}
	return d
}

// see notes value from source and counts it if it was seen before.
func (d *ids) see(source, value string) {
	if value == "" {
		return
	}
	h := maphash.String(d.seed, source+"\x00"+value)
	sh := &d.shards[h%uint64(len(d.shards))]
	sh.mu.Lock()
	_, dup := sh.seen[h]
	if !dup && d.total.Load() < maxIDs {
		sh.seen[h] = struct{}{}
		d.total.Add(1)
	}
	sh.mu.Unlock()
	if !dup {
		return
	}
	d.mu.Lock()
	d.dups[source]++
	if _, ok := d.example[source]; !ok {
		if d.hidden[source] {
			value = secret.Redacted
		}
		d.example[source] = value
	}
	d.full = d.total.Load() >= maxIDs
	d.mu.Unlock()
}

// Duplicate is how often the values of one source repeated.
type Duplicate struct {
	// Source names where the values come from: "vars.msgid" or
	// "header Idempotency-Key".
	Source string
	// Count is the number of values seen before in the run.
	Count int64
	// Example is one repeated value.
	Example string
}

// Duplicates returns the repeated ids so far, by source, and whether the
// detector stopped remembering new values (its memory bound).
func (s *Set) Duplicates() ([]Duplicate, bool) {
	d := s.ids
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Duplicate, 0, len(d.dups))
	for src, n := range d.dups {
		out = append(out, Duplicate{Source: src, Count: n, Example: d.example[src]})
	}
	slices.SortFunc(out, func(a, b Duplicate) int { return strings.Compare(a.Source, b.Source) })
	return out, d.full
}
