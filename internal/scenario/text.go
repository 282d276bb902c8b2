package scenario

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"text/template/parse"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// text is a plan string: static, or a template rendered per use.
type text struct {
	s    string
	id   int     // index into Set.tmpls; -1 when static
	fast []piece // the template as pieces, when it is simple enough (see pieces)
}

// piece is one part of a simple template: literal text, a field chain such
// as .user.email, or a call of uuid or seq.
type piece struct {
	lit   string
	field []string
	fn    string
}

func (t text) static() bool { return t.id < 0 }

// templates collects a Set's parsed templates, and the copies of them
// that render: a template's functions (uuid, randInt, pick…) draw from the
// rendering user's random streams, which text/template binds when the
// functions are added (Funcs), not when it executes. So each copy is bound
// to a binding that the user who takes it from the pool points at its own
// streams while it renders, and gives back: the copies a Set holds are as
// many as render at once (one per event loop, at most one per worker), not
// one per template per user (400 templated tags cost a user about 1 MB).
type templates struct {
	list  []*template.Template
	pools []sync.Pool // of *bound, one per template of list
	seq   *atomic.Int64
}

// bound is a copy of a template whose functions draw from b.
type bound struct {
	t *template.Template
	b *binding
}

// binding is the random streams a bound template's functions draw from:
// the user's who renders it, set before and cleared after.
type binding struct {
	rng, ids *rand.Rand
}

// ready makes the pools of copies, once every template is parsed.
func (ts *templates) ready(seq *atomic.Int64) {
	ts.seq = seq
	ts.pools = make([]sync.Pool, len(ts.list))
	for i, t := range ts.list {
		ts.pools[i].New = func() any {
			b := &binding{}
			c, err := t.Clone()
			if err != nil {
				panic(fmt.Sprintf("clone a parsed template: %v", err)) // only fails after Execute, never here
			}
			return &bound{t: c.Funcs(funcs(b, ts.seq)), b: b}
		}
	}
}

// execute renders template id with data into w, its functions drawing
// from rng and ids.
func (ts *templates) execute(id int, w io.Writer, data any, rng, ids *rand.Rand) error {
	bt := ts.pools[id].Get().(*bound)
	bt.b.rng, bt.b.ids = rng, ids
	err := bt.t.Execute(w, data)
	bt.b.rng, bt.b.ids = nil, nil
	ts.pools[id].Put(bt)
	return err
}

// text compiles s; name says where it comes from, for error messages.
func (ts *templates) text(name, s string) (text, error) {
	if !plan.IsTemplate(s) {
		return text{s: s, id: -1}, nil
	}
	t, err := plan.ParseTemplate(name, s)
	if err != nil {
		return text{}, fmt.Errorf("%s: %w", name, err)
	}
	ts.list = append(ts.list, t)
	return text{s: s, id: len(ts.list) - 1, fast: pieces(t)}, nil
}

// pieces splits a template made only of text, field chains ({{.token}},
// {{.user.email}}) and the calls {{uuid}}, {{seq}} and {{env "NAME"}} into pieces that
// render without text/template's reflection: most templates in plans are
// like that. Anything else returns nil and renders through text/template.
func pieces(t *template.Template) []piece {
	if t.Tree == nil || t.Tree.Root == nil {
		return nil
	}
	var out []piece
	for _, n := range t.Tree.Root.Nodes {
		switch x := n.(type) {
		case *parse.TextNode:
			out = append(out, piece{lit: string(x.Text)})
		case *parse.ActionNode:
			if name, ok := envCall(x); ok {
				// An environment variable does not change during a run:
				// read once, it is literal text.
				out = append(out, piece{lit: os.Getenv(name)})
				continue
			}
			if len(x.Pipe.Decl) > 0 || len(x.Pipe.Cmds) != 1 || len(x.Pipe.Cmds[0].Args) != 1 {
				return nil
			}
			switch a := x.Pipe.Cmds[0].Args[0].(type) {
			case *parse.FieldNode:
				out = append(out, piece{field: a.Ident})
			case *parse.IdentifierNode:
				if a.Ident != "uuid" && a.Ident != "seq" {
					return nil
				}
				out = append(out, piece{fn: a.Ident})
			default:
				return nil
			}
		default:
			return nil
		}
	}
	return out
}

// envCall reports whether an action is {{env "NAME"}} alone, and NAME.
func envCall(a *parse.ActionNode) (string, bool) {
	if len(a.Pipe.Decl) > 0 || len(a.Pipe.Cmds) != 1 || len(a.Pipe.Cmds[0].Args) != 2 {
		return "", false
	}
	args := a.Pipe.Cmds[0].Args
	fn, ok := args[0].(*parse.IdentifierNode)
	name, isString := args[1].(*parse.StringNode)
	if !ok || fn.Ident != "env" || !isString {
		return "", false
	}
	return name.Text, true
}

// renderFast appends the pieces, rendered with the VU's data, to dst, as
// text/template would (a missing key is an error, as with missingkey=error).
func (v *VU) renderFast(dst []byte, ps []piece) ([]byte, error) {
	for _, p := range ps {
		switch {
		case p.field != nil:
			val, ok := v.data[p.field[0]]
			for _, name := range p.field[1:] {
				if !ok {
					break
				}
				m, isMap := val.(map[string]string)
				if !isMap {
					return dst, fmt.Errorf("can't evaluate field %s in %T", name, val)
				}
				val, ok = m[name]
			}
			if !ok {
				return dst, fmt.Errorf("map has no entry for key %q", strings.Join(p.field, "."))
			}
			dst = appendValue(dst, val)
		case p.fn == "uuid":
			dst = append(dst, uuid(v.ids)...)
		case p.fn == "seq":
			dst = strconv.AppendInt(dst, v.set.seq.Add(1), 10)
		default:
			dst = append(dst, p.lit...)
		}
	}
	return dst, nil
}

func appendValue(dst []byte, val any) []byte {
	switch x := val.(type) {
	case string:
		return append(dst, x...)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	}
	return fmt.Append(dst, val)
}

// render appends t, rendered with the VU's data, to dst.
func (v *VU) render(dst []byte, t text) ([]byte, error) {
	if t.static() {
		return append(dst, t.s...), nil
	}
	if t.fast != nil {
		return v.renderFast(dst, t.fast)
	}
	v.out.Reset()
	if err := v.set.tmpls.execute(t.id, &v.out, v.data, v.rng, v.ids); err != nil {
		return dst, err
	}
	return append(dst, v.out.Bytes()...), nil
}

// renderString renders t to a string.
func (v *VU) renderString(t text) (string, error) {
	if t.static() {
		return t.s, nil
	}
	b, err := v.render(v.scratch[:0], t)
	v.scratch = b
	return string(b), err
}
