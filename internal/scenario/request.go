package scenario

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/inputfile"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// request is one compiled request with its checks and extractions.
type request struct {
	name    string
	method  string
	url     text
	headers []header
	body    text
	json    *jsonBody
	expect  []int
	limited []int
	checks  checks
	extract []extractor
	capture bool               // the body is needed by a check or an extraction
	static  *transport.Request // the whole request when nothing in it is templated
	ids     []int              // indexes into headers of id headers watched for repeats
	idNames []string           // their sources, as reported
}

// watchIDs marks the id headers whose values may repeat: those not made
// unique by uuid or seq (unique lists the vars that are), in d.
func (r *request) watchIDs(unique []string, d *ids) {
	for i, h := range r.headers {
		if slices.Contains(idHeaders, strings.ToLower(h.name)) && !uniqueByConstruction(h.value.s, unique) {
			r.ids = append(r.ids, i)
			r.idNames = append(r.idNames, "header "+h.name)
			d.hideIfData("header "+h.name, h.value.s)
		}
	}
}

type header struct {
	name  string
	value text
}

func compileRequest(p *plan.Plan, ts *templates, where string, name string, r *plan.Request, e *plan.Expect, x map[string]plan.Extract) (*request, error) {
	cr := &request{name: name, method: r.Method, expect: e.Status, limited: p.Limited}
	var err error
	if cr.url, err = ts.text(where+".request.url", p.RequestURL(r)); err != nil {
		return nil, err
	}
	for _, h := range p.RequestHeaders(r) {
		t, err := ts.text(where+".request.headers."+h[0], h[1])
		if err != nil {
			return nil, err
		}
		cr.headers = append(cr.headers, header{name: h[0], value: t})
	}
	switch {
	case r.JSON != nil:
		if cr.json, err = compileJSON(ts, where+".request.json", r.JSON); err != nil {
			return nil, err
		}
	case r.BodyFile != "":
		// Its bytes as they are: a body_file is no template.
		data, err := inputfile.Read(context.Background(), p.BodyPath(r), plan.MaxBodyFileBytes)
		if err != nil {
			return nil, fmt.Errorf("%s.request.body_file: %w", where, err)
		}
		cr.body = text{s: string(data), id: -1}
	default:
		if cr.body, err = ts.text(where+".request.body", r.Body); err != nil {
			return nil, err
		}
	}
	if cr.checks, err = compileChecks(e); err != nil {
		return nil, fmt.Errorf("%s.expect: %w", where, err)
	}
	names := make([]string, 0, len(x))
	for n := range x {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ex, err := compileExtractor(n, x[n])
		if err != nil {
			return nil, fmt.Errorf("%s.extract.%s: %w", where, n, err)
		}
		cr.extract = append(cr.extract, ex)
	}
	cr.capture = cr.checks.needBody() || slices.ContainsFunc(cr.extract, func(e extractor) bool { return e.needBody() })
	cr.static = cr.buildStatic()
	return cr, nil
}

// buildStatic returns the transport request when nothing is templated.
func (r *request) buildStatic() *transport.Request {
	if !r.url.static() || !r.body.static() || (r.json != nil && !r.json.isStatic()) {
		return nil
	}
	tr := &transport.Request{
		Static: true, Capture: r.capture, Method: r.method, URL: r.url.s,
		Expect: r.expect, Limited: r.limited,
	}
	for _, h := range r.headers {
		if !h.value.static() {
			return nil
		}
		tr.Header = append(tr.Header, [2]string{h.name, h.value.s})
	}
	switch {
	case r.json != nil && len(r.json.parts) == 1:
		tr.Body = r.json.parts[0].raw
	case r.body.s != "":
		tr.Body = []byte(r.body.s)
	}
	return tr
}

// build returns the transport request for this use: the static one when
// nothing varies, else one rendered into the VU's reused request.
func (v *VU) build(r *request) (*transport.Request, error) {
	if r.static != nil && !v.jar.active() {
		return r.static, nil
	}
	tr := &v.req
	*tr = transport.Request{
		Capture: r.capture, Method: r.method, Expect: r.expect, Limited: r.limited,
		Header: tr.Header[:0], Body: tr.Body[:0],
	}
	var err error
	if tr.URL, err = v.renderString(r.url); err != nil {
		return nil, err
	}
	for _, h := range r.headers {
		val, err := v.renderString(h.value)
		if err == nil && !h.value.static() {
			err = v.set.refuse(headerSafe(h.name, val))
		}
		if err != nil {
			return nil, err
		}
		tr.Header = append(tr.Header, [2]string{h.name, val})
	}
	if c := v.jar.header(tr.URL); c != "" {
		if err := v.set.refuse(headerSafe("Cookie", c)); err != nil {
			return nil, err
		}
		tr.Header = append(tr.Header, [2]string{"Cookie", c})
	}
	switch {
	case r.json != nil:
		tr.Body, err = v.renderJSON(tr.Body, r.json)
	case r.body.s != "":
		tr.Body, err = v.render(tr.Body, r.body)
	default:
		tr.Body = nil
	}
	return tr, err
}

// headerSafe refuses a header whose name or value holds a CR, LF or NUL:
// sent as it is, it would end the header early and inject others. The plan
// refuses such values written in it; a rendered one (a value extracted
// from a response, or read from a data file) is checked here.
func headerSafe(name, value string) error {
	if strings.ContainsAny(name, "\r\n\x00") || strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("header %s: its value holds a CR, LF or NUL, which would inject headers: not sent", name)
	}
	return nil
}

// extractor takes one value out of a response.
type extractor struct {
	name string
	from string // "json", "header", "cookie" or "regex"
	arg  string
	re   *regexp.Regexp
}

func compileExtractor(name string, x plan.Extract) (extractor, error) {
	switch {
	case x.JSON != "":
		return extractor{name: name, from: "json", arg: x.JSON}, nil
	case x.Header != "":
		return extractor{name: name, from: "header", arg: x.Header}, nil
	case x.Cookie != "":
		return extractor{name: name, from: "cookie", arg: x.Cookie}, nil
	case x.Regex != "":
		re, err := regexp.Compile(x.Regex)
		return extractor{name: name, from: "regex", arg: x.Regex, re: re}, err
	}
	return extractor{}, fmt.Errorf("say where the value is: json, header, cookie or regex")
}

func (e extractor) needBody() bool { return e.from == "json" || e.from == "regex" }
