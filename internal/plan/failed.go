package plan

import "strings"

// failedPaths is the set of field paths whose values could not be decoded,
// kept as a tree of path elements so that asking whether a path lies inside
// one of them costs time linear in the path's length, however many failed.
// (A plan with thousands of bad values and thousands of validation problems
// took minutes when each question scanned every failed path.)
//
// A path's elements start at each '.' or '[': "a.b[2]" is "a", ".b", "[2]".
// A failed path covers itself and every path that starts with it followed
// by '.' or '[', which is exactly a path whose elements begin with its own.
type failedPaths struct {
	end  bool // the path ending here failed
	next map[string]*failedPaths
}

// add records that path failed; "" covers every path.
func (f *failedPaths) add(path string) {
	n := f
	for elem := range pathElems(path) {
		c := n.next[elem]
		if c == nil {
			if n.next == nil {
				n.next = map[string]*failedPaths{}
			}
			c = &failedPaths{}
			n.next[elem] = c
		}
		n = c
	}
	n.end = true
}

// covers reports whether path is, or is inside, a path that failed.
func (f *failedPaths) covers(path string) bool {
	n := f
	if n.end {
		return true
	}
	for elem := range pathElems(path) {
		if n = n.next[elem]; n == nil {
			return false
		}
		if n.end {
			return true
		}
	}
	return false
}

// pathElems yields the elements of a field path, each from a '.' or '['
// to the next one; the first starts at the beginning.
func pathElems(path string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for path != "" {
			i := strings.IndexAny(path[1:], ".[") + 1
			if i == 0 {
				i = len(path)
			}
			if !yield(path[:i]) {
				return
			}
			path = path[i:]
		}
	}
}
