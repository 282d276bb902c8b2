package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxPlanBytes is the largest plan file, in bytes, that LoadFile and Parse
// accept (1 MiB); a larger one is refused before it is parsed. A plan is
// settings and requests, usually a few kilobytes: users and other data go in
// data files.
//
// The limit bounds the parser's time as well as memory, which is why it is
// this low: the YAML parser (goccy/go-yaml v1.19.2) takes time that grows
// with the square of the keys in one block mapping, and with the square of
// the depth of nested flow lists: 1 MB of headers parses in about 2 s, 1.2 MB
// of short keys in 22 s, 2.4 MB in 106 s (10 MiB would be half an hour).
// Its open pull request 889 makes block mappings linear.
const MaxPlanBytes = 1 << 20

// LoadFile reads the plan file at path and parses it with Parse. (It is not
// called Load because the type Load, the shape of the load, has that name.)
// It reads no more than MaxPlanBytes and one byte, so that a file too large
// to be a plan is refused without reading it all.
func LoadFile(path string) (*Plan, error) {
	data, err := ReadLimited(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return Parse(path, data)
}

// ReadLimited reads a plan (or a file holding one) of at most
// MaxPlanBytes, and one byte more, so that Parse or Decode refuses a file
// too large without reading it all.
func ReadLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxPlanBytes+1))
}

// Parse decodes a plan file's contents, fills defaults and validates it.
// file names the plan in positions and may be empty. On failure the error is
// Problems, listing every problem found (syntax, unknown keys, wrong types,
// invalid values) with file:line:col and the field path, in file order.
// Data larger than MaxPlanBytes is refused with one problem, unparsed.
func Parse(file string, data []byte) (*Plan, error) {
	if len(data) > MaxPlanBytes {
		return nil, Problems{{File: file, Msg: fmt.Sprintf(
			"the plan is larger than %d MiB (%d bytes), the limit for a plan file: put users and other data in data files",
			MaxPlanBytes>>20, MaxPlanBytes)}}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	body, bad := parseYAML(file, data)
	if bad != nil {
		return nil, Problems{*bad}
	}
	if _, null := body.(*ast.NullNode); body == nil || null {
		return nil, Problems{{File: file, Msg: "the plan is empty: want keys such as target, load and scenarios"}}
	}
	aliases := map[*ast.AliasNode]ast.Node{}
	collectAliases(body, map[string]ast.Node{}, aliases)
	return parseBody(file, body, aliases)
}

// parseBody decodes a plan's mapping (the file's body, or a mapping inside
// another file), fills defaults and validates it, as Parse.
func parseBody(file string, body ast.Node, aliases map[*ast.AliasNode]ast.Node) (*Plan, error) {
	p := &Plan{File: file}
	d := &decoder{file: file, pos: map[string]position{}, aliases: aliases, failed: &failedPaths{}}
	d.value("", body, reflect.ValueOf(p).Elem())
	p.pos = d.pos
	ps := d.problems
	for _, q := range p.check() {
		if !d.failed.covers(q.Path) {
			ps = append(ps, q)
		}
	}
	if len(ps) > 0 {
		sortProblems(ps)
		return nil, ps
	}
	return p, nil
}

// parseYAML parses data into one document body, nil for an empty file.
// It is the one way a YAML file of ours is read (plans, sweep files, a
// plan an agent is sent): a file that nests deeper than MaxDepth is
// refused before the parser sees it (checkDepth), and what aliases and
// merge keys expand to is bounded by the decoder (maxValues).
func parseYAML(file string, data []byte) (body ast.Node, bad *Problem) {
	if p := checkDepth(file, data); p != nil {
		return nil, p
	}
	defer func() {
		// The YAML parser is third-party code fed user input; a plan file
		// must give an error, never crash the command.
		if r := recover(); r != nil {
			body, bad = nil, &Problem{File: file, Msg: fmt.Sprintf("parse yaml: %v", r)}
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		bad = &Problem{File: file, Msg: err.Error()}
		var ye yaml.Error
		if errors.As(err, &ye) {
			bad.Msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil {
				bad.Line, bad.Col = tk.Position.Line, tk.Position.Column
			}
		}
		return nil, bad
	}
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			pos := nodePos(doc.Body)
			return nil, &Problem{File: file, Line: pos.line, Col: pos.col,
				Msg: "want one YAML document, found a second one (after ---)"}
		}
		body = doc.Body
	}
	return body, nil
}

