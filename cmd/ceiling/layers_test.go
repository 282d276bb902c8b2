package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ceiling-dev/ceiling/"

// docLayers reads the layer table of docs/architecture.md, the one place
// the layers are written down: its rows "| N | `pkg`, `pkg` | what it is |"
// give each package (a path under internal/, or cmd/ceiling) its layer. A
// package may import only packages of a lower layer.
func docLayers(t *testing.T) map[string]int {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| *([0-9]+) *\| *([^|]+)\|`)
	name := regexp.MustCompile("`([a-z0-9/]+)`")
	layer := map[string]int{}
	for line := range strings.Lines(string(doc)) {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range name.FindAllStringSubmatch(m[2], -1) {
			pkg := p[1]
			if !strings.HasPrefix(pkg, "cmd/") {
				pkg = "internal/" + pkg
			}
			if _, dup := layer[pkg]; dup {
				t.Errorf("docs/architecture.md gives %s two rows", pkg)
			}
			layer[pkg] = n
		}
	}
	if len(layer) == 0 {
		t.Fatal("docs/architecture.md has no layer table")
	}
	return layer
}

// standalone packages must not import any other package of ours.
var standalone = map[string]bool{"internal/demo": true, "internal/sink": true}

// testOnly packages are for tests: only _test.go files may import them
// (testkit's servers and processes have no place in the binary), and they
// import nothing of ours but what testOnlyMay lists.
var testOnly = map[string]bool{"internal/testkit": true}

// testOnlyMay is what a package for tests may import of ours: testkit's
// free ports are the product's (freeport), chosen one way for both.
var testOnlyMay = map[string][]string{"internal/testkit": {"internal/freeport"}}

// allowed lists, for some packages, the only packages of ours they may
// import: k8s deploys ceiling commands and reads their result back, so it
// needs the plan and the result format, never the executor (nor run); the
// error kinds (failure.InputError, failure.ErrInterrupted), which cli turns
// into exit codes as it does for every command; the rule of what is
// secret (secret), which keeps credentials out of what it prints; and the
// bounded reading of the files it is given (inputfile: --token-file).
var allowed = map[string][]string{"internal/k8s": {"internal/failure", "internal/inputfile", "internal/plan", "internal/results", "internal/secret"}}

// formats are the file format and its renderers: they depend on no
// executor, directly or not, so that results of any run (or of agents, or
// a merge) read the same.
var formats = map[string][]string{
	"internal/results": {"internal/load", "internal/scenario", "internal/run"},
	"internal/report":  {"internal/load", "internal/scenario", "internal/run"},
	"internal/compare": {"internal/load", "internal/scenario", "internal/run"},
}

// consumers are the packages that follow a run (the live line, the
// outputs, the live page): run hands them values of the result format and
// depends on none of them, directly or not.
var consumers = map[string][]string{
	"internal/run": {"internal/report", "internal/outputs", "internal/dashboard"},
}

// commandLine lists the packages that know nothing of command lines: the
// plan is a file format, whatever command reads it, so the packages that
// own a command's configuration register its flags, not plan.
var commandLine = map[string][]string{
	"internal/plan": {"github.com/spf13/pflag", "github.com/spf13/cobra"},
}

func TestLayers(t *testing.T) {
	layer := docLayers(t)
	imports := map[string][]string{} // package → our packages it imports
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "bench") || strings.HasPrefix(rel, "test/") {
			return nil // not the product: benchmarks, and test/k8s's own module
		}
		if _, ok := layer[rel]; !ok {
			t.Errorf("%s: package %s has no row in the layer table of docs/architecture.md", path, rel)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if slices.Contains(commandLine[rel], p) {
				t.Errorf("%s: %s is a file format and may not import %s: the flags belong to the command", path, rel, p)
			}
			if !strings.HasPrefix(p, module) {
				continue
			}
			dep := strings.TrimPrefix(p, module)
			imports[rel] = append(imports[rel], dep)
			checkImport(t, layer, path, rel, dep)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range layer {
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			t.Errorf("docs/architecture.md's layer table lists %s, which does not exist", pkg)
		}
	}
	checkBanned(t, imports, consumers, "a run hands its followers values of the result format, and knows none of them")
	checkBanned(t, imports, formats, "the result format and its renderers must not depend on the executor")
}

// checkImport checks that the package rel (of file path) may import dep,
// one of ours: one it is allowed, not one for tests only, none at all if
// it stands in for a real server, and only from a lower layer.
func checkImport(t *testing.T, layer map[string]int, path, rel, dep string) {
	t.Helper()
	if only, ok := allowed[rel]; ok && !slices.Contains(only, dep) {
		t.Errorf("%s: %s may import only %v of ours, not %s", path, rel, only, dep)
	}
	if testOnly[dep] {
		t.Errorf("%s: %s is for tests only; %s may import it only in _test.go files", path, dep, rel)
	}
	if testOnly[rel] && !slices.Contains(testOnlyMay[rel], dep) {
		t.Errorf("%s: %s is for tests only and may not import %s", path, rel, dep)
	}
	if standalone[rel] {
		t.Errorf("%s: %s stands in for a real server and may not import %s", path, rel, dep)
	}
	if to, ok := layer[dep]; !ok || to >= layer[rel] {
		t.Errorf("%s: %s (layer %d) imports %s (layer %d): only lower layers may be imported", path, rel, layer[rel], dep, to)
	}
}

// checkBanned checks that no package of banned depends, directly or not
// (by imports), on any package banned for it; why says the rule.
func checkBanned(t *testing.T, imports, banned map[string][]string, why string) {
	t.Helper()
	for pkg, bans := range banned {
		deps := closure(imports, pkg)
		for _, b := range bans {
			if slices.Contains(deps, b) {
				t.Errorf("%s depends on %s: %s", pkg, b, why)
			}
		}
	}
}

// closure returns every package pkg depends on, directly or not.
func closure(imports map[string][]string, pkg string) []string {
	var seen []string
	todo := []string{pkg}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, d := range imports[p] {
			if !slices.Contains(seen, d) {
				seen = append(seen, d)
				todo = append(todo, d)
			}
		}
	}
	return seen
}
