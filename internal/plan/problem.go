package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a plan: where it is and what is wrong.
type Problem struct {
	// File is the plan file's path, empty for a plan built from flags.
	File string
	// Line is the 1-based line of the offending value or key, 0 when unknown.
	Line int
	// Col is the 1-based column on Line, 0 when unknown.
	Col int
	// Path names the field, e.g. "load.rates[2]" or "http.headers.User-Agent".
	Path string
	// Msg says what is wrong, e.g. "want a positive number".
	Msg string
}

// Error formats the problem as "file:line:col: path: msg", leaving out the
// parts that are unknown (a plan built from flags gives "path: msg").
func (p Problem) Error() string {
	var b strings.Builder
	if loc := location(p.File, p.Line, p.Col); loc != "" {
		b.WriteString(loc)
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in a plan, in file order. Parse and
// Validate return it as their error; find it with errors.As.
type Problems []Problem

// Error lists the problems, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// sortProblems orders problems by position; those without a line go last,
// and problems at the same place keep the order they were found in.
func sortProblems(ps Problems) {
	key := func(p Problem) int {
		if p.Line == 0 {
			return int(^uint(0) >> 1)
		}
		return p.Line
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if c := cmp.Compare(key(a), key(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.Col, b.Col)
	})
}

// position is a 1-based line and column in the plan file.
type position struct {
	line, col int
}

// location formats "file:line:col", "line:col", "file" or "".
func location(file string, line, col int) string {
	if line <= 0 {
		return file
	}
	lc := strconv.Itoa(line) + ":" + strconv.Itoa(col)
	if file == "" {
		return lc
	}
	return file + ":" + lc
}

// Where returns "file:line:col" for a field path such as "slo" or
// "load.rates[2]", so that other packages can place their own errors about a
// plan's values. A path that was not written in the file takes the position
// of its nearest written ancestor ("load.step" falls back to "load"). It
// returns the file name alone when no position is known, and "" for a plan
// built from flags.
func (p *Plan) Where(path string) string {
	pos, _ := p.lookup(path)
	return location(p.File, pos.line, pos.col)
}

// lookup finds the position of path or of its nearest ancestor.
func (p *Plan) lookup(path string) (position, bool) {
	for path != "" {
		if pos, ok := p.pos[path]; ok {
			return pos, true
		}
		path = parent(path)
	}
	return position{}, false
}

// parent strips the last element of a field path: "a.b[2]" -> "a.b" -> "a" -> "".
// Map keys may contain brackets or dots; a wrong cut only costs precision.
func parent(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i > 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// problem builds a Problem placed at path's position in p.
func (p *Plan) problem(path, format string, args ...any) Problem {
	pos, _ := p.lookup(path)
	return Problem{File: p.File, Line: pos.line, Col: pos.col, Path: path, Msg: fmt.Sprintf(format, args...)}
}
