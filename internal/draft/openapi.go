package draft

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ceiling-dev/ceiling/internal/inputfile"
)

// MaxOpenAPIBytes bounds an OpenAPI document (and each file it refers
// to).
const MaxOpenAPIBytes = 32 << 20

// operation is one operation of the document, in the order a draft
// writes them.
type operation struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
	line         int
}

// name is the operation's name in the plan: its operationId, else
// "METHOD /path".
func (o *operation) name() string {
	if o.op.OperationID != "" {
		return o.op.OperationID
	}
	return o.method + " " + o.path
}

// FromOpenAPI drafts a plan from an OpenAPI 3.0 or 3.1 document: one
// scenario per operation, safe methods only unless o.Unsafe. It reads the
// file at path and the local files its $refs name, nothing else.
func FromOpenAPI(ctx context.Context, path string, o Options) (*Draft, error) {
	loader := &openapi3.Loader{Context: ctx, IncludeOrigin: true, IsExternalRefsAllowed: true, ReadFromURIFunc: readLocal(path)}
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.OpenAPI == "" || !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, fmt.Errorf("%s: not an OpenAPI 3 document (openapi: %q); convert a Swagger 2.0 one first", path, doc.OpenAPI)
	}
	s := newSketch(o)
	s.env.byName = true
	if err := doc.Validate(loader.Context, openapi3.DisableExamplesValidation()); err != nil {
		s.note("The document does not validate (%s); the draft goes by what it could read.", oneLine(err.Error()))
	}
	base, err := serverURL(doc, o.Target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.target = cmp(o.Target, base)
	if doc.Info != nil {
		s.name = doc.Info.Title
	}
	if s.name == "" {
		s.name = hostName(s.target)
	}
	ops := operations(doc)
	if len(ops) == 0 {
		return nil, fmt.Errorf("%s: no operations under paths", path)
	}
	d := &openapiDraft{s: s, doc: doc}
	login, err := d.login(ops, o.Login)
	if err != nil {
		return nil, err
	}
	d.scenarios(ops, login, o.Unsafe)
	if len(s.scenarios) == 0 {
		return nil, fmt.Errorf("%s: every operation is of an unsafe method (POST, PUT, PATCH, DELETE): --unsafe includes them", path)
	}
	if login == nil && d.needsBearer {
		if cand := loginCandidates(ops); len(cand) > 0 {
			s.note("Operations need a bearer token, read from the environment; if %s logs in, --login %s makes it the plan's login and its token theirs.", cand[0].method+" "+cand[0].path, cand[0].name())
		}
	}
	s.capScenarios("operations", "the first")
	uniqueNames(s.scenarios)
	title := ""
	if doc.Info != nil && doc.Info.Title != "" {
		title = fmt.Sprintf(" (%s, version %s)", doc.Info.Title, doc.Info.Version)
	}
	s.header = []string{fmt.Sprintf("A plan drafted by ceiling init from the OpenAPI document %s%s: one scenario per operation, as an open-model mix of equal weights.",
		filepath.Base(path), title), s.readIt()}
	return s.draft(), nil
}

// login makes the operation --login names (its operationId or "METHOD
// /path", given as name; none when name is empty) the plan's login,
// whose answer's token the other operations send, and returns it.
func (d *openapiDraft) login(ops []*operation, name string) (*operation, error) {
	if name == "" {
		return nil, nil
	}
	i := slices.IndexFunc(ops, func(op *operation) bool {
		return op.op.OperationID == name || strings.EqualFold(op.method+" "+op.path, name)
	})
	if i < 0 {
		return nil, fmt.Errorf("--login %s: no such operation (give its operationId or \"METHOD /path\")", name)
	}
	login := ops[i]
	r := d.request(login)
	token, source, err := tokenProperty(login.op)
	if err != nil {
		return nil, fmt.Errorf("--login %s: %w", name, err)
	}
	r.extract = []extraction{{name: token, kind: "json", source: source}}
	r.comment = fmt.Sprintf("%s: its answer's %s is the bearer token of the operations that need one", login.name(), source)
	d.token = token
	d.s.login = []*request{r}
	return login, nil
}

