package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The hostile plans below took from seconds to minutes, or gigabytes, on
// the code before their limits; the times quoted were measured on the test
// machine with Parse, and are not asserted.

// withLimits is a valid plan to which the cases below add keys.
const withLimits = "target: http://h\nload: {rates: [1]}\nscenarios: [{request: {url: /}}]\n"

// mergeBomb is a valid plan whose JSON body has mappings a1, a2... each
// merging the one before it width times, and whose headers merge the last:
// width^levels merges that decode to one key. Levels 8 and width 10 (about
// 650 bytes) took 16 s before merges counted toward maxValues, levels 9
// more than a minute.
func mergeBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\nscenarios:\n- request:\n    url: /\n    json:\n      a0: &a0 {k: v}\n")
	for i := 1; i <= levels; i++ {
		items := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), width), ", ")
		fmt.Fprintf(&b, "      a%d: &a%d {<<: [%s]}\n", i, i, items)
	}
	fmt.Fprintf(&b, "http: {headers: {<<: *a%d}}\n", levels)
	return b.String()
}

// unknownKeyBomb is a plan whose scenarios alias, n times, one with keys
// unknown keys: each alias repeats every problem. keys = n = 1000 (13 KB)
// took 27 s and a million problems before problems counted.
func unknownKeyBomb(keys, n int) string {
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\ns: &s {request: {url: /}")
	for i := range keys {
		fmt.Fprintf(&b, ", u%d: 1", i)
	}
	b.WriteString("}\nscenarios: [" + strings.TrimSuffix(strings.Repeat("*s, ", n), ", ") + "]\n")
	return b.String()
}

// longKeyBomb is a plan whose scenarios alias, n times, one whose JSON body
// has a key of keyBytes bytes: each alias keeps another copy of the field
// path. keyBytes = 100 000 and n = 2000 (108 KB) allocated 425 MB before
// long paths counted; n = 20 000 would have kept gigabytes.
func longKeyBomb(keyBytes, n int) string {
	return "target: http://h\nload: {rates: [1]}\ns: &s {request: {url: /, json: {" + strings.Repeat("x", keyBytes) +
		": 1}}}\nscenarios: [" + strings.TrimSuffix(strings.Repeat("*s, ", n), ", ") + "]\n"
}

// deepLists is a valid plan whose JSON body is a list of a list of...
// depth deep, whose paths grow with the depth: 40 000 (80 KB) took 4.6 s,
// most of it building paths, before long paths counted.
func deepLists(depth int) string {
	return "target: http://h\nload: {rates: [1]}\nscenarios: [{request: {url: /, json: " +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}}]\n"
}

func TestParseBoundsExpansion(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		// Where the plan is found to expand too far.
		line, col int
		path      string // a prefix of the problem's path
	}{
		{"merge key bomb", mergeBomb(9, 10), 8, 21, "scenarios[0].request.json.a5"},
		{"merge key bomb of empty mappings", strings.Replace(mergeBomb(9, 10), "{k: v}", "{}", 1), 8, 56, "scenarios[0].request.json.a5"},
		{"unknown keys repeated by aliases", unknownKeyBomb(1000, 1000), 3, 6154, "scenarios[99].u693"},
		{"long key repeated by aliases", longKeyBomb(100_000, 2000), 3, 100_035, "scenarios[253].request.json.xxx"},
	}
	msg := fmt.Sprintf("the plan expands to more than %d values (check its aliases and merge keys)", maxValues)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.yaml))
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Parse(%s) = %v (%T), want Problems with %q", tt.name, err, err, msg)
			}
			i := slices.IndexFunc(ps, func(p Problem) bool { return p.Msg == msg })
			if i < 0 {
				t.Fatalf("Parse(%s) = %d problems starting %q, want one %q", tt.name, len(ps), clip(ps[0].Error()), msg)
			}
			if p := ps[i]; p.File != "p.yaml" || p.Line != tt.line || p.Col != tt.col || !strings.HasPrefix(p.Path, tt.path) {
				t.Errorf("Parse(%s) = %s:%d:%d: %s, want p.yaml:%d:%d: %s…", tt.name, p.File, p.Line, p.Col, clip(p.Path), tt.line, tt.col, tt.path)
			}
			if len(ps) > maxValues+1 {
				t.Errorf("Parse(%s) = %d problems, want at most %d", tt.name, len(ps), maxValues+1)
			}
		})
	}
}

func TestParseMergesWithinLimit(t *testing.T) {
	// The bomb three levels deep merges 1110 times: within the limit, it
	// decodes as YAML says, every level to the one key.
	p, err := Parse("p.yaml", []byte(mergeBomb(3, 10)))
	if err != nil {
		t.Fatalf("Parse(merge bomb, 3 levels) = %v, want no error", err)
	}
	if diff := cmp.Diff(map[string]string{"k": "v"}, p.HTTP.Headers); diff != "" {
		t.Errorf("Parse(merge bomb, 3 levels) headers mismatch (-want +got):\n%s", diff)
	}
	kv := map[string]any{"k": "v"}
	want := map[string]any{"a0": kv, "a1": kv, "a2": kv, "a3": kv}
	if diff := cmp.Diff(want, p.Scenarios[0].Request.JSON); diff != "" {
		t.Errorf("Parse(merge bomb, 3 levels) json mismatch (-want +got):\n%s", diff)
	}
}

