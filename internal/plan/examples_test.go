package plan

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every plan of docs/examples loads and validates as it is shipped (its
// users file beside it); the other files there (a HAR recording, an
// OpenAPI document, users) are sources, not plans.
func TestExamplePlansValidate(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range examples {
		if strings.HasSuffix(name, ".openapi.yaml") {
			continue
		}
		n++
		if _, err := LoadFile(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n < 5 {
		t.Errorf("%d example plans found, want the docs' (a glob that finds none checks nothing)", n)
	}
}