// scenarios adds a scenario of each operation but the login, of a safe
// method unless unsafe, and notes what it left out and the scenarios that
// expect any 2xx.
func (d *openapiDraft) scenarios(ops []*operation, login *operation, unsafe bool) {
	s := d.s
	var left []string
	for _, op := range ops {
		if op == login {
			continue
		}
		if !safe(op.method) && !unsafe {
			left = append(left, op.name())
			continue
		}
		r := d.request(op)
		sc := &scenario{name: op.name(), steps: []*request{r}}
		if op.op.Summary != "" {
			sc.comment = op.method + " " + op.path + ": " + op.op.Summary
		} else if op.op.OperationID != "" {
			sc.comment = op.method + " " + op.path
		}
		s.scenarios = append(s.scenarios, sc)
	}
	if n := len(d.guessed); n > 0 {
		if n == 1 {
			s.note("1 operation lists no 2xx answer (%s): its scenario expects any 2xx, a guess.", d.guessed[0])
		} else {
			s.note("%d operations list no 2xx answer (%s): their scenarios expect any 2xx, a guess.", n, strings.Join(d.guessed, ", "))
		}
	}
	if len(left) > 0 {
		s.note("Left out %d operation%s of unsafe methods (--unsafe includes them): %s.", len(left), plural(len(left)), strings.Join(left, ", "))
	}
}

// readLocal reads the document at doc and the files its $refs name:
// local files only, never a URL, each of at most MaxOpenAPIBytes, until
// the loader's context ends. A $ref's file is read by the rule of a curl
// command's @file: a regular file in the document's folder or the
// working directory, not of /proc, /dev or /sys.
func readLocal(doc string) openapi3.ReadFromURIFunc {
	docAbs, _ := filepath.Abs(doc)
	return func(l *openapi3.Loader, u *url.URL) ([]byte, error) {
		if u.Scheme != "" && u.Scheme != "file" || u.Host != "" {
			return nil, fmt.Errorf("%s: ceiling init reads local files only, not URLs: download it and refer to the file", u)
		}
		path := filepath.FromSlash(u.Path)
		if abs, _ := filepath.Abs(path); abs != docAbs {
			real, err := allowedFile(path, filepath.Dir(docAbs), "the document's folder")
			if err != nil {
				return nil, fmt.Errorf("$ref %s: %w", u.Path, err)
			}
			path = real
		}
		return inputfile.Read(l.Context, path, MaxOpenAPIBytes)
	}
}

// serverURL is the base URL of the document's first server with an
// absolute URL, its variables at their defaults.
func serverURL(doc *openapi3.T, target string) (string, error) {
	for _, srv := range doc.Servers {
		raw := srv.URL
		for name, v := range srv.Variables {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		return strings.TrimRight(raw, "/"), nil
	}
	if target != "" {
		return target, nil
	}
	return "", errors.New("no server with an absolute http(s) URL: say where the API is with --target URL")
}

// pathParam is a parameter in a path template: {id}.
var pathParam = regexp.MustCompile(`\{[^{}/]+\}`)

// methodOrder is the order of methods in a draft: reads first.
var methodOrder = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// safe reports whether a method only reads.
func safe(m string) bool { return m == "GET" || m == "HEAD" }

// operations lists the document's operations: GET first, then by method,
// each method's in document order.
func operations(doc *openapi3.T) []*operation {
	var ops []*operation
	if doc.Paths == nil {
		return nil
	}
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			m = strings.ToUpper(m)
			if !slices.Contains(methodOrder, m) {
				continue // OPTIONS, TRACE, CONNECT
			}
			line := 0
			if op.Origin != nil && op.Origin.Key != nil {
				line = op.Origin.Key.Line
			}
			ops = append(ops, &operation{method: m, path: p, item: item, op: op, line: line})
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		a, b := slices.Index(methodOrder, ops[i].method), slices.Index(methodOrder, ops[j].method)
		if a != b {
			return a < b
		}
		if ops[i].line != ops[j].line {
			return ops[i].line < ops[j].line
		}
		return ops[i].path < ops[j].path
	})
	return ops
}

