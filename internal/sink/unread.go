package sink

import "time"

// MaxUnread is how many arrivals a Sink keeps for its reader (the delivery
// ledger) between two calls to Arrivals: about 50 bytes each with 36-byte
// ids, so about 200 MB, or seven minutes at 10,000 arrivals a second. Past
// it, arrivals are still counted but not kept for the reader; Stats counts
// them as Unlogged and warns, and the reader sees the gap in the indexes.
const MaxUnread = 1 << 22

// maxUnreadIdle is how many arrivals a Sink keeps until a reader first
// calls Arrivals: a sink nobody reads (ceiling mock) keeps no more, and
// arrivals past it are not counted as unlogged (there is no reader to
// miss them; one that comes later sees the gap in the indexes).
const maxUnreadIdle = 4096

// blockLen is how many arrivals one block of the unread log holds.
const blockLen = 4096

// block is a run of arrivals with consecutive indexes, stored by column so
// that it holds no pointer per arrival: ids are concatenated in ids and
// end[j] is where the j-th ends.
type block struct {
	first  int     // index of the block's first arrival
	at     []int64 // nanoseconds from the sink's start
	status []uint16
	end    []uint32
	ids    []byte
}

func (b *block) len() int { return len(b.at) }

// unread is the log of arrivals not yet handed to the reader. Reading
// hands over and forgets everything in it, so an arrival costs memory
// here only until the next read; what outlives it is in the idSet.
type unread struct {
	blocks  []*block
	kept    int   // arrivals in blocks
	next    int   // index of the next arrival: the number recorded so far
	max     int   // MaxUnread; tests lower it
	reading bool  // a reader has called since
	dropped int64 // arrivals not kept while a reader was reading
}

func newUnread() unread { return unread{max: MaxUnread} }

// add gives the next index to an arrival and keeps it if there is room.
func (u *unread) add(id string, at time.Duration, status int) {
	i := u.next
	u.next++
	switch {
	case u.reading && u.kept >= u.max:
		u.dropped++
		return
	case !u.reading && u.kept >= min(u.max, maxUnreadIdle):
		return
	}
	var b *block
	if n := len(u.blocks); n > 0 && u.blocks[n-1].len() < blockLen && u.blocks[n-1].first+u.blocks[n-1].len() == i {
		b = u.blocks[n-1]
	} else {
		b = &block{
			first:  i,
			at:     make([]int64, 0, blockLen),
			status: make([]uint16, 0, blockLen),
			end:    make([]uint32, 0, blockLen),
			ids:    make([]byte, 0, blockLen*len(id)), // ids often share a length
		}
		u.blocks = append(u.blocks, b)
	}
	b.at = append(b.at, int64(at))
	b.status = append(b.status, uint16(status))
	b.ids = append(b.ids, id...)
	b.end = append(b.end, uint32(len(b.ids)))
	u.kept++
}

// since returns the kept arrivals of index since and after, with At
// rebuilt from base (the sink's start), forgets every kept arrival, and
// returns the index to pass next time.
func (u *unread) since(since int, base time.Time) ([]Arrival, int) {
	u.reading = true
	var out []Arrival
	for _, b := range u.blocks {
		start := 0
		for j := range b.len() {
			if b.first+j >= since {
				if out == nil {
					out = make([]Arrival, 0, u.kept)
				}
				out = append(out, Arrival{
					ID:     string(b.ids[start:b.end[j]]),
					At:     base.Add(time.Duration(b.at[j])),
					Status: int(b.status[j]),
				})
			}
			start = int(b.end[j])
		}
	}
	clear(u.blocks)
	u.blocks = u.blocks[:0]
	u.kept = 0
	return out, u.next
}
