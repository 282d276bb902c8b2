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
// It counts the open brackets of flow collections ([ and {, outside
// quotes, comments and block scalars) plus the sequence entries that
// begin a line ("- - -"). Indentation is not counted: nesting by
// indentation costs the file the square of its depth in bytes, which
// MaxPlanBytes bounds.
func checkDepth(file string, data []byte) *Problem {
	var (
		line, col = 1, 0
		flow      int  // open [ and { on the stack
		quote     byte // ' or " while inside a quoted scalar
		comment   bool
		lineStart = true // only spaces and "- " so far on this line
		entries   int    // the "- " entries that began this line
		indent    int    // this line's indentation
		scalar    = -1   // the indentation a block scalar's lines must pass, or -1
		prev      byte
		token     [4]byte // the end of the line's last word before any comment: | or > starts a block scalar
		tokenLen  int
	)
	deeper := func() *Problem {
		if flow+entries <= MaxDepth {
			return nil
		}
		return &Problem{File: file, Line: line, Col: col,
			Msg: fmt.Sprintf("collections nest deeper than %d levels here: no plan is that deep (a file this deep is refused before it is parsed)", MaxDepth)}
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		col++
		if c == '\n' {
			if scalar < 0 && quote == 0 && flow == 0 && blockIndicator(token[:min(tokenLen, len(token))], tokenLen) {
				scalar = indent
			}
			line, col, comment, lineStart, entries, indent, prev, tokenLen = line+1, 0, false, true, 0, 0, 0, 0
			continue
		}
		if lineStart && c == ' ' {
			indent++
			prev = c
			continue
		}
		if scalar >= 0 {
			if !lineStart || indent > scalar || c == '\r' {
				lineStart = false
				continue // a line of the block scalar: text, not YAML
			}
			scalar = -1 // the block scalar ended: this line is YAML again
		}
		if comment {
			continue
		}
		if quote != 0 {
			switch {
			case c == '\\' && quote == '"':
				i++ // an escaped character, whatever it is
			case c == quote:
				quote = 0
			}
			prev = c
			continue
		}
		switch {
		case c == '#' && (prev == 0 || prev == ' ' || prev == '\t'):
			comment = true
			continue
		case (c == '"' || c == '\'') && (prev == 0 || prev == ' ' || prev == '\t' || prev == '[' || prev == '{' || prev == ',' || prev == ':'):
			quote = c
		case c == '[' || c == '{':
			flow++
		case (c == ']' || c == '}') && flow > 0:
			flow--
		case c == '-' && lineStart && (i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n'):
			entries++
			prev = c
			if p := deeper(); p != nil {
				return p
			}
			continue // still at the line's start: "- - -"
		}
		if c == ' ' || c == '\t' {
			tokenLen = 0
		} else if c != '\r' {
			if tokenLen < len(token) {
				token[tokenLen] = c
			}
			tokenLen++
		}
		lineStart = false
		if p := deeper(); p != nil {
			return p
		}
		prev = c
	}
	return nil
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
