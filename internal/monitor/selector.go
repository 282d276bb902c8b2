package monitor

import (
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// selector picks series: a metric name and label equalities, written
// name or name{label="value",...}.
type selector struct {
	name   string
	labels []labelMatch
}

type labelMatch struct{ name, value string }

// matches reports whether the selector keeps a series named series of the
// family family with these labels. A family's name selects all its series
// (a summary's _sum and _count).
func (s selector) matches(series, family string, labels []*dto.LabelPair) bool {
	if s.name != series && s.name != family {
		return false
	}
	for _, want := range s.labels {
		found := false
		for _, l := range labels {
			if l.GetName() == want.name {
				found = l.GetValue() == want.value
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// String writes the selector back in its canonical form.
func (s selector) String() string {
	pairs := make([]*dto.LabelPair, len(s.labels))
	for i, l := range s.labels {
		pairs[i] = &dto.LabelPair{Name: &l.name, Value: &l.value}
	}
	return canonical(s.name, pairs)
}

// parseSelector parses name or name{label="value",...}. Values are quoted
// with ", and \\, \" and \n are their escapes, as in the text format.
func parseSelector(in string) (selector, error) {
	src := strings.TrimSpace(in)
	name, _, hasLabels := strings.Cut(src, "{")
	name = strings.TrimSpace(name)
	if name == "" {
		return selector{}, fmt.Errorf("metric %q: no name", in)
	}
	if strings.ContainsAny(name, "}\"=, \t\n") {
		return selector{}, fmt.Errorf("metric %q: bad name %q", in, name)
	}
	s := selector{name: name}
	if !hasLabels {
		return s, nil
	}
	open := strings.IndexByte(in, '{')
	p := &selParser{in: in, s: in[open+1:], off: open + 1}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		l, err := p.pair()
		if err != nil {
			return selector{}, err
		}
		s.labels = append(s.labels, l)
		p.space()
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return selector{}, p.fail("want , or } after a label")
		}
	}
	p.space()
	if p.i != len(p.s) && strings.TrimSpace(p.s[p.i:]) != "" {
		return selector{}, p.fail("text after }")
	}
	return s, nil
}

// selParser walks the label part of a selector, after its '{'.
type selParser struct {
	in  string // the whole selector, for messages
	s   string // the part after '{'
	off int    // where s starts in in
	i   int
}

func (p *selParser) fail(msg string) error {
	return fmt.Errorf("metric %q: %s at column %d", p.in, msg, p.off+p.i+1)
}

func (p *selParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *selParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// pair reads label="value".
func (p *selParser) pair() (labelMatch, error) {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune("=!~\"{}, \t", rune(p.s[p.i])) {
		p.i++
	}
	l := labelMatch{name: p.s[start:p.i]}
	if l.name == "" {
		return l, p.fail("want a label name")
	}
	p.space()
	if !p.eat('=') {
		return l, p.fail("want = after the label name (only = is supported)")
	}
	p.space()
	if !p.eat('"') {
		return l, p.fail("want a quoted value")
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			l.value = b.String()
			return l, nil
		case c == '\\' && p.i < len(p.s):
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(e)
			default:
				return l, p.fail(fmt.Sprintf("unknown escape \\%c", e))
			}
		default:
			b.WriteByte(c)
		}
	}
	return l, p.fail("unterminated value")
}
