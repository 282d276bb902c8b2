package scenario

import (
	"fmt"
	"text/template"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// text is a plan string: static, or a template rendered per use.
type text struct {
	s  string
	id int // index into Set.tmpls; -1 when static
}

func (t text) static() bool { return t.id < 0 }

// templates collects a Set's parsed templates.
type templates struct {
	list []*template.Template
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
	return text{s: s, id: len(ts.list) - 1}, nil
}

// render appends t, rendered with the VU's data, to dst.
func (v *VU) render(dst []byte, t text) ([]byte, error) {
	if t.static() {
		return append(dst, t.s...), nil
	}
	v.out.Reset()
	if err := v.tmpls[t.id].Execute(&v.out, v.data); err != nil {
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
