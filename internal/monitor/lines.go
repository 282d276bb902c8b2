package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/prometheus/common/expfmt"
)

// maxLineBytes caps one line of a text body: a longer one fails the scrape.
// The OpenMetrics parser's time grows faster than a line's length (a 16 KB
// line takes half a second), and no real exposition line comes near this.
const maxLineBytes = 8 << 10

// linesPerRead bounds the lines handed to the parser in one Read, so that
// the scrape's deadline is checked every few lines even with the slow
// OpenMetrics parser (about 2 ms a line).
const linesPerRead = 16

// segmentLines is how many sample lines of the classic text format are
// parsed at a time. The text parser holds everything it parsed until the
// end of its input, several hundred bytes a series: parsing a body in
// segments bounds that to about a megabyte, whatever the body's size
// (400,000 series held 170 MB at once).
const segmentLines = 2000

// lineKind is what a line of a text body is.
type lineKind int

const (
	lineBlank   lineKind = iota // empty or only spaces
	lineComment                 // a comment other than the ones below
	lineHelp                    // # HELP name ...
	lineType                    // # TYPE name type
	lineUnit                    // # UNIT name unit (OpenMetrics)
	lineEOF                     // # EOF (OpenMetrics)
	lineSample                  // name{labels} value
	lineOther                   // a quoted UTF-8 name, or garbage
)

// classify returns a line's kind, the metric name it is about (for help,
// type, unit and sample lines) and, for a type line, the type.
func classify(line []byte) (kind lineKind, name, typ []byte) {
	rest := bytes.TrimLeft(line, " \t")
	if len(bytes.TrimSpace(rest)) == 0 {
		return lineBlank, nil, nil
	}
	if rest[0] == '#' {
		keyword, after := token(rest[1:])
		switch string(keyword) {
		case "HELP":
			kind = lineHelp
		case "TYPE":
			kind = lineType
		case "UNIT":
			kind = lineUnit
		case "EOF":
			return lineEOF, nil, nil
		default:
			return lineComment, nil, nil
		}
		name, after = token(after)
		if kind == lineType {
			typ, _ = token(after)
		}
	} else {
		kind = lineSample
		end := bytes.IndexAny(rest, "{ \t")
		if end < 0 {
			end = len(rest)
		}
		name = rest[:end]
	}
	if !plainName(name) {
		return lineOther, nil, nil
	}
	return kind, name, typ
}

// lineFilter hands a text body to the parser a few lines at a time. It
// leaves out the metric families no selector can want (they cost parsing
// time and memory for nothing), fails a line longer than maxLineBytes,
// and, with segment set, ends its input (io.EOF) every segment sample
// lines: next starts the following segment, repeating the family's TYPE
// line when the segment continues a family. With wanted nil it passes
// every line.
type lineFilter struct {
	body    []byte
	wanted  map[string]bool // family names and the names of their series
	pending []byte          // the part of a line not handed over yet
	err     error           // the first failure, which ends the reading
	line    int             // the body's lines read so far
	// blank replaces a line left out with an empty one, which the classic
	// text format ignores, so that a parse error's line number is the
	// segment's. OpenMetrics forbids empty lines: there they are left out.
	blank bool

	// segment is the sample lines per segment; 0 means one segment.
	segment int
	samples int  // sample lines handed over in this segment
	ended   bool // this segment has ended
	// first is the body's line where this segment starts, and prefixed
	// says whether it started with a repeated TYPE line.
	first    int
	prefixed bool
	// family is the current family: the name of its last HELP or TYPE
	// line, or of a sample of no declared family; typeLine is its TYPE
	// line, and splittable says whether a segment may end inside it (one
	// line per series: gauges, counters, untyped).
	family     []byte
	typeLine   []byte
	splittable bool
}

var newline = []byte("\n")

// Read implements io.Reader.
func (f *lineFilter) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, lines := 0, 0
	for n < len(p) {
		if len(f.pending) == 0 {
			if len(f.body) == 0 || lines == linesPerRead || f.ended {
				break
			}
			took, wanted := f.advance()
			if !took {
				break
			}
			if wanted {
				lines++
			}
		}
		c := copy(p[n:], f.pending)
		n, f.pending = n+c, f.pending[c:]
	}
	if n == 0 {
		if f.err != nil {
			return 0, f.err
		}
		return 0, io.EOF
	}
	return n, nil
}