// openapiDraft is the state of one document's draft.
type openapiDraft struct {
	s           *sketch
	doc         *openapi3.T
	token       string // the login's extracted token, "" without --login
	needsBearer bool   // some operation reads a bearer token from the environment
	// guessed are the operations whose document lists no success answer:
	// their scenarios expect any 2xx, a guess.
	guessed []string
}

// request builds an operation's request.
func (d *openapiDraft) request(op *operation) *request {
	s := d.s
	r := &request{method: op.method}
	params := parameters(op)
	// A path parameter the operation does not declare has no value.
	path := pathParam.ReplaceAllStringFunc(op.path, func(m string) string {
		name := m[1 : len(m)-1]
		if slices.ContainsFunc(params, func(p *openapi3.Parameter) bool { return p.In == openapi3.ParameterInPath && p.Name == name }) {
			return m
		}
		return s.todo("path parameter " + name)
	})
	var query []string
	var cookies []string
	for _, p := range params {
		where := fmt.Sprintf("%s parameter %s of %s", p.In, p.Name, op.name())
		switch p.In {
		case openapi3.ParameterInPath:
			path = strings.ReplaceAll(path, "{"+p.Name+"}", d.pathValue(p, where))
		case openapi3.ParameterInQuery:
			if q, ok := d.queryPair(p, where); ok {
				query = append(query, q)
			}
		case openapi3.ParameterInHeader:
			if h, ok := d.headerParam(p, where); ok {
				r.headers = append(r.headers, h)
			}
		case openapi3.ParameterInCookie:
			if c, ok := d.cookiePair(p, where); ok {
				cookies = append(cookies, c)
			}
		}
	}
	r.url = path // its parameters' values are templates or lit() already
	if len(query) > 0 {
		r.url += "?" + strings.Join(query, "&")
	}
	d.security(op, r, &cookies)
	if len(cookies) > 0 {
		r.headers = append(r.headers, header{name: "Cookie", value: strings.Join(cookies, "; ")})
	}
	if rb := op.op.RequestBody; rb != nil && rb.Value != nil {
		d.body(op, rb.Value, r)
	}
	r.status = successes(op.op)
	if len(r.status) == 0 {
		r.comment = d.guess(op)
	}
	return r
}

// pathValue is a path parameter's text in the URL (where says which it
// is): its value, read from the environment if it is a secret, or a TODO.
func (d *openapiDraft) pathValue(p *openapi3.Parameter, where string) string {
	v, ok := paramValue(p)
	switch {
	case ok:
		return lit(url.PathEscape(v))
	case d.s.secretName(p.Name):
		return fmt.Sprintf("{{env %q | urlquery}}", d.s.env.ref(p.Name, "the "+where, ""))
	}
	return d.s.todo(fmt.Sprintf("path parameter %s%s", p.Name, typeOf(p.Schema)))
}

// queryPair is a query parameter's name=value in the URL (where says
// which it is): its value, read from the environment if it is a secret,
// or a TODO if it is required; none for an optional one without a value.
func (d *openapiDraft) queryPair(p *openapi3.Parameter, where string) (string, bool) {
	s := d.s
	v, ok := paramValue(p)
	switch {
	case s.secretName(p.Name) && (ok || p.Required):
		return url.QueryEscape(p.Name) + fmt.Sprintf("={{env %q | urlquery}}", s.env.ref(p.Name, "the "+where, v)), true
	case ok:
		return lit(url.QueryEscape(p.Name) + "=" + url.QueryEscape(v)), true
	case p.Required:
		return lit(url.QueryEscape(p.Name)) + "=" + s.todo(fmt.Sprintf("query parameter %s%s", p.Name, typeOf(p.Schema))), true
	}
	return "", false
}