// collectAliases records the node each alias stands for, in document order:
// an alias refers to the latest anchor of its name that is already complete,
// so an alias inside its own anchor is unknown and no expansion can loop.
func collectAliases(n ast.Node, anchors map[string]ast.Node, targets map[*ast.AliasNode]ast.Node) {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			collectAliases(mv, anchors, targets)
		}
	case *ast.MappingValueNode:
		collectAliases(n.Key, anchors, targets)
		collectAliases(n.Value, anchors, targets)
	case *ast.MappingKeyNode:
		collectAliases(n.Value, anchors, targets)
	case *ast.SequenceNode:
		for _, v := range n.Values {
			collectAliases(v, anchors, targets)
		}
	case *ast.TagNode:
		collectAliases(n.Value, anchors, targets)
	case *ast.AnchorNode:
		collectAliases(n.Value, anchors, targets)
		if n.Name != nil && n.Name.GetToken() != nil && n.Value != nil {
			anchors[n.Name.GetToken().Value] = n.Value
		}
	case *ast.AliasNode:
		if t, ok := anchors[aliasName(n)]; ok {
			targets[n] = t
		}
	}
}

// aliasName returns the anchor name an alias refers to.
func aliasName(n *ast.AliasNode) string {
	if n.Value == nil || n.Value.GetToken() == nil {
		return ""
	}
	return n.Value.GetToken().Value
}

// decoder walks the YAML tree alongside the Plan's type, recording the
// position of every field and a problem for every unknown key and every
// value of the wrong type, so that all of them are reported at once.
type decoder struct {
	file     string
	pos      map[string]position
	aliases  map[*ast.AliasNode]ast.Node
	problems Problems
	// failed holds the paths whose values could not be decoded: validating
	// them would only repeat their problems in other words.
	failed *failedPaths
	values int  // the decoder's work so far, bounded by maxValues
	over   bool // values passed maxValues and the problem saying so is recorded
}

// add records a problem at node n and marks path as failed.
func (d *decoder) add(path string, n ast.Node, format string, args ...any) {
	d.addAt(path, nodePos(n), format, args...)
}

// addAt records a problem at pos and marks path as failed. Each problem
// counts toward maxValues: an alias repeats every problem in its anchor.
func (d *decoder) addAt(path string, pos position, format string, args ...any) {
	if d.values++; d.values > maxValues {
		d.overflow(path, pos)
		return
	}
	d.problems = append(d.problems, Problem{
		File: d.file, Line: pos.line, Col: pos.col, Path: path, Msg: fmt.Sprintf(format, args...),
	})
	d.failed.add(path)
}

// spend counts cost toward maxValues at node n and reports whether the
// plan is still within it.
func (d *decoder) spend(path string, n ast.Node, cost int) bool {
	if d.values += cost; d.values <= maxValues {
		return true
	}
	d.overflow(path, nodePos(n))
	return false
}

// overflow records, once, that the plan passed maxValues at pos. It fails
// the whole plan: what was decoded is cut short, and validating it would
// only report what is missing.
func (d *decoder) overflow(path string, pos position) {
	if d.over {
		return
	}
	d.over = true
	d.problems = append(d.problems, Problem{File: d.file, Line: pos.line, Col: pos.col, Path: path,
		Msg: fmt.Sprintf("the plan expands to more than %d values (check its aliases and merge keys)", maxValues)})
	d.failed.add("")
}

