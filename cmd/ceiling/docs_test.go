package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// private are the ways product text could point at what a user cannot
// see: the research behind the product, and the project's issue tracker.
// "seed" alone is fine (a random seed); "seed 003" is not.
// A reference may be split over two lines of a comment ("seed\n// 003").
var private = regexp.MustCompile(`(?i)\bseeds?(?:[ _-]|\s*(?://|#)?\s*)0\d\d\b|\bseeds/|\bissues?(?:\s*(?://|#)?\s*)#?\d+\b|\bwrite-?ups?\b|product\s+description|PRODUCT\.md|CONVENTIONS\.md`)

// TestNoPrivateReferences fails when product text refers to documents a
// user cannot look up: Go code and tests, README.md, docs/ (pages,
// examples, the schema) and bench/. Help texts are Go strings, so they
// are covered too.
func TestNoPrivateReferences(t *testing.T) {
	t.Parallel() // reads files only; its CPU overlaps the others' waits
	root := filepath.Join("..", "..")
	self, err := filepath.Abs("docs_test.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); strings.HasPrefix(name, ".") && name != "." && name != ".." || name == "testdata" && strings.Contains(path, "fuzz") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".json", ".sh", ".csv", ".txt", ".html", ".golden":
		default:
			if filepath.Base(path) != "Dockerfile" {
				return nil
			}
		}
		if abs, _ := filepath.Abs(path); abs == self {
			return nil // the patterns themselves
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for _, loc := range private.FindAllIndex(data, -1) {
			rel, _ := filepath.Rel(root, path)
			line := 1 + strings.Count(string(data[:loc[0]]), "\n")
			t.Errorf("%s:%d: %q refers to what a user cannot see; say what the thing is", rel, line, data[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("checked %d files; the walk missed the tree", checked)
	}
}