// headerParam is a header parameter's header (where says which it is):
// a new key for each request if it is an idempotency key, its value,
// read from the environment if it is a secret, or a TODO if it is
// required; none for an optional one without a value.
func (d *openapiDraft) headerParam(p *openapi3.Parameter, where string) (header, bool) {
	s := d.s
	v, ok := paramValue(p)
	switch {
	case isIdempotency(p.Name):
		return header{name: p.Name, value: "{{uuid}}", comment: "a new key for each request"}, true
	case s.secretHeader(p.Name) && (ok || p.Required):
		return header{name: p.Name, value: envTemplate(s.env.ref(p.Name, "the "+where, v))}, true
	case ok:
		return header{name: p.Name, value: lit(v)}, true
	case p.Required:
		return header{name: p.Name, value: s.todo(fmt.Sprintf("header %s%s", p.Name, typeOf(p.Schema)))}, true
	}
	return header{}, false
}

// cookiePair is a cookie parameter's name=value in the Cookie header
// (where says which it is): its value, read from the environment if it is
// a secret, or a TODO if it is required; none for an optional one without
// a value.
func (d *openapiDraft) cookiePair(p *openapi3.Parameter, where string) (string, bool) {
	s := d.s
	v, ok := paramValue(p)
	switch {
	case s.secretName(p.Name) && (ok || p.Required):
		return p.Name + "=" + envTemplate(s.env.ref(p.Name, "the "+where, v)), true
	case ok:
		return lit(p.Name + "=" + v), true
	case p.Required:
		return lit(p.Name) + "=" + s.todo("cookie "+p.Name), true
	}
	return "", false
}

// guess says why an operation's scenario expects any 2xx, its document
// listing no success answer (none, only a default, only failures), and
// notes the operation; "" when the document lists none at all.
func (d *openapiDraft) guess(op *operation) string {
	if op.op.Responses == nil || op.op.Responses.Len() == 0 {
		return ""
	}
	var codes []string
	for code := range op.op.Responses.Map() {
		if code != "default" {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes)
	d.guessed = append(d.guessed, op.name())
	if len(codes) == 0 {
		return fmt.Sprintf("The document lists only a default answer for %s: any 2xx is expected, a guess; check what it answers.", op.name())
	}
	return fmt.Sprintf("The document lists no 2xx answer for %s (only %s): any 2xx is expected, a guess; check what it answers.", op.name(), strings.Join(codes, ", "))
}

// parameters are an operation's parameters: the path item's, overridden
// by the operation's of the same name and place.
func parameters(op *operation) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	add := func(ps openapi3.Parameters) {
		for _, ref := range ps {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			if i := slices.IndexFunc(out, func(q *openapi3.Parameter) bool { return q.Name == p.Name && q.In == p.In }); i >= 0 {
				out[i] = p
				continue
			}
			out = append(out, p)
		}
	}
	add(op.item.Parameters)
	add(op.op.Parameters)
	return out
}

// paramValue is a parameter's value from its example, its examples, or
// its schema's example, default or first enum value.
func paramValue(p *openapi3.Parameter) (string, bool) {
	if p.Example != nil {
		return scalarText(p.Example)
	}
	if v, ok := firstExample(p.Examples); ok {
		return scalarText(v)
	}
	for _, mt := range p.Content {
		if mt != nil && mt.Example != nil {
			return scalarText(mt.Example)
		}
	}
	if p.Schema != nil && p.Schema.Value != nil {
		if v, ok := schemaValue(p.Schema.Value); ok {
			return scalarText(v)
		}
	}
	return "", false
}

// firstExample is the value of the first (by name) of named examples.
func firstExample(exs openapi3.Examples) (any, bool) {
	names := make([]string, 0, len(exs))
	for n := range exs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if ex := exs[n]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
			return ex.Value.Value, true
		}
	}
	return nil, false
}

