package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
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
		{"quoted", "a: \"" + strings.Repeat("[]", 300) + "\"\nb: '" + strings.Repeat("{x}", 300) + "'\n", 0, 0},
		{"escaped quote", `a: "\"` + strings.Repeat("[]", 300) + `"` + "\n", 0, 0},
		{"quotes, each a few open", strings.Repeat("a: \"[[[\"\n", 300), 0, 0},
		{"comment", "a: 1 # " + strings.Repeat("[", 300) + "\n", 0, 0},
		{"block scalar", "body: |\n  " + strings.Repeat("[]", 300) + "\n  more\nnext: 1\n", 0, 0},
		// The scanner takes a quote after a space for the start of a quoted
		// scalar, which YAML does only where a scalar begins: here the
		// parser reads a plain scalar (b "c), then collections. What the
		// scanner takes for text counts too, so they are refused.
		{"a quote inside a plain scalar", "a: b \"c\nd: " + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + "\n", 2, 4 + MaxDepth},
		{"one string too deep", "a: \"" + strings.Repeat("[", MaxDepth+1) + "\"\n", 1, 5 + MaxDepth},
		{"a block scalar's lines, as the parser may not read them", "- a: |\n  " + strings.Repeat("[", MaxDepth+1) + "\n", 2, 3 + MaxDepth},
		{"folded scalar, then deep", "body: >-\n  " + strings.Repeat("[]", 300) + "\nnext: " + strings.Repeat("[", MaxDepth+1), 3, 7 + MaxDepth},
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

// The depth scanner never lets through a file whose flow collections the
// YAML parser nests deeper than the scanner's limit: on every input the
// parser reads, with the limit one below the depth the parser found, the
// scanner refuses it.
//
// Quotes included: where the scanner takes for a quoted scalar what the
// parser reads as collections (a quote inside a plain scalar), the
// brackets it takes for text count as well.
func FuzzDepthScanner(f *testing.F) {
	for _, s := range []string{
		"a: [1, {b: [2]}]\n",
		"- - - [x]\n",
		"a: {b: [[], {}]}\nc: [[[d]]]\n",
		"body: |\n  [[\nnext: [[1]]\n",
		"body: >-\n  {{\n  more\nnext: {a: [1]} # [[\n",
		"url: /items[0]?q=[1]\nj: [a, [b, [c]]]\n",
		"a: [\n  [\n    [1],\n  ],\n]\n",
		"? [a, [b]]\n: [[c]]\n",
		"a: !t [&x [1], *x]\n",
		"a: b \"c\nd: [[[x]]]\n",
		"a: 'it''s [' \nb: [[1]]\n",
		"- a: |\n  [[[\n",
		deepLists(20),
		fullPlan,
	} {
		f.Add([]byte(s))
	}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "*.yaml"))
	for _, name := range examples {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			return // the parser's cost grows with the square of the depth
		}
		depth, ok := parsedDepth(data)
		if !ok || depth == 0 {
			return
		}
		if p := newDepthScanner("f.yaml", data, depth-1).scan(); p == nil {
			t.Errorf("depthScanner(limit %d).scan(%q) = nil, want refused: the parser nests its flow collections %d deep", depth-1, data, depth)
		}
	})
}

// parsedDepth returns how deeply the YAML parser nests the flow
// collections of data, and whether it parsed data.
func parsedDepth(data []byte) (depth int, ok bool) {
	defer func() {
		if recover() != nil {
			depth, ok = 0, false
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0, false
	}
	for _, doc := range f.Docs {
		if doc != nil {
			depth = max(depth, flowDepth(doc.Body))
		}
	}
	return depth, true
}

// flowDepth returns the most flow collections ([…], {…}) nested in one
// another under n, n included.
func flowDepth(n ast.Node) int {
	deepest := func(ns ...ast.Node) int {
		d := 0
		for _, c := range ns {
			d = max(d, flowDepth(c))
		}
		return d
	}
	switch n := n.(type) {
	case *ast.SequenceNode:
		d := deepest(n.Values...)
		if n.IsFlowStyle {
			d++
		}
		return d
	case *ast.MappingNode:
		d := 0
		for _, mv := range n.Values {
			d = max(d, flowDepth(mv))
		}
		if n.IsFlowStyle {
			d++
		}
		return d
	case *ast.MappingValueNode:
		return deepest(n.Key, n.Value)
	case *ast.MappingKeyNode:
		return deepest(n.Value)
	case *ast.TagNode:
		return deepest(n.Value)
	case *ast.AnchorNode:
		return deepest(n.Value)
	}
	return 0
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
