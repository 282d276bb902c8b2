package httpx

import (
	"bytes"
	"io"
	"strconv"
)

// parser reads one HTTP/1.1 response at a time from bytes as they arrive,
// for the event loop (loop_linux.go), which cannot block in a read. It
// accepts exactly what readResponse accepts, with the same limits and
// errors (FuzzParserMatchesReadResponse holds the two together). Bodies
// are counted, and kept in body when the request Captures them (keep),
// discarded otherwise; the header lines are kept for Retry-After and the
// scenario's checks.
type parser struct {
	isHead  bool
	keep    bool // keep the body in body
	maxBody int64

	state  pstate
	resp   response
	h      head
	http10 bool
	total  int   // bytes of the head so far, for maxHeaderBytes
	remain int64 // bytes left of a length body or of a chunk
	carry  []byte
	header []byte
	body   []byte // the body so far, when keep is set; reused, as header is
	// reserved is what body holds of the process's kept-body budget
	// (kept.go), given back by done.
	reserved int64
}

type pstate uint8

const (
	pStatus     pstate = iota // the status line is next
	pFields                   // header fields, up to the empty line
	pLength                   // a body of known length
	pUntilClose               // a body that ends with the connection
	pChunkSize                // a chunk-size line
	pChunkData                // a chunk's data
	pChunkEnd                 // the CRLF after a chunk's data
	pTrailers                 // trailer fields, up to the empty line
	pDone                     // a whole response was read
)

// reset readies the parser for the response to the next request: to a
// HEAD when isHead is set, whose body is kept when keep is set, and whose
// body may not pass maxBody bytes.
func (p *parser) reset(isHead, keep bool, maxBody int64) {
	p.done()
	*p = parser{isHead: isHead, keep: keep, maxBody: maxBody, carry: p.carry[:0], header: p.header[:0], body: p.body[:0]}
}

// done gives back what the response kept of the budget, once the caller
// has what it needs of the body.
func (p *parser) done() {
	p.body = release(p.body, &p.reserved)
}

// feed consumes bytes of the response from b. It returns how many it used
// and whether the response is complete; bytes past a complete response are
// not used. An error ends the exchange (the connection cannot be reused).
func (p *parser) feed(b []byte) (used int, done bool, err error) {
	for used < len(b) && p.state != pDone {
		n, err := p.step(b[used:])
		used += n
		if err != nil {
			return used, false, err
		}
	}
	return used, p.state == pDone, nil
}

// step consumes what one state can from b.
func (p *parser) step(b []byte) (int, error) {
	p.resp.started = true
	switch p.state {
	case pLength, pChunkData:
		n := int(min(int64(len(b)), p.remain))
		p.remain -= int64(n)
		p.resp.body += int64(n)
		if p.keep {
			var err error
			if p.body, err = keep(p.body, b[:n], &p.reserved); err != nil {
				return n, err
			}
		}
		if p.remain == 0 {
			if p.state == pLength {
				p.state = pDone
			} else {
				p.state = pChunkEnd
			}
		}
		return n, nil
	case pUntilClose:
		n := int(min(int64(len(b)), p.maxBody+1-p.resp.body))
		p.resp.body += int64(n)
		if p.keep { // a byte past maxBody at most, as take keeps
			var err error
			if p.body, err = keep(p.body, b[:n], &p.reserved); err != nil {
				return n, err
			}
		}
		if p.resp.body > p.maxBody {
			return n, errBodyTooLarge
		}
		return n, nil
	}
	line, n, ok, err := p.line(b)
	if err != nil || !ok {
		return n, err
	}
	err = p.onLine(line)
	p.carry = p.carry[:0]
	return n, err
}

// line returns the next whole line, joined with what an earlier read left
// of it. A line longer than maxLineBytes is malformed, as it is for the
// blocking reader (readLine).
func (p *parser) line(b []byte) (line []byte, used int, ok bool, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(p.carry)+len(b) >= maxLineBytes {
			return nil, len(b), false, errMalformed
		}
		p.carry = append(p.carry, b...)
		return nil, len(b), false, nil
	}
	if len(p.carry)+i+1 > maxLineBytes {
		return nil, i + 1, false, errMalformed
	}
	if len(p.carry) == 0 {
		return b[:i+1], i + 1, true, nil
	}
	p.carry = append(p.carry, b[:i+1]...)
	return p.carry, i + 1, true, nil
}

// onLine handles one whole line in a line state.
func (p *parser) onLine(line []byte) error {
	switch p.state {
	case pStatus:
		p.total = len(line)
		http10, err := p.resp.statusLine(line)
		if err != nil {
			return err
		}
		p.http10, p.h, p.state = http10, head{length: -1}, pFields
		p.header, p.body = p.header[:0], p.body[:0]
		return nil
	case pFields:
		if p.total += len(line); p.total > maxHeaderBytes {
			return errMalformed
		}
		line = trimEOL(line)
		if len(line) > 0 {
			if err := p.h.field(line, &p.resp, p.http10); err != nil {
				return err
			}
			p.header = append(append(p.header, line...), "\r\n"...)
			return nil
		}
		return p.bodyStart()
	case pChunkSize:
		line = trimEOL(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		switch {
		case err != nil || size < 0:
			return errMalformed
		case size == 0:
			p.state, p.total = pTrailers, 0
		case size > p.maxBody-p.resp.body:
			p.resp.close = true
			return errBodyTooLarge
		default:
			p.state, p.remain = pChunkData, size
		}
		return nil
	case pChunkEnd:
		if len(trimEOL(line)) != 0 {
			return errMalformed
		}
		p.state = pChunkSize
		return nil
	case pTrailers:
		if p.total += len(line); p.total > maxHeaderBytes {
			return errMalformed
		}
		if len(trimEOL(line)) == 0 {
			p.state = pDone
		}
		return nil
	}
	return errMalformed
}

// bodyStart moves on from the end of a head: an interim response starts
// over, a final one to its body.
func (p *parser) bodyStart() error {
	switch {
	case p.resp.status == 101:
		return errMalformed // we never ask to switch protocols
	case p.resp.status < 200:
		p.state = pStatus
		p.resp = response{started: true}
		return nil
	case noBody(p.isHead, p.resp.status):
		p.state = pDone
		return nil
	}
	switch f := p.h.framing(); {
	case f == chunked:
		p.state = pChunkSize
	case f == untilClose:
		p.state, p.resp.close = pUntilClose, true
	case f > p.maxBody:
		p.resp.close = true
		return errBodyTooLarge
	case f == 0:
		p.state = pDone
	default:
		p.state, p.remain = pLength, f
	}
	return nil
}

// eof is the end of the connection: it completes a body that runs to it,
// and cuts anything else short, with the errors readResponse returns.
func (p *parser) eof() (done bool, err error) {
	switch p.state {
	case pDone, pUntilClose:
		return true, nil
	case pStatus, pFields:
		return false, io.EOF
	}
	return false, io.ErrUnexpectedEOF
}