// schemaValue is a schema's own value: its example (or first of its
// examples), default, const or first enum value.
func schemaValue(sc *openapi3.Schema) (any, bool) {
	switch {
	case sc.Example != nil:
		return sc.Example, true
	case len(sc.Examples) > 0:
		return sc.Examples[0], true
	case sc.Default != nil:
		return sc.Default, true
	case sc.Const != nil:
		return sc.Const, true
	case len(sc.Enum) > 0:
		return sc.Enum[0], true
	}
	return nil, false
}

// scalarText writes a parameter's value as it goes in a URL or header: a
// list as comma-separated values.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case []any:
		parts := make([]string, 0, len(x))
		for _, item := range x {
			s, ok := scalarText(item)
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), true
	case map[string]any:
		return "", false
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return fmt.Sprint(v), true
}

// typeOf says a schema's type for a TODO: " (integer)".
func typeOf(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil || ref.Value.Type == nil || len(ref.Value.Type.Slice()) == 0 {
		return ""
	}
	t := strings.Join(ref.Value.Type.Slice(), " or ")
	if f := ref.Value.Format; f != "" {
		t += ", " + f
	}
	return " (" + t + ")"
}

// security adds what an operation's security requirement needs: its
// first alternative's credentials, read from the environment, or the
// login's token.
func (d *openapiDraft) security(op *operation, r *request, cookies *[]string) {
	reqs := d.doc.Security
	if op.op.Security != nil {
		reqs = *op.op.Security
	}
	if len(reqs) == 0 || len(reqs[0]) == 0 || d.doc.Components == nil {
		return
	}
	names := make([]string, 0, len(reqs[0]))
	for n := range reqs[0] {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ref := d.doc.Components.SecuritySchemes[n]
		if ref == nil || ref.Value == nil {
			continue
		}
		sc := ref.Value
		switch {
		case sc.Type == "http" && strings.EqualFold(sc.Scheme, "basic"):
			env := d.s.env.ref(n, fmt.Sprintf("user:password in base64 for %s (HTTP Basic)", n), "")
			r.headers = append(r.headers, header{name: "Authorization", value: "Basic " + envTemplate(env)})
		case sc.Type == "http" && !strings.EqualFold(sc.Scheme, "bearer"):
			env := d.s.env.ref(n, fmt.Sprintf("the credentials of %s (HTTP %s)", n, sc.Scheme), "")
			r.headers = append(r.headers, header{name: "Authorization", value: sc.Scheme + " " + envTemplate(env)})
		case sc.Type == "http" || sc.Type == "oauth2" || sc.Type == "openIdConnect":
			r.headers = append(r.headers, d.bearer(n, sc))
		case sc.Type == "apiKey":
			d.apiKey(n, sc, r, cookies)
		}
	}
}

// bearer is the Authorization header of the security scheme sc, named n,
// that wants a bearer token: the login's token, or else one read from the
// environment.
func (d *openapiDraft) bearer(n string, sc *openapi3.SecurityScheme) header {
	if d.token != "" {
		return header{name: "Authorization", value: "Bearer {{." + d.token + "}}", comment: "the login's token"}
	}
	d.needsBearer = true
	what := fmt.Sprintf("a bearer token for %s", n)
	if sc.Type == "oauth2" && sc.Flows != nil {
		if f := firstFlow(sc.Flows); f != nil && f.TokenURL != "" {
			what += " (an access token from " + f.TokenURL + ")"
		}
	}
	env := d.s.env.ref(n, what, "")
	return header{name: "Authorization", value: "Bearer " + envTemplate(env)}
}

