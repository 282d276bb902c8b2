package monitor

import (
	"context"
	"errors"
	"io"
	"slices"
)

// MaxScrapeBytes caps a scraped body: a longer one fails the scrape and is
// not parsed. An endpoint with 100,000 series of short labels is about 4 MB.
const MaxScrapeBytes = 10 << 20

// keepBuffer is the largest body buffer a Scraper keeps for its next
// scrape; a larger one is left to the garbage collector.
const keepBuffer = 1 << 20

// errTooLarge says that a body went over the size limit.
var errTooLarge = errors.New("body too large")

// readBody reads all of r into buf[:0], failing with errTooLarge past
// limit bytes. Reading the whole body before parsing any of it means that
// an endless or oversized answer costs a copy, never a parse.
func readBody(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(cap(buf), 4096)) // double: copies stay linear in the size
		}
		room := cap(buf) - len(buf)
		if over := int64(len(buf)) + int64(room) - (limit + 1); over > 0 {
			room -= int(over) // read at most one byte past the limit
		}
		n, err := r.Read(buf[len(buf) : len(buf)+room])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, errTooLarge
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// ctxReader fails a Read once ctx is done: a parse reading from it never
// outlives the scrape's deadline by more than one Read's worth of parsing.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
