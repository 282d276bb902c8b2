package sink

import (
	"fmt"
	"hash/maphash"
)

// DefaultMaxIDs is how many distinct message ids a Sink remembers when
// Options.MaxIDs is zero: at the 25 to 40 bytes of live heap an id
// measured by TestBytesPerID, about 300 MB (and up to twice that resident,
// with the garbage collector's headroom), reached after 17 minutes at
// 10,000 new ids a second.
const DefaultMaxIDs = 10_000_000

// fingerprint is all the sink keeps of an id it has seen: 96 bits of two
// independently seeded 64-bit hashes, 12 bytes whatever the id's length,
// with no pointer for the garbage collector to follow.
//
// Two distinct ids share a fingerprint, and the second would be counted as
// a duplicate, with probability at most n(n−1)/2 ÷ 2^96 ≈ n²/2^97 over n
// ids: about 6×10⁻¹⁶ at DefaultMaxIDs, 10⁻¹¹ at a billion.
type fingerprint [3]uint32

// verdict is what the id set says of an arrival's id.
type verdict int

const (
	// fresh: the id was not seen before and is now remembered.
	fresh verdict = iota
	// repeat: the id was seen (and remembered) before.
	repeat
	// unchecked: the id is not among the remembered ones and the set is
	// full, so the sink cannot tell whether it is new.
	unchecked
)

// idSet remembers up to max ids by fingerprint. It is not safe for
// concurrent use: the ledger's mutex guards add; fingerprint is pure.
type idSet struct {
	seeds [2]maphash.Seed
	max   int
	seen  map[fingerprint]struct{}
}

func newIDSet(max int) idSet {
	return idSet{
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		max:   max,
		seen:  make(map[fingerprint]struct{}),
	}
}

// hash returns the fingerprint of id; it reads only the seeds, so it runs outside the
// ledger's lock.
func (s *idSet) hash(id string) fingerprint {
	a := maphash.String(s.seeds[0], id)
	b := maphash.String(s.seeds[1], id)
	return fingerprint{uint32(a), uint32(a >> 32), uint32(b)}
}

// add checks fp against the remembered ids and remembers it if it is new
// and there is room.
func (s *idSet) add(fp fingerprint) verdict {
	if _, ok := s.seen[fp]; ok {
		return repeat
	}
	if len(s.seen) >= s.max {
		return unchecked
	}
	s.seen[fp] = struct{}{}
	return fresh
}

// fullWarning says what a full id set means for the counts.
func fullWarning(max int, unchecked int64) string {
	return fmt.Sprintf("id set full: the sink remembers %d ids and could not check %d later arrivals "+
		"(new ids or repeats of ids it does not remember), so ids and duplicates are incomplete", max, unchecked)
}