// apiKey adds the API key of the security scheme sc, named n, read from
// the environment, where it goes: a header (which the plan then keeps
// secret), a query parameter or a cookie.
func (d *openapiDraft) apiKey(n string, sc *openapi3.SecurityScheme, r *request, cookies *[]string) {
	switch sc.In {
	case "header":
		env := d.s.env.ref(sc.Name, fmt.Sprintf("the API key of %s (header %s)", n, sc.Name), "")
		r.headers = append(r.headers, header{name: sc.Name, value: envTemplate(env)})
		if !d.s.secretHeader(sc.Name) {
			d.s.http.secretHeaders = appendNew(d.s.http.secretHeaders, sc.Name)
		}
	case "query":
		env := d.s.env.ref(sc.Name, fmt.Sprintf("the API key of %s (query parameter %s)", n, sc.Name), "")
		sep := "?"
		if strings.Contains(r.url, "?") {
			sep = "&"
		}
		r.url += sep + url.QueryEscape(sc.Name) + fmt.Sprintf("={{env %q | urlquery}}", env)
	case "cookie":
		env := d.s.env.ref(sc.Name, fmt.Sprintf("the API key of %s (cookie %s)", n, sc.Name), "")
		*cookies = append(*cookies, sc.Name+"="+envTemplate(env))
	}
}

func appendNew(list []string, s string) []string {
	if slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) }) {
		return list
	}
	return append(list, s)
}

func firstFlow(f *openapi3.OAuthFlows) *openapi3.OAuthFlow {
	for _, fl := range []*openapi3.OAuthFlow{f.ClientCredentials, f.Password, f.AuthorizationCode, f.Implicit} {
		if fl != nil {
			return fl
		}
	}
	return nil
}

// body sets a request's body from the operation's request body: its
// example, else a value built from its schema, JSON preferred.
func (d *openapiDraft) body(op *operation, rb *openapi3.RequestBody, r *request) {
	s := d.s
	types := make([]string, 0, len(rb.Content))
	for t := range rb.Content {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		return bodyRank(types[i]) < bodyRank(types[j]) || bodyRank(types[i]) == bodyRank(types[j]) && types[i] < types[j]
	})
	if len(types) == 0 {
		return
	}
	ct, mt := types[0], rb.Content[types[0]]
	where := "the body of " + op.name()
	var v any
	ok := false
	if mt != nil {
		switch {
		case mt.Example != nil:
			v, ok = mt.Example, true
		default:
			v, ok = firstExample(mt.Examples)
		}
	}
	lower := strings.ToLower(ct)
	switch {
	case strings.Contains(lower, "json"):
		var jv *jvalue
		if ok {
			jv = toJValue(v)
		} else if mt != nil && mt.Schema != nil {
			jv = d.synth(mt.Schema, "", 0, "body")
		}
		if jv == nil {
			r.body = s.todo("the request body (" + ct + ")")
			r.headers = append(r.headers, header{name: "Content-Type", value: lit(ct)})
			return
		}
		s.jsonSecrets(jv, where)
		r.json = jv
		if lower != "application/json" {
			r.headers = append(r.headers, header{name: "Content-Type", value: lit(ct)})
		}
	case lower == "application/x-www-form-urlencoded":
		var jv *jvalue
		if ok {
			jv = toJValue(v)
		} else if mt != nil && mt.Schema != nil {
			jv = d.synth(mt.Schema, "", 0, "field")
		}
		if jv == nil || jv.kind != jobject {
			r.body = s.todo("the form body")
		} else {
			var parts []string
			for i, k := range jv.keys {
				item := jv.items[i]
				switch {
				case item.tmpl:
					parts = append(parts, url.QueryEscape(k)+"="+item.text)
				case s.secretName(k):
					parts = append(parts, url.QueryEscape(k)+fmt.Sprintf("={{env %q | urlquery}}", s.env.ref(k, fmt.Sprintf("the value of %q in %s", k, where), item.text)))
				default:
					parts = append(parts, lit(url.QueryEscape(k)+"="+url.QueryEscape(item.text)))
				}
			}
			r.body = strings.Join(parts, "&")
		}
		r.headers = append(r.headers, header{name: "Content-Type", value: lit(ct)})
	default:
		if text, isText := v.(string); ok && isText {
			r.body = lit(text)
		} else {
			r.body = s.todo("the request body (" + ct + ")")
		}
		r.headers = append(r.headers, header{name: "Content-Type", value: lit(ct)})
	}
}

