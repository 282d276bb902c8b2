package demo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The store's bounds: what it keeps does not grow with the length of a run.
const (
	// keepPerSite is how many of a site's newest messages the store keeps
	// for listing. With maxSites: at most 200,000 messages, about 30 MB
	// with short texts (64 KiB each at worst).
	keepPerSite = 200
	// seenIDs is how many (site, clientId) pairs the duplicate index
	// remembers, over all sites: 10 s of history at 20,000 messages a
	// second, about 25 MB. An id older than that is saved again.
	seenIDs = 200_000
	// maxSites is how many sites keep messages; a new site past it evicts
	// the site created first.
	maxSites = 1000
)

// errClosed is a save after Close.
var errClosed = errors.New("store closed")

// message is one saved chat message.
type message struct {
	id   string // the client's id as JSON: a quoted string or a number
	text string
	at   time.Time
}

// siteLog is a site's newest messages: a ring of at most keepPerSite.
type siteLog struct {
	name string // the site, copied once
	msgs []message
	next int // once full, the index of the oldest message
}

// msgKey names a message in the duplicate index.
type msgKey struct{ site, id string }

// store keeps chat messages with one writer at a time, like SQLite: every
// save, and every listing, holds mu. A file store also appends each save as
// one JSON line to messages.jsonl before the save counts as committed; with
// sync "full" it waits for fsync while still holding mu, so commits queue
// behind the disk, and with "normal" a background loop calls fsync at most
// once a second.
type store struct {
	mu      sync.Mutex // the single writer
	keep    int        // keepPerSite, smaller in tests
	seenMax int        // seenIDs, smaller in tests
	siteMax int        // maxSites, smaller in tests
	sites   map[string]*siteLog
	created []string // site names in creation order, for eviction
	seen    map[msgKey]struct{}
	seenLog []msgKey // ring of the keys in seen
	seenAt  int      // once full, the index of the oldest key

	file      *os.File // nil: memory only; under mu
	full      bool     // fsync after every commit
	line      []byte   // the line being written, under mu
	dirty     atomic.Bool
	dir       string
	removeDir bool // dir was created by the store: Close removes it
	stop      chan struct{}
	stopped   chan struct{}
}

// openStore opens the store cfg asks for (defaults applied).
func openStore(cfg Config) (*store, error) {
	s := &store{keep: keepPerSite, seenMax: seenIDs, siteMax: maxSites, sites: map[string]*siteLog{}, seen: map[msgKey]struct{}{}}
	if cfg.Store != storeFile {
		return s, nil
	}
	s.dir, s.full = cfg.DataDir, cfg.Sync == syncFull
	if s.dir == "" {
		d, err := os.MkdirTemp("", "ceiling-demo-")
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		s.dir, s.removeDir = d, true
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "messages.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		if s.removeDir {
			os.RemoveAll(s.dir)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.file = f
	if !s.full {
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go s.syncLoop()
	}
	return s, nil
}

// syncLoop is sync "normal": once a second, fsync what was written since
// the last one. A write has reached the kernel before its save returns, so
// a crash of this process loses nothing; a power cut can lose the last
// second.
func (s *store) syncLoop() {
	defer close(s.stopped)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if s.dirty.Swap(false) {
				s.file.Sync() // os.File is safe for a Sync beside a Write
			}
		}
	}
}

// save commits one message for site unless (site, id) was saved before; a
// duplicate is not saved again (dup true, err nil). It copies what it
// keeps, so the arguments may point into a frame buffer, and returns the
// copies.
func (s *store) save(site, id, text string, at time.Time) (kept delivery, dup bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[msgKey{site, id}]; ok {
		return delivery{}, true, nil
	}
	if s.dir != "" {
		if err := s.append(site, id, text, at); err != nil {
			return delivery{}, false, err
		}
	}
	l := s.sites[site]
	if l == nil {
		l = s.newSite(site)
	}
	m := message{id: strings.Clone(id), text: strings.Clone(text), at: at}
	if len(l.msgs) < s.keep {
		l.msgs = append(l.msgs, m)
	} else {
		l.msgs[l.next] = m
		l.next = (l.next + 1) % s.keep
	}
	s.remember(msgKey{l.name, m.id})
	return delivery{site: l.name, id: m.id, text: m.text}, false, nil
}

// newSite starts the log of a site not seen before, evicting the oldest
// site's log past maxSites. Its ids stay in the duplicate index until they
// age out of it.
func (s *store) newSite(site string) *siteLog {
	if len(s.sites) >= s.siteMax {
		delete(s.sites, s.created[0])
		s.created = s.created[1:]
	}
	l := &siteLog{name: strings.Clone(site)}
	s.sites[l.name] = l
	s.created = append(s.created, l.name)
	return l
}

// remember adds k to the duplicate index, forgetting the oldest key once
// the index is full.
func (s *store) remember(k msgKey) {
	if len(s.seenLog) < s.seenMax {
		s.seenLog = append(s.seenLog, k)
	} else {
		delete(s.seen, s.seenLog[s.seenAt])
		s.seenLog[s.seenAt] = k
		s.seenAt = (s.seenAt + 1) % s.seenMax
	}
	s.seen[k] = struct{}{}
}

// append writes one line for the message to the file, and with sync
// "full" waits for fsync. Called with mu held.
func (s *store) append(site, id, text string, at time.Time) error {
	if s.file == nil {
		return errClosed
	}
	b := append(s.line[:0], `{"at":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","site":`...)
	b = appendString(b, site)
	b = append(b, `,"clientId":`...)
	b = append(b, id...)
	b = append(b, `,"text":`...)
	b = appendString(b, text)
	b = append(b, "}\n"...)
	s.line = b
	if _, err := s.file.Write(b); err != nil {
		return fmt.Errorf("save message: %w", err)
	}
	if s.full {
		if err := s.file.Sync(); err != nil {
			return fmt.Errorf("save message: sync: %w", err)
		}
		return nil
	}
	s.dirty.Store(true)
	return nil
}

// list returns up to limit of site's newest messages, newest last.
func (s *store) list(site string, limit int) []message {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.sites[site]
	if l == nil {
		return nil
	}
	n := min(limit, len(l.msgs))
	out := make([]message, 0, n)
	for i := len(l.msgs) - n; i < len(l.msgs); i++ {
		out = append(out, l.msgs[(l.next+i)%len(l.msgs)])
	}
	return out
}

// close stops the sync loop, syncs and closes the file, and removes the
// data folder if the store created it.
func (s *store) close() error {
	if s.dir == "" {
		return nil
	}
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
	}
	s.mu.Lock()
	f := s.file
	s.file = nil
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if s.removeDir {
		if rerr := os.RemoveAll(s.dir); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}
