package plan

import (
	"strings"
	"testing"
)

// A file that nests deeper than MaxDepth is refused, at the place it goes
// too deep, before the YAML parser sees it; what real plans hold (quoted
// brackets, comments, block scalars, JSON bodies a few levels deep) is not.
func TestCheckDepth(t *testing.T) {
	deepFlow := "json: " + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + "\n"
	for _, tt := range []struct {
		name      string
		in        string
		line, col int // 0: accepted
	}{
		{"flow lists", "a: 1\n" + deepFlow, 2, 7 + MaxDepth},
		{"flow mappings", "x: " + strings.Repeat("{a: ", MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), 1, 4 + 4*MaxDepth},
		{"block sequences on one line", strings.Repeat("- ", MaxDepth+1) + "x\n", 1, 2*MaxDepth + 1},
		{"at the limit", "json: " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), 0, 0},
		{"quoted", "a: \"" + strings.Repeat("[", 300) + "\"\nb: '" + strings.Repeat("{", 300) + "'\n", 0, 0},
		{"escaped quote", `a: "\"` + strings.Repeat("[", 300) + `"` + "\n", 0, 0},
		{"comment", "a: 1 # " + strings.Repeat("[", 300) + "\n", 0, 0},
		{"block scalar", "body: |\n  " + strings.Repeat("[", 300) + "\n  more\nnext: 1\n", 0, 0},
		{"folded scalar, then deep", "body: >-\n  " + strings.Repeat("[", 300) + "\nnext: " + strings.Repeat("[", MaxDepth+1), 3, 7 + MaxDepth},
		{"a JSON body", "json: {a: [1, {b: {c: [2, 3]}}], d: \"[x\"}\n", 0, 0},
		{"a URL with brackets", "url: /items[0]?q=[1]\n", 0, 0},
	} {
		p := checkDepth("plan.yaml", []byte(tt.in))
		switch {
		case tt.line == 0 && p != nil:
			t.Errorf("%s: refused %+v, want accepted", tt.name, p)
		case tt.line != 0 && p == nil:
			t.Errorf("%s: accepted, want refused at %d:%d", tt.name, tt.line, tt.col)
		case tt.line != 0 && (p.Line != tt.line || p.Col != tt.col):
			t.Errorf("%s: refused at %d:%d, want %d:%d", tt.name, p.Line, p.Col, tt.line, tt.col)
		}
	}
}

// The bombs of a hostile plan: 40,000 nested lists in 80 KB ran the
// parser out of memory; now Parse refuses them at once, with the place.
func TestParseRefusesDeepNesting(t *testing.T) {
	bomb := "target: http://127.0.0.1:1\nscenarios:\n  - request: {url: /, json: " + strings.Repeat("[", 40000) + strings.Repeat("]", 40000) + "}\n"
	_, err := Parse("bomb.yaml", []byte(bomb))
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:3:") || !strings.Contains(err.Error(), "nest deeper than") {
		t.Fatalf("Parse(40,000 nested lists) = %v, want refused at line 3 for nesting", err)
	}
	var sweep struct{ A any }
	if err := Decode("sweep.yaml", []byte("a: "+strings.Repeat("[", 40000)), &sweep); err == nil || !strings.Contains(err.Error(), "nest deeper than") {
		t.Errorf("Decode(40,000 nested lists) = %v, want refused for nesting", err)
	}
}
