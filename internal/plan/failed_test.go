package plan

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestFailedPathsCovers(t *testing.T) {
	failed := []string{"load.rates[1]", "http.headers", "scenarios[2].request", "vars.a.b"}
	tests := []struct {
		path string
		want bool
	}{
		{"load.rates[1]", true},
		{"load.rates[10]", false},
		{"load.rates", false},
		{"load", false},
		{"http.headers.X-A", true},
		{"http.headers[0]", true},
		{"http.headersX", false},
		{"http", false},
		{"scenarios[2].request.url", true},
		{"scenarios[2]", false},
		{"scenarios[20].request", false},
		{"vars.a.b.c", true},
		{"vars.a", false},
		{"vars.a.bc", false},
		{"", false},
	}
	f := &failedPaths{}
	for _, p := range failed {
		f.add(p)
	}
	for _, tt := range tests {
		if got := f.covers(tt.path); got != tt.want {
			t.Errorf("covers(%q) after %q = %v, want %v", tt.path, failed, got, tt.want)
		}
	}
	f.add("")
	if !f.covers("anything.at[all]") || !f.covers("") {
		t.Errorf("covers() after add(\"\") = false, want true for every path")
	}
}

// coversByScan is the definition failedPaths implements: path is a failed
// path, or starts with one followed by '.' or '['; "" covers all.
func coversByScan(failed []string, path string) bool {
	return slices.ContainsFunc(failed, func(f string) bool {
		return f == "" || path == f || strings.HasPrefix(path, f+".") || strings.HasPrefix(path, f+"[")
	})
}

func TestFailedPathsMatchesScan(t *testing.T) {
	// Paths from a small alphabet, so that prefixes and separators collide.
	path := rapid.StringMatching(`[ab.\[\]0]{0,8}`)
	rapid.Check(t, func(t *rapid.T) {
		failed := rapid.SliceOfN(path, 0, 6).Draw(t, "failed")
		f := &failedPaths{}
		for _, p := range failed {
			f.add(p)
		}
		for _, p := range rapid.SliceOfN(path, 1, 10).Draw(t, "paths") {
			if got, want := f.covers(p), coversByScan(failed, p); got != want {
				t.Fatalf("covers(%q) after %q = %v, want %v", p, failed, got, want)
			}
		}
	})
}
