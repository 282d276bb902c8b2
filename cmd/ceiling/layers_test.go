package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/ceiling-dev/ceiling/"

// layer orders the packages: a package may import only packages of a lower
// layer (CONVENTIONS.md). sink and demo stand in for real servers and import
// nothing from the load path.
var layer = map[string]int{
	"internal/transport": 0, "internal/schedule": 0, "internal/segment": 0, "internal/plan": 0,
	"internal/metrics": 1,
	"internal/slo":     2, "internal/scenario": 2,
	"internal/transport/httpx": 3, "internal/transport/wsx": 3,
	"internal/load": 3, "internal/monitor": 3, "internal/sink": 3, "internal/demo": 3,
	"internal/delivery": 4, "internal/search": 4, "internal/sweep": 4, "internal/results": 4,
	"internal/report": 5,
	"internal/k8s":    6, "internal/cli": 6,
	"cmd/ceiling": 7,
}

// standalone packages must not import any other package of ours.
var standalone = map[string]bool{"internal/demo": true, "internal/sink": true}

func TestLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "bench") {
			return nil
		}
		from, ok := layer[rel]
		if !ok {
			t.Errorf("%s: package %s has no layer in layers_test.go", path, rel)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(p, module) {
				continue
			}
			dep := strings.TrimPrefix(p, module)
			if standalone[rel] {
				t.Errorf("%s: %s stands in for a real server and may not import %s", path, rel, dep)
			}
			if to, ok := layer[dep]; !ok || to >= from {
				t.Errorf("%s: %s (layer %d) imports %s (layer %d): only lower layers may be imported", path, rel, from, dep, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