// bodyRank orders a request body's media types: JSON, a form, text,
// anything else.
func bodyRank(t string) int {
	t = strings.ToLower(t)
	switch {
	case t == "application/json":
		return 0
	case strings.Contains(t, "json"):
		return 1
	case t == "application/x-www-form-urlencoded":
		return 2
	case strings.HasPrefix(t, "text/"):
		return 3
	}
	return 4
}

// maxSynthDepth bounds the nesting of a value built from a schema (and so
// a schema that refers to itself).
const maxSynthDepth = 8

// synth builds a value from a schema: its own value where it has one;
// for an object, its properties that have one and its required ones
// (TODO stubs where they have none); for a list, one item. Fields whose
// names are secrets are read from the environment instead. nil: nothing
// to write (an optional value without example).
func (d *openapiDraft) synth(ref *openapi3.SchemaRef, name string, depth int, kind string) *jvalue {
	if ref == nil || ref.Value == nil {
		return nil
	}
	sc := ref.Value
	if v, ok := schemaValue(sc); ok {
		return toJValue(v)
	}
	if depth >= maxSynthDepth {
		return nil
	}
	switch {
	case len(sc.AllOf) > 0:
		merged := &jvalue{kind: jobject}
		for _, part := range sc.AllOf {
			if v := d.synth(part, name, depth+1, kind); v != nil && v.kind == jobject {
				for i, k := range v.keys {
					merged.set(k, v.items[i])
				}
			}
		}
		return merged
	case len(sc.OneOf) > 0:
		return d.synth(sc.OneOf[0], name, depth+1, kind)
	case len(sc.AnyOf) > 0:
		return d.synth(sc.AnyOf[0], name, depth+1, kind)
	case sc.Type.Is("object") || len(sc.Properties) > 0:
		obj := &jvalue{kind: jobject}
		for _, k := range propertyOrder(sc) {
			prop := sc.Properties[k]
			required := slices.Contains(sc.Required, k)
			if v := d.synth(prop, k, depth+1, kind); v != nil {
				obj.set(k, v)
				continue
			}
			switch {
			case !required:
			case d.s.secretName(k):
				obj.set(k, tmplStr(envTemplate(d.s.env.ref(k, fmt.Sprintf("the value of %q in a request body", k), ""))))
			case prop != nil && prop.Value != nil && prop.Value.Type.Is("array"):
				// A required list holds an item at least: one to fill in.
				obj.set(k, &jvalue{kind: jarray, items: []*jvalue{tmplStr(d.s.todo(fmt.Sprintf("%s %s[0]%s", kind, k, typeOf(prop.Value.Items))))}})
			default:
				obj.set(k, tmplStr(d.s.todo(fmt.Sprintf("%s %s%s", kind, k, typeOf(prop)))))
			}
		}
		if len(obj.keys) == 0 && depth > 0 {
			return nil // nothing known of it: an empty object says nothing true
		}
		return obj
	case sc.Type.Is("array"):
		// One item, when one can be drafted; else nothing (a required
		// list gets an item to fill in from its object).
		if item := d.synth(sc.Items, name, depth+1, kind); item != nil {
			return &jvalue{kind: jarray, items: []*jvalue{item}}
		}
	}
	return nil
}

// propertyOrder lists an object schema's properties in document order
// (by their line), else by name.
func propertyOrder(sc *openapi3.Schema) []string {
	keys := make([]string, 0, len(sc.Properties))
	for k := range sc.Properties {
		keys = append(keys, k)
	}
	line := func(k string) int {
		if p := sc.Properties[k]; p != nil && p.Value != nil && p.Value.Origin != nil && p.Value.Origin.Key != nil && p.Ref == "" {
			return p.Value.Origin.Key.Line
		}
		return 0
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := line(keys[i]), line(keys[j]); a != b && a > 0 && b > 0 {
			return a < b
		}
		return keys[i] < keys[j]
	})
	return keys
}

