package slo

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The error messages of bad thresholds, as users see them, with a caret
// under the column they point at.
func TestErrorsGolden(t *testing.T) {
	var b strings.Builder
	for _, in := range []string{
		"p99", "p99<", "p98<200ms", "p99<200", "p99 < fast", "errors<1", "errors<101%", "limited<=-5%",
		"rate>=lots", "rate>=11", "p99<200ms,,errors<1%", ", p99<1s", ".p99<1s", "p99<1s, send.errors<", "p99=200ms",
		"send.recovery<5s", "recovery<5",
	} {
		_, err := Parse(in)
		fmt.Fprintf(&b, "%s\n", in)
		if se, ok := err.(*SyntaxError); ok {
			fmt.Fprintf(&b, "%s^ %s\n\n", strings.Repeat(" ", se.Offset), se.Msg)
			continue
		}
		fmt.Fprintf(&b, "(accepted: %v)\n\n", err)
	}
	path := filepath.Join("testdata", "errors.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, []byte(b.String()), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("messages differ from %s (go test -update rewrites it):\n%s", path, b.String())
	}
}