// advance takes the next line of the body into pending (an empty line in
// its place when it is left out) and says whether it took it and whether
// it was wanted. It takes nothing when the segment ends before that line,
// or on a line too long.
func (f *lineFilter) advance() (took, wanted bool) {
	line := f.body
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i+1]
	}
	kind, name, typ := classify(line)
	if !f.wants(kind, name) {
		f.body, f.line = f.body[len(line):], f.line+1
		if f.blank {
			f.pending = newline
		}
		return true, false
	}
	if f.segment > 0 && f.samples >= f.segment && f.cuts(kind, name) {
		f.ended = true
		return false, false
	}
	if len(line) > maxLineBytes {
		f.err = fmt.Errorf("line %d is longer than %d KB", f.line+1, maxLineBytes>>10)
		return false, false
	}
	f.body, f.line = f.body[len(line):], f.line+1
	f.pending = line
	switch {
	case (kind == lineHelp || kind == lineType) && !bytes.Equal(name, f.family):
		f.family, f.typeLine, f.splittable = name, nil, true // untyped until its TYPE line
	case kind == lineSample && !f.inFamily(name):
		f.family, f.typeLine, f.splittable = name, nil, true // a sample of no declared family: untyped
	}
	switch kind {
	case lineType:
		f.typeLine = line
		t := string(typ)
		f.splittable = t == "gauge" || t == "counter" || t == "untyped"
	case lineSample:
		f.samples++
	}
	return true, true
}

// inFamily reports whether a sample named name belongs to the current
// family (or may: the parser decides).
func (f *lineFilter) inFamily(name []byte) bool {
	return f.family != nil && (bytes.Equal(name, f.family) || bytes.Equal(familyOf(name), f.family))
}

// cuts reports whether the segment may end before a line: one that starts
// another family, or another series of a family of one line per series.
func (f *lineFilter) cuts(kind lineKind, name []byte) bool {
	switch kind {
	case lineHelp, lineType:
		return !bytes.Equal(name, f.family)
	case lineSample:
		return !f.inFamily(name) || f.splittable
	}
	return false
}

// next starts the following segment, and reports whether there is one.
func (f *lineFilter) next() bool {
	if !f.ended || f.err != nil {
		return false
	}
	f.ended, f.samples, f.first, f.prefixed = false, 0, f.line+1, false
	line := f.body
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i+1]
	}
	if kind, name, _ := classify(line); kind == lineSample && f.inFamily(name) && f.typeLine != nil {
		f.pending, f.prefixed = f.typeLine, true // the segment continues the family: say its type again
	}
	return true
}

// bodyLine turns a parse error's line number in the current segment into
// the body's, when err is a text format parse error.
func (f *lineFilter) bodyLine(err error) error {
	var pe expfmt.ParseError
	if !errors.As(err, &pe) || f.first == 0 {
		return err
	}
	if f.prefixed {
		pe.Line--
	}
	pe.Line += f.first - 1
	return pe
}

// wants reports whether a line may belong to a wanted family. In doubt (a
// quoted UTF-8 name, a line it cannot read) it says yes: the parser and
// the selectors decide, and garbage fails the parse rather than passing
// for an answer without the metrics.
func (f *lineFilter) wants(kind lineKind, name []byte) bool {
	switch {
	case f.wanted == nil:
		return true
	case kind == lineComment:
		return false
	case name == nil:
		return true // blank, # EOF, or other
	}
	return f.wanted[string(name)] || f.wanted[string(familyOf(name))]
}

// plainName reports whether b is a metric name written without quotes:
// [a-zA-Z_:][a-zA-Z0-9_:]*.
func plainName(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return len(b) > 0
}

// token returns the first word of b, after spaces and tabs, and what
// follows it.
func token(b []byte) (word, rest []byte) {
	b = bytes.TrimLeft(b, " \t")
	end := bytes.IndexAny(b, " \t\r\n")
	if end < 0 {
		end = len(b)
	}
	return b[:end], b[end:]
}

// familySuffixes end the names of a family's series: a summary's or a
// histogram's _sum, _count and _bucket, an OpenMetrics counter's _total
// and _created, an info's _info, a gauge histogram's _gsum and _gcount.
var familySuffixes = [][]byte{[]byte("_sum"), []byte("_count"), []byte("_bucket"), []byte("_total"),
	[]byte("_created"), []byte("_info"), []byte("_gsum"), []byte("_gcount")}

// familyOf returns name without a series suffix, or name.
func familyOf(name []byte) []byte {
	for _, s := range familySuffixes {
		if bytes.HasSuffix(name, s) && len(name) > len(s) {
			return name[:len(name)-len(s)]
		}
	}
	return name
}

// wantedNames returns the names whose lines the selectors may need: each
// selector's name and its family's name. A line is wanted when its name,
// or its name without a series suffix, is one of them.
func wantedNames(sels []selector) map[string]bool {
	out := make(map[string]bool, 2*len(sels))
	for _, s := range sels {
		out[s.name] = true
		out[string(familyOf([]byte(s.name)))] = true
	}
	return out
}
