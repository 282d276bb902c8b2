package plan

import "fmt"

// MaxDepth is how deeply a plan (or any file read as one: a sweep file)
// may nest its collections: flow lists and mappings ([[…]], {a: {…}})
// and block sequences written on one line (- - - x). Plans nest a few
// levels; a JSON body, a dozen. The YAML parser's time and memory grow
// with the square of the depth of nested flow collections (10,000 levels
// in 20 KB took 245 MB, 40,000 ran out of memory), so a deeper file is
// refused before the parser sees it.
const MaxDepth = 100

// checkDepth scans data once, before it is parsed, and returns a problem
// at the first place where its collections nest deeper than MaxDepth.
func checkDepth(file string, data []byte) *Problem {
	s := newDepthScanner(file, data, MaxDepth)
	return s.scan()
}

// depthScanner finds the first place where a YAML file's collections nest
// deeper than a limit, in one pass over its bytes and without parsing it.
// It counts the open brackets of flow collections ([ and {, outside
// quotes, comments and block scalars) plus the sequence entries that
// begin a line ("- - -"). Indentation is not counted: nesting by
// indentation costs the file the square of its depth in bytes, which
// MaxPlanBytes bounds.
//
// It knows as much of YAML as it needs to tell brackets that open a
// collection from brackets in text: where a quoted scalar starts and
// ends, where a comment starts, and which lines belong to a block scalar
// (| or >). Every other byte is counted where it stands.
//
// It knows less of YAML than the parser, so it may take for text what the
// parser reads as collections: a quote inside a plain scalar (a: b "c)
// that it takes to open a quoted scalar, or a line it takes for a block
// scalar's that the parser does not. So the brackets in text count too,
// from where the text began (text): more than the limit left open in one
// quoted or block scalar is refused, whichever of the two is right. A real
// string holds its brackets balanced, or a few.
type depthScanner struct {
	file  string
	data  []byte
	limit int // the deepest nesting allowed
	i     int // the byte being read

	line, col int  // of the byte being read, from 1
	flow      int  // open [ and { on the stack
	text      int  // open [ and { in the quoted or block scalar being read
	quote     byte // ' or " while inside a quoted scalar
	comment   bool
	lineStart bool // only spaces and "- " so far on this line
	entries   int  // the "- " entries that began this line
	indent    int  // this line's indentation
	scalar    int  // the indentation a block scalar's lines must pass, or -1
	prev      byte // the byte before, 0 at a line's start

	// The end of the line's last word before any comment (its first
	// bytes, and its length): | or > starts a block scalar.
	token    [4]byte
	tokenLen int
}

// newDepthScanner returns a scanner of data, the file file, that refuses
// nesting deeper than limit.
func newDepthScanner(file string, data []byte, limit int) *depthScanner {
	return &depthScanner{file: file, data: data, limit: limit, line: 1, lineStart: true, scalar: -1}
}

// scan reads the whole file and returns a problem at the first byte where
// its collections nest deeper than the limit, or nil.
func (s *depthScanner) scan() *Problem {
	for ; s.i < len(s.data); s.i++ {
		if p := s.next(s.data[s.i]); p != nil {
			return p
		}
	}
	return nil
}

// next reads the byte c, at s.i, in whatever the scanner is inside: a
// line's indentation, a block scalar, a comment, a quoted scalar, or YAML.
func (s *depthScanner) next(c byte) *Problem {
	s.col++
	switch {
	case c == '\n':
		s.endLine()
	case s.lineStart && c == ' ':
		s.indent++
		s.prev = c
	case s.inBlockScalar(c):
		return s.inText(c)
	case s.comment:
	case s.quote != 0:
		s.inQuote(c)
		return s.inText(c)
	default:
		return s.syntax(c)
	}
	return nil
}

// endLine ends the line being read: a line whose last word is a block
// scalar's indicator (outside quotes and flow collections) starts one,
// whose lines are those indented deeper than this line.
func (s *depthScanner) endLine() {
	if s.scalar < 0 && s.quote == 0 && s.flow == 0 && blockIndicator(s.token[:min(s.tokenLen, len(s.token))], s.tokenLen) {
		s.scalar = s.indent
	}
	s.line, s.col, s.comment, s.lineStart, s.entries, s.indent, s.prev, s.tokenLen = s.line+1, 0, false, true, 0, 0, 0, 0
}