// toJValue converts a decoded example (maps, lists, scalars) to a JSON
// value, an object's keys sorted.
func toJValue(v any) *jvalue {
	switch x := v.(type) {
	case nil:
		return &jvalue{kind: jnull}
	case bool:
		return &jvalue{kind: jbool, text: strconv.FormatBool(x)}
	case float64:
		return &jvalue{kind: jnumber, text: strconv.FormatFloat(x, 'f', -1, 64)}
	case int:
		return &jvalue{kind: jnumber, text: strconv.Itoa(x)}
	case int64:
		return &jvalue{kind: jnumber, text: strconv.FormatInt(x, 10)}
	case uint64:
		return &jvalue{kind: jnumber, text: strconv.FormatUint(x, 10)}
	case string:
		return str(x)
	case []any:
		a := &jvalue{kind: jarray}
		for _, item := range x {
			a.items = append(a.items, toJValue(item))
		}
		return a
	case map[string]any:
		o := &jvalue{kind: jobject}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.set(k, toJValue(x[k]))
		}
		return o
	}
	return str(fmt.Sprint(v))
}

// successes are an operation's documented success statuses (2xx, else
// 3xx): what its scenario expects. None for a range (2XX) or default.
func successes(op *openapi3.Operation) []int {
	if op.Responses == nil {
		return nil
	}
	var ok, redirect []int
	for code := range op.Responses.Map() {
		n, err := strconv.Atoi(code)
		switch {
		case err != nil:
		case n >= 200 && n < 300:
			ok = append(ok, n)
		case n >= 300 && n < 400:
			redirect = append(redirect, n)
		}
	}
	if len(ok) == 0 {
		ok = redirect
	}
	slices.Sort(ok)
	return ok
}

// tokenNames are the names of a login answer's token, most likely first.
var tokenNames = []string{"access_token", "accessToken", "token", "id_token", "idToken", "jwt", "bearer"}

// tokenProperty finds the property of a login operation's JSON answer
// that holds its token: its extracted name and gjson path.
func tokenProperty(op *openapi3.Operation) (name, path string, err error) {
	codes := successes(op)
	for _, code := range codes {
		resp := op.Responses.Status(code)
		if resp == nil || resp.Value == nil {
			continue
		}
		for t, mt := range resp.Value.Content {
			if !strings.Contains(strings.ToLower(t), "json") || mt == nil || mt.Schema == nil {
				continue
			}
			if p := findToken(mt.Schema, "", 0); p != "" {
				last := p[strings.LastIndexByte(p, '.')+1:]
				return identifier(last), p, nil
			}
		}
	}
	return "", "", errors.New("its answer's JSON schema has no property that holds a token (access_token, token, jwt...)")
}

// findToken looks for a token property, preferring tokenNames and the
// shallowest, then any whose name says it is a secret.
func findToken(ref *openapi3.SchemaRef, prefix string, depth int) string {
	if ref == nil || ref.Value == nil || depth > 3 {
		return ""
	}
	props := ref.Value.Properties
	for _, n := range tokenNames {
		if _, ok := props[n]; ok {
			return join(prefix, gjsonKey(n))
		}
	}
	keys := propertyOrder(ref.Value)
	for _, k := range keys {
		if strings.Contains(strings.ToLower(k), "token") {
			return join(prefix, gjsonKey(k))
		}
	}
	for _, k := range keys {
		if p := findToken(props[k], join(prefix, gjsonKey(k)), depth+1); p != "" {
			return p
		}
	}
	return ""
}

// loginCandidates are operations that need no credentials and answer a
// token: likely logins.
func loginCandidates(ops []*operation) []*operation {
	var out []*operation
	for _, op := range ops {
		if op.op.Security == nil || len(*op.op.Security) > 0 && len((*op.op.Security)[0]) > 0 {
			continue
		}
		if _, _, err := tokenProperty(op.op); err == nil {
			out = append(out, op)
		}
	}
	return out
}
