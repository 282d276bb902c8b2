package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestDocsIndex holds docs/README.md to the pages it indexes: every page
// of docs/ is in it, and every page it links to exists.
func TestDocsIndex(t *testing.T) {
	dir := filepath.Join("..", "..", "docs")
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range regexp.MustCompile(`\]\(([^)#]+)\)`).FindAllStringSubmatch(string(index), -1) {
		linked = append(linked, m[1])
		if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
			t.Errorf("docs/README.md links to %s: %v", m[1], err)
		}
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if name != "README.md" && !slices.Contains(linked, name) {
			t.Errorf("docs/%s is not in the index, docs/README.md", name)
		}
	}
}