// nodeUnmarshaler is the goccy interface that Duration and Percent
// implement: the decoder hands them a scalar whole, as a leaf. SinkLatency
// implements it too, but takes a mapping as well: the decoder reads it with
// latency, which records each percentile's position.
var nodeUnmarshaler = reflect.TypeFor[yaml.NodeUnmarshaler]()

// maxValues bounds the work of decoding one plan, because aliases and merge
// keys can make a small file expand to a huge plan (or, merging one mapping
// into the next several times over, take minutes to expand to a small one).
// Each value decoded counts one, and one more per pathBytesPerValue bytes of
// its field path, which the decoder keeps; each entry a merge key brings in
// counts one, as does each merge; and each problem counts one.
const maxValues = 100_000

// pathBytesPerValue is how many bytes of a value's field path count as one
// more value toward maxValues: long keys repeated by aliases, or lists
// nested thousands deep, would otherwise keep gigabytes of paths.
const pathBytesPerValue = 256

// value decodes node n into v, whose field path is path.
func (d *decoder) value(path string, n ast.Node, v reflect.Value) {
	if !d.spend(path, n, 1+len(path)/pathBytesPerValue) {
		return
	}
	n = d.resolve(path, n)
	if n == nil {
		return
	}
	if _, null := n.(*ast.NullNode); null {
		return // absent: the zero value stays and a default may apply
	}
	if v.Type() == reflect.TypeFor[Embedded]() {
		d.embedded(path, n, v)
		return
	}
	if v.Type() == reflect.TypeFor[SinkLatency]() {
		d.latency(path, n, v) // a scalar or a mapping, with its own positions
		return
	}
	if reflect.PointerTo(v.Type()).Implements(nodeUnmarshaler) {
		d.leaf(path, n, v)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		d.value(path, n, e.Elem())
		v.Set(e) // even when it failed: Validate then knows the key was given
	case reflect.Struct:
		d.structure(path, n, v)
	case reflect.Slice:
		d.list(path, n, v)
	case reflect.Map:
		d.dict(path, n, v)
	case reflect.Interface:
		d.anything(path, n, v)
	default:
		d.leaf(path, n, v)
	}
}

// resolve follows anchors, aliases and tags on collections to the node that
// holds the value. It returns nil after reporting an unknown alias.
func (d *decoder) resolve(path string, n ast.Node) ast.Node {
	for range 16 {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			t, ok := d.aliases[v]
			if !ok {
				d.add(path, v, "unknown alias %q (an alias must follow its complete anchor)", aliasName(v))
				return nil
			}
			n = t
		case *ast.TagNode:
			// Only the tags that restate a plain value: others are rare in a
			// plan and goccy decodes some of them loosely (!!bool yes is false).
			tag := ""
			if tk := v.GetToken(); tk != nil {
				tag = tk.Value
			}
			switch {
			case tag == "!!str" && isScalar(v.Value):
				return n
			case tag == "!!map" || tag == "!!seq":
				n = v.Value
			default:
				d.add(path, v, "YAML tag %s is not supported here (only !!str, !!map and !!seq)", clip(tag))
				return nil
			}
		default:
			return n
		}
	}
	d.add(path, n, "aliases nested too deeply")
	return nil
}

// entry is one key of a YAML mapping, after merge keys are expanded.
type entry struct {
	key        string
	keyNode    ast.Node
	value      ast.Node
	valueFirst bool // the value, not the key, marks the entry's position
}