// inBlockScalar reports whether c, the first byte after a line's
// indentation or any later one, is text of a block scalar; the first byte
// of a line indented no deeper than the scalar's own line ends it.
func (s *depthScanner) inBlockScalar(c byte) bool {
	if s.scalar < 0 {
		return false
	}
	if !s.lineStart || s.indent > s.scalar || c == '\r' {
		s.lineStart = false
		return true // a line of the block scalar: text, not YAML
	}
	s.scalar, s.text = -1, 0 // the block scalar ended: this line is YAML again
	return false
}

// inText counts c, a byte of a quoted or block scalar, if it is a
// bracket, and returns a problem if the brackets open in that text, with
// the collections around it, nest deeper than the limit.
func (s *depthScanner) inText(c byte) *Problem {
	switch {
	case c == '[' || c == '{':
		s.text++
	case (c == ']' || c == '}') && s.text > 0:
		s.text--
	}
	return s.deeper()
}

// inQuote reads c inside a quoted scalar: a backslash in double quotes
// escapes the next byte, whatever it is; the quote that opened it closes it.
func (s *depthScanner) inQuote(c byte) {
	switch {
	case c == '\\' && s.quote == '"':
		s.i++
	case c == s.quote:
		s.quote, s.text = 0, 0
	}
	s.prev = c
}

// syntax reads c outside quotes, comments and block scalars: it may open
// a comment, a quoted scalar or a flow collection, close a flow
// collection, or be a sequence entry at the line's start. It returns a
// problem if the nesting is now deeper than the limit.
func (s *depthScanner) syntax(c byte) *Problem {
	switch {
	case c == '#' && s.afterSpace():
		s.comment = true
		return nil
	case s.opensQuote(c):
		s.quote = c
	case c == '[' || c == '{':
		s.flow++
	case (c == ']' || c == '}') && s.flow > 0:
		s.flow--
	case c == '-' && s.lineStart && s.entryIndicator():
		s.entries++
		s.prev = c
		return s.deeper() // still at the line's start: "- - -"
	}
	s.word(c)
	s.lineStart = false
	if p := s.deeper(); p != nil {
		return p
	}
	s.prev = c
	return nil
}

// opensQuote reports whether c opens a quoted scalar: a quote after a
// space, the line's start, or an indicator of a flow collection or a key.
func (s *depthScanner) opensQuote(c byte) bool {
	return (c == '"' || c == '\'') && (s.afterSpace() || s.afterIndicator())
}

// afterSpace reports whether the byte before is a space, a tab or none
// (the line's start).
func (s *depthScanner) afterSpace() bool {
	return s.prev == 0 || s.prev == ' ' || s.prev == '\t'
}

// afterIndicator reports whether the byte before opens a flow collection
// or separates its entries or a key from its value.
func (s *depthScanner) afterIndicator() bool {
	return s.prev == '[' || s.prev == '{' || s.prev == ',' || s.prev == ':'
}

// entryIndicator reports whether the - at s.i is a sequence entry: the
// file's last byte, or followed by a space or the line's end.
func (s *depthScanner) entryIndicator() bool {
	return s.i+1 == len(s.data) || s.data[s.i+1] == ' ' || s.data[s.i+1] == '\n'
}

// word adds c to the line's last word; a space or a tab ends the word.
func (s *depthScanner) word(c byte) {
	switch {
	case c == ' ' || c == '\t':
		s.tokenLen = 0
	case c != '\r':
		if s.tokenLen < len(s.token) {
			s.token[s.tokenLen] = c
		}
		s.tokenLen++
	}
}

// deeper returns a problem at the byte being read if the collections open
// there nest deeper than the limit.
func (s *depthScanner) deeper() *Problem {
	if s.flow+s.entries+s.text <= s.limit {
		return nil
	}
	return &Problem{File: s.file, Line: s.line, Col: s.col,
		Msg: fmt.Sprintf("collections nest deeper than %d levels here: no plan is that deep (a file this deep is refused before it is parsed)", s.limit)}
}

// blockIndicator reports whether a line's last word (its first bytes w,
// n bytes in all) starts a block scalar: | or >, with at most a chomping
// (+ -) and an indentation digit.
func blockIndicator(w []byte, n int) bool {
	if n == 0 || n > 3 || w[0] != '|' && w[0] != '>' {
		return false
	}
	for _, c := range w[1:] {
		if c != '+' && c != '-' && (c < '1' || c > '9') {
			return false
		}
	}
	return true
}
