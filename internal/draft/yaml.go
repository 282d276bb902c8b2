package draft

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// plainScalar matches the strings written without quotes: they read back
// as the same string in any YAML context the plan uses (block and flow).
var plainScalar = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./:@+=-]*( [A-Za-z0-9_./:@+=-]+)*$`)

// keywords are plain scalars that YAML reads as something other than a
// string (in 1.1 or 1.2), compared in lower case.
var keywords = map[string]bool{
	"null": true, "true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"y": true, "n": true, "nan": true, "inf": true,
}

// quote writes s as a YAML scalar that reads back as the string s: plain
// when that is unambiguous, else single-quoted, else (control characters,
// line breaks) double-quoted with escapes. s must be valid UTF-8; invalid
// bytes are written as U+FFFD, a run of them as one.
func quote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if plainScalar.MatchString(s) && !keywords[strings.ToLower(s)] && !strings.Contains(s, ": ") && !strings.HasSuffix(s, ":") {
		return s
	}
	if printable(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r < 0x20 || r == 0x7f || !unicode.IsPrint(r) && r != ' ':
				if r <= 0xffff {
					fmt.Fprintf(&b, `\u%04X`, r)
				} else {
					fmt.Fprintf(&b, `\U%08X`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// printable reports whether s can be single-quoted: valid UTF-8 of
// printable characters and spaces, no line breaks, and no leading or
// trailing space (which a reader may fold away).
func printable(s string) bool {
	if !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r != ' ' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// text builds the YAML of a plan line by line.
type text struct {
	b strings.Builder
}

// line writes one line at an indent of two spaces per level, with an
// optional comment after it.
func (t *text) line(level int, s, comment string) {
	t.b.WriteString(strings.Repeat("  ", level))
	t.b.WriteString(s)
	if comment != "" {
		t.b.WriteString("  # ")
		t.b.WriteString(oneLine(comment))
	}
	t.b.WriteByte('\n')
}

// comment writes a comment of several lines above the next line,
// wrapped at about 90 columns.
func (t *text) comment(level int, c string) {
	if c == "" {
		return
	}
	prefix := strings.Repeat("  ", level) + "# "
	for _, para := range strings.Split(c, "\n") {
		if strings.HasPrefix(para, " ") {
			t.b.WriteString(prefix + para + "\n") // an indented line (a list) stays as written
			continue
		}
		line := prefix
		for _, w := range strings.Fields(para) {
			if len(line) > len(prefix) && len(line)+1+len(w) > 90 {
				t.b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = prefix
			}
			if len(line) > len(prefix) {
				line += " "
			}
			line += w
		}
		t.b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// oneLine keeps a comment on its line: line breaks become spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// duration writes a duration as the plan reads it: "20s", "1.5s", "250ms".
func duration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// flowList writes numbers as a flow sequence: [5, 10, 20].
func flowList[T int | float64](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(float64(x), 'f', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// render writes the sketch as a plan.
func (s *sketch) render() []byte {
	t := &text{}
	for _, h := range s.header {
		t.comment(0, h)
	}
	if vars := s.env.vars; len(vars) > 0 {
		var b strings.Builder
		b.WriteString("Before validate and run, set these environment variables (the plan holds no secret, it reads them):")
		for _, v := range vars {
			fmt.Fprintf(&b, "\n  %s: %s", v.name, v.what)
		}
		t.comment(0, b.String())
	}
	if len(s.todos) > 0 {
		t.comment(0, fmt.Sprintf("%d value%s the source did not give %s written {{TODO \"...\"}}: `ceiling validate` lists %s with %s place.",
			len(s.todos), plural(len(s.todos)), were(len(s.todos)), them(len(s.todos)), their(len(s.todos))))
	}
	t.line(0, "name: "+quote(s.name), "")
	t.line(0, "target: "+quote(s.target), "")
	t.line(0, "load:", "")
	if s.closed {
		t.line(1, "model: closed", "")
		t.line(1, "vus: "+flowList(draftVUs), "virtual users, one step each: raise them once every scenario passes")
		t.line(1, "think: "+duration(s.think), s.thinkNote)
	} else {
		t.line(1, "rates: "+flowList(draftRates), "requests per second, one step each: raise them once every scenario passes")
	}
	t.line(1, "step: "+duration(draftStep), "")
	t.line(1, "warmup: "+duration(draftWarmup), "")
	s.renderHTTP(t)
	if len(s.login) > 0 {
		t.comment(0, "Once per virtual user, before its first iteration; what it extracts every scenario can read.")
		t.line(0, "login:", "")
		for _, r := range s.login {
			s.renderStep(t, 1, r)
		}
	}
	t.line(0, "scenarios:", "")
	for _, sc := range s.scenarios {
		t.comment(1, sc.comment)
		t.line(1, "- name: "+quote(sc.name), "")
		if sc.weight > 0 {
			t.line(2, "weight: "+strconv.Itoa(sc.weight), "")
		}
		if sc.flow || len(sc.steps) != 1 {
			t.line(2, "steps:", "")
			for _, r := range sc.steps {
				s.renderStep(t, 3, r)
			}
			continue
		}
		s.renderRequest(t, 2, sc.steps[0])
	}
	t.line(0, "slo: "+quote(draftSLO), "add latency terms such as p99<500ms once you know what to ask for")
	return []byte(t.b.String())
}

func (s *sketch) renderHTTP(t *text) {
	h := s.http
	if !h.insecure && !h.followRedirects && !h.http2 && h.timeout == 0 && len(h.headers) == 0 && len(h.secretHeaders) == 0 {
		return
	}
	t.line(0, "http:", "")
	if h.timeout > 0 {
		t.line(1, "timeout: "+duration(h.timeout), "")
	}
	if h.http2 {
		t.line(1, "http2: true", "")
	}
	if h.insecure {
		t.line(1, "insecure: true", "TLS certificates are not verified")
	}
	if h.followRedirects {
		t.line(1, "follow_redirects: true", "")
	}
	if len(h.headers) > 0 {
		t.line(1, "headers:", "sent with every request")
		for _, hd := range h.headers {
			t.line(2, quote(hd.name)+": "+quote(hd.value), hd.comment)
		}
	}
	if len(h.secretHeaders) > 0 {
		names := make([]string, len(h.secretHeaders))
		for i, n := range h.secretHeaders {
			names[i] = quote(n)
		}
		t.line(1, "secret_headers: ["+strings.Join(names, ", ")+"]", "never written out, as Authorization and Cookie are not")
	}
}

// renderStep writes a request as an item of a flow (or of the login).
func (s *sketch) renderStep(t *text, level int, r *request) {
	t.comment(level, r.comment)
	if r.name != "" {
		t.line(level, "- name: "+quote(r.name), "")
		s.renderRequest(t, level+1, withoutComment(r))
		return
	}
	// The first key goes on the item's line.
	var sub text
	s.renderRequest(&sub, 0, withoutComment(r))
	for i, l := range strings.SplitAfter(strings.TrimSuffix(sub.b.String(), "\n"), "\n") {
		l = strings.TrimSuffix(l, "\n")
		if i == 0 {
			t.line(level, "- "+l, "")
		} else {
			t.line(level+1, l, "")
		}
	}
}

func withoutComment(r *request) *request {
	c := *r
	c.comment = ""
	return &c
}

// renderRequest writes a request's keys: request, expect, extract.
func (s *sketch) renderRequest(t *text, level int, r *request) {
	t.comment(level, r.comment)
	t.line(level, "request:", "")
	if r.method != "" && r.method != "GET" {
		t.line(level+1, "method: "+quote(r.method), "")
	}
	t.line(level+1, "url: "+quote(r.url), "")
	if len(r.headers) > 0 {
		t.line(level+1, "headers:", "")
		for _, h := range r.headers {
			t.line(level+2, quote(h.name)+": "+quote(h.value), h.comment)
		}
	}
	switch {
	case r.json != nil:
		if r.json.kind == jobject || r.json.kind == jarray {
			if len(r.json.items) == 0 {
				t.line(level+1, "json: "+emptyJSON(r.json), "")
			} else {
				t.line(level+1, "json:", "")
				writeJSON(t, level+2, r.json)
			}
		} else {
			t.line(level+1, "json: "+jsonScalar(r.json), "")
		}
	case r.bodyFile != "":
		t.line(level+1, "body_file: "+quote(r.bodyFile), "sent as it is, from the plan's folder")
	case r.body != "":
		t.line(level+1, "body: "+quote(r.body), "")
	}
	if len(r.status) > 0 {
		t.line(level, "expect: {status: "+flowList(r.status)+"}", "")
	}
	if len(r.extract) > 0 {
		parts := make([]string, len(r.extract))
		for i, e := range r.extract {
			parts[i] = quote(e.name) + ": {" + e.kind + ": " + quote(e.source) + "}"
		}
		t.line(level, "extract: {"+strings.Join(parts, ", ")+"}", "")
	}
}

func emptyJSON(v *jvalue) string {
	if v.kind == jobject {
		return "{}"
	}
	return "[]"
}

// jsonScalar writes a JSON scalar as a YAML scalar of the same value.
func jsonScalar(v *jvalue) string {
	switch v.kind {
	case jnull:
		return "null"
	case jbool, jnumber:
		return v.text
	}
	if v.tmpl {
		return quote(v.text)
	}
	return quote(lit(v.text))
}

// writeJSON writes an object's or an array's members in block style.
func writeJSON(t *text, level int, v *jvalue) {
	for i, item := range v.items {
		lead := "- "
		if v.kind == jobject {
			lead = quote(v.keys[i]) + ":"
		}
		switch {
		case (item.kind == jobject || item.kind == jarray) && len(item.items) == 0:
			t.line(level, strings.TrimSuffix(lead, " ")+" "+emptyJSON(item), "")
		case item.kind == jobject || item.kind == jarray:
			if v.kind == jobject {
				t.line(level, lead, "")
				writeJSON(t, level+1, item)
				continue
			}
			// An item of a list: its first member on the dash's line.
			var sub text
			writeJSON(&sub, 0, item)
			for j, l := range strings.Split(strings.TrimSuffix(sub.b.String(), "\n"), "\n") {
				if j == 0 {
					t.line(level, "- "+l, "")
				} else {
					t.line(level+1, l, "")
				}
			}
		default:
			t.line(level, strings.TrimSuffix(lead, " ")+" "+jsonScalar(item), "")
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func were(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func their(n int) string {
	if n == 1 {
		return "its"
	}
	return "each"
}