// mapping returns the entries of a mapping node, or false when n is not one.
// Keys written in the mapping win over merged ones ("<<: *base"), and among
// merged mappings the first wins, as YAML's merge key says.
func (d *decoder) mapping(path string, n ast.Node) ([]entry, bool) {
	var mvs []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		mvs = m.Values
	case *ast.MappingValueNode:
		mvs = []*ast.MappingValueNode{m}
	default:
		return nil, false
	}
	var own, merged []entry
	for _, mv := range mvs {
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			merged = append(merged, d.merge(path, mv.Value)...)
			continue
		}
		key, ok := keyString(mv.Key)
		if !ok {
			d.add(path, mv.Key, "want a plain key, not %s", describe(mv.Key))
			continue
		}
		own = append(own, entry{key: key, keyNode: mv.Key, value: mv.Value, valueFirst: placeAtValue(mv.Value)})
	}
	seen := make(map[string]bool, len(own))
	for _, e := range own {
		seen[e.key] = true
	}
	for _, e := range merged {
		if !seen[e.key] {
			seen[e.key] = true
			own = append(own, e)
		}
	}
	return own, true
}

// merge returns the entries that a merge key's value n brings in. Each
// merge, and each entry it brings in, counts toward maxValues: a mapping
// that merges the one before it several times, a few levels deep, expands
// to billions of entries though it decodes to a handful of keys.
func (d *decoder) merge(path string, n ast.Node) []entry {
	if !d.spend(path, n, 1) {
		return nil
	}
	at := n
	n = d.resolve(path, n)
	if seq, ok := n.(*ast.SequenceNode); ok {
		var out []entry
		for _, item := range seq.Values {
			out = append(out, d.merge(path, item)...)
		}
		return out
	}
	if n == nil {
		return nil
	}
	es, ok := d.mapping(path, n)
	if !ok {
		d.add(path, n, "a merge key (<<) wants a mapping or a list of mappings, not %s", describe(n))
	}
	if !d.spend(path, at, len(es)) {
		return nil
	}
	return es
}

// keyString returns a scalar key's text.
func keyString(n ast.Node) (string, bool) {
	switch k := n.(type) {
	case *ast.MappingKeyNode:
		return keyString(k.Value)
	case *ast.StringNode:
		return k.Value, true
	case ast.ScalarNode:
		if tk := k.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// record notes where an entry's field is: at a scalar value, or at the key
// of a mapping or list.
func (d *decoder) record(path string, e entry) {
	if e.valueFirst {
		d.pos[path] = nodePos(e.value)
	} else {
		d.pos[path] = nodePos(e.keyNode)
	}
}

// structure decodes a mapping into a struct, by the fields' yaml tags.
func (d *decoder) structure(path string, n ast.Node, v reflect.Value) {
	entries, ok := d.mapping(path, n)
	if !ok {
		d.add(path, n, "want a mapping of keys such as %s, not %s", exampleKeys(v.Type()), describe(n))
		return
	}
	fields := yamlFields(v.Type())
	for _, e := range entries {
		p := join(path, e.key)
		i, known := fields[e.key]
		if !known {
			d.add(p, e.keyNode, "%s", unknownKey(v.Type(), e.key))
			continue
		}
		d.record(p, e)
		d.value(p, e.value, v.Field(i))
	}
}

// list decodes a sequence into a slice, element by element.
func (d *decoder) list(path string, n ast.Node, v reflect.Value) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.add(path, n, "want a list such as [1, 2], not %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
	for i, item := range seq.Values {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.pos[p] = nodePos(item)
		d.value(p, item, s.Index(i))
	}
	v.Set(s)
}

// dict decodes a mapping into a map with string keys.
func (d *decoder) dict(path string, n ast.Node, v reflect.Value) {
	entries, ok := d.mapping(path, n)
	if !ok {
		d.add(path, n, "want a mapping of names to values, not %s", describe(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(entries))
	for _, e := range entries {
		p := join(path, e.key)
		d.record(p, e)
		ev := reflect.New(v.Type().Elem()).Elem()
		d.value(p, e.value, ev)
		m.SetMapIndex(reflect.ValueOf(e.key).Convert(v.Type().Key()), ev)
	}
	v.Set(m)
}

// join appends a key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
