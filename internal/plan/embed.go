package plan

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"

	"github.com/goccy/go-yaml/ast"
)

// Decode decodes one YAML document into v, a pointer to a struct with yaml
// tags, as Parse decodes a plan: every unknown key and every value of the
// wrong type is a Problem with file:line:col and its field path, all of
// them at once. It fills no defaults and checks nothing else: for files
// that hold other settings around a plan (a sweep file), whose Embedded
// field keeps the plan for Embedded.Plan.
func Decode(file string, data []byte, v any) error {
	if len(data) > MaxPlanBytes {
		return Problems{{File: file, Msg: fmt.Sprintf("the file is larger than %d MiB (%d bytes)", MaxPlanBytes>>20, MaxPlanBytes)}}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	body, bad := parseYAML(file, data)
	if bad != nil {
		return Problems{*bad}
	}
	if _, null := body.(*ast.NullNode); body == nil || null {
		return Problems{{File: file, Msg: "the file is empty"}}
	}
	d := &decoder{file: file, pos: map[string]position{}, aliases: map[*ast.AliasNode]ast.Node{}, failed: &failedPaths{}}
	collectAliases(body, map[string]ast.Node{}, d.aliases)
	d.value("", body, reflect.ValueOf(v).Elem())
	if len(d.problems) > 0 {
		sortProblems(d.problems)
		return d.problems
	}
	return nil
}

// Embedded is a plan inside another file (a sweep file's plan:): the path
// of a plan file, relative to the file that names it, or the plan written
// inline as a mapping, whose problems then name that file's lines.
type Embedded struct {
	// Path is the plan file's path as written; empty for an inline plan.
	Path    string
	file    string   // the file the plan is in or named from
	node    ast.Node // the inline plan's mapping
	aliases map[*ast.AliasNode]ast.Node
}

// Given reports whether the file had a plan: a path or a mapping.
func (e *Embedded) Given() bool { return e.Path != "" || e.node != nil }

// Plan parses the plan, fills its defaults and checks it, as Parse does.
// A plan file is read from Path (relative to the folder of the file that
// names it) and passed through render first, when render is not nil.
func (e *Embedded) Plan(render func([]byte) []byte) (*Plan, error) {
	if e.node == nil {
		path := e.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(e.file), path)
		}
		data, err := ReadLimited(path)
		if err != nil {
			return nil, fmt.Errorf("read plan: %w", err)
		}
		if render != nil {
			data = render(data)
		}
		return Parse(path, data)
	}
	return parseBody(e.file, e.node, e.aliases)
}

// embedded keeps a plan: a path (a string) or an inline mapping.
func (d *decoder) embedded(path string, n ast.Node, v reflect.Value) {
	e := v.Addr().Interface().(*Embedded)
	e.file, e.aliases = d.file, d.aliases
	switch n := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		e.node = n
	case *ast.StringNode:
		e.Path = n.Value
	default:
		d.add(path, n, "want the path of a plan file, or the plan as a mapping (target, load, scenarios), not %s", describe(n))
	}
}