func TestParseRefusesLargePlan(t *testing.T) {
	const msg = "the plan is larger than 1 MiB (1048576 bytes), the limit for a plan file: put users and other data in data files"
	// A valid plan, padded with a comment to the limit.
	data := []byte(withLimits + "#")
	data = append(data, strings.Repeat("x", MaxPlanBytes-len(data))...)
	if _, err := Parse("p.yaml", data); err != nil {
		t.Errorf("Parse(%d bytes) = %v, want no error", len(data), err)
	}
	data = append(data, 'x')
	_, err := Parse("p.yaml", data)
	if diff := cmp.Diff([]string{"p.yaml: " + msg}, problemsOf(t, err)); diff != "" {
		t.Errorf("Parse(%d bytes) problems mismatch (-want +got):\n%s", len(data), diff)
	}

	path := filepath.Join(t.TempDir(), "p.yaml")
	data = append(data, strings.Repeat("x", 1<<20)...) // 2 MiB
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(path)
	if diff := cmp.Diff([]string{path + ": " + msg}, problemsOf(t, err)); diff != "" {
		t.Errorf("LoadFile(2 MiB) problems mismatch (-want +got):\n%s", diff)
	}
}

// headersPlan is a valid plan with n headers of 36 bytes each.
func headersPlan(n int) string {
	var b strings.Builder
	b.WriteString(withLimits + "http:\n  headers:\n")
	for i := range n {
		fmt.Fprintf(&b, "    X-Header-%07d: value-%07d\n", i, i)
	}
	return b.String()
}

func TestParseLargePlan(t *testing.T) {
	// 1 MB of headers: 29 000 keys in one mapping, which take 1.5 to 2 s
	// here, nearly all in the YAML parser, whose time grows with the
	// square of the keys in a mapping (see MaxPlanBytes).
	const n = 29_000
	p, err := Parse("p.yaml", []byte(headersPlan(n)))
	if err != nil {
		t.Fatalf("Parse(%d headers) = %.200v, want no error", n, err)
	}
	if len(p.HTTP.Headers) != n {
		t.Errorf("Parse(%d headers) has %d headers, want %d", n, len(p.HTTP.Headers), n)
	}
}

func TestParseManyProblems(t *testing.T) {
	// Thousands of values that fail to decode and thousands of validation
	// problems: 10 000 scenarios took 18 s when each validation problem was
	// looked for among every failed path, and take 0.5 s now (not asserted:
	// this test keeps which problems are reported, with fewer). Each
	// scenario has a bad weight (a validation problem), a bad status (a
	// decoding problem) and, but the first, a name that is already used.
	const n = 3000
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\nscenarios:\n")
	for range n {
		b.WriteString("- {request: {url: /}, weight: -1, expect: {status: [x]}}\n")
	}
	_, err := Parse("p.yaml", []byte(b.String()))
	got := problemsOf(t, err)
	if len(got) != 3*n-1 {
		t.Fatalf("Parse(%d bad scenarios) = %d problems, want %d", n, len(got), 3*n-1)
	}
	want := []string{
		`p.yaml:4:31: scenarios[0].weight: want a positive, finite weight such as 30, not -1`,
		`p.yaml:4:53: scenarios[0].expect.status[0]: want a whole number, not the string "x"`,
		`p.yaml:5:3: scenarios[1].name: scenario name "GET /" is already used by scenarios[0] (p.yaml:4:3): names must be unique; give one a name`,
	}
	if diff := cmp.Diff(want, got[:3]); diff != "" {
		t.Errorf("Parse(%d bad scenarios) first problems mismatch (-want +got):\n%s", n, diff)
	}
}

func TestParseManyHandshakeHeaders(t *testing.T) {
	// Spellings of a header that the WebSocket handshake sets, in
	// http.headers: a problem each, which each websocket scenario finds
	// again and which is reported once. 20 000 took 3.3 s when each was
	// looked for among all the problems so far, and take 1.4 s now, most of
	// it parsing (not asserted). All but the first are also the same header
	// as another.
	const n = 5000
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\n" +
		"scenarios: [{name: a, websocket: {url: /w}}, {name: b, websocket: {url: /w}}]\nhttp:\n  headers:\n")
	for i := range n {
		fmt.Fprintf(&b, "    %s: x\n", spelling("sec-websocket-extensions", i))
	}
	_, err := Parse("p.yaml", []byte(b.String()))
	got := problemsOf(t, err)
	if len(got) != 2*n-1 {
		t.Fatalf("Parse(%d handshake headers) = %d problems, want %d", n, len(got), 2*n-1)
	}
	want := "p.yaml:9:31: http.headers.SEc-websocket-extensions: the WebSocket handshake sets SEc-websocket-extensions itself, and http.headers are sent with it too"
	if c := strings.Count(strings.Join(got, "\n")+"\n", want+"\n"); c != 1 {
		t.Errorf("Parse(%d handshake headers) has %q %d times, want once", n, want, c)
	}
}

// spelling returns word with the letters chosen by the bits of i in upper
// case: a different spelling for each i below 2^letters.
func spelling(word string, i int) string {
	r := []byte(word)
	bit := 0
	for j, c := range r {
		if c >= 'a' && c <= 'z' {
			if i>>bit&1 == 1 {
				r[j] = c - 'a' + 'A'
			}
			bit++
		}
	}
	return string(r)
}
