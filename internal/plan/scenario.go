package plan

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultTagLimit is how many distinct values each tag key keeps when the
// plan does not say.
const DefaultTagLimit = 50

// reserved are the names templates give to what ceiling sets itself: the
// user's data row, the virtual user's number and the iteration's number.
// Vars and extracted values may not take them.
var reserved = []string{"user", "vu", "iteration"}

// fillRequestDefaults sets the defaults of the scenarios, their steps and
// the login steps.
func (p *Plan) fillRequestDefaults() {
	if p.TagLimit == 0 {
		p.TagLimit = DefaultTagLimit
	}
	for i := range p.Login {
		p.fillStep(&p.Login[i])
	}
	for i := range p.Scenarios {
		path := fmt.Sprintf("scenarios[%d]", i)
		s := &p.Scenarios[i]
		if s.Weight == 0 && !p.has(path+".weight") {
			s.Weight = 1
		}
		for j := range s.Steps {
			p.fillStep(&s.Steps[j])
		}
		if s.WebSocket != nil {
			fillWebSocket(s.WebSocket)
		}
		single := p.single(path, s)
		if single && s.Request.Method == "" {
			s.Request.Method = "GET"
		}
		if s.Name != "" {
			continue
		}
		switch {
		case single:
			s.Name = requestName(&s.Request)
		case len(s.Steps) > 0 && s.Steps[0].Request.Method != "":
			s.Name = requestName(&s.Steps[0].Request)
		case len(s.Steps) == 0 && s.WebSocket != nil && s.WebSocket.URL != "":
			s.Name = "ws " + s.WebSocket.URL
		}
	}
}

// fillStep sets a step's default method and name.
func (p *Plan) fillStep(st *Step) {
	if st.Request.Method == "" && hasRequest(&st.Request) {
		st.Request.Method = "GET"
	}
	if st.Name == "" && st.Request.Method != "" {
		st.Name = requestName(&st.Request)
	}
}

// requestName is a request's default name: "METHOD path".
func requestName(r *Request) string {
	return r.Method + " " + urlPath(r.URL)
}

// hasRequest reports whether a request has any field set. An empty one,
// such as a flow's "request: {}" (which is how a plan written out by
// yaml.Marshal reads), counts as absent.
func hasRequest(r *Request) bool {
	return r.URL != "" || r.Method != "" || r.Body != "" || r.JSON != nil || len(r.Headers) > 0
}

// single reports whether the scenario at path sends a single request: its
// request has a field set, or, without steps or websocket, the file wrote
// the request key (which then has a problem).
func (p *Plan) single(path string, s *Scenario) bool {
	return hasRequest(&s.Request) || len(s.Steps) == 0 && s.WebSocket == nil && p.has(path+".request")
}

// hasExpect reports whether any check is set.
func hasExpect(e *Expect) bool {
	return len(e.Status) > 0 || e.BodyContains != "" || e.BodyRegex != "" || len(e.JSON) > 0 || len(e.Header) > 0
}

// scenarios checks each scenario, and that there is one and the names are
// unique.
func (c *checker) scenarios() {
	if len(c.p.Scenarios) == 0 {
		c.add("scenarios", "want at least one scenario, e.g. [{request: {url: /}}]")
	}
	first := make(map[string]int, len(c.p.Scenarios))
	for i := range c.p.Scenarios {
		path := fmt.Sprintf("scenarios[%d]", i)
		s := &c.p.Scenarios[i]
		c.scenario(path, s)
		if s.Name == "" {
			continue
		}
		j, dup := first[s.Name]
		if !dup {
			first[s.Name] = i
			continue
		}
		other := fmt.Sprintf("scenarios[%d]", j)
		if w := c.p.Where(other + ".name"); w != "" && w != c.p.File {
			other += " (" + w + ")"
		}
		hint := ""
		if !c.p.has(path + ".name") {
			hint = "; give one a name"
		}
		c.add(path+".name", "scenario name %q is already used by %s: names must be unique%s", s.Name, other, hint)
	}
}

// control checks that control names one of the scenarios.
func (c *checker) control() {
	name := c.p.Control
	if name == "" {
		return
	}
	names := make([]string, 0, len(c.p.Scenarios))
	for _, s := range c.p.Scenarios {
		if s.Name == name {
			return
		}
		names = append(names, strconv.Quote(s.Name))
	}
	c.add("control", "%q names no scenario (scenarios: %s)", name, strings.Join(names, ", "))
}

// scenario checks one scenario: a single request, a flow of steps or a
// WebSocket scenario, its weight and its tags.
func (c *checker) scenario(path string, s *Scenario) {
	switch {
	case s.Weight == 0:
		c.add(path+".weight", "weight 0 would never run: remove the scenario instead")
	case math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.Weight < 0:
		c.add(path+".weight", "want a positive, finite weight such as 30, not %v", s.Weight)
	}
	flow, single, ws := c.kind(path, s)
	login := c.loginNames(len(c.p.Login))
	if single {
		c.scope.within(login, func() { c.request(path+".request", &s.Request) })
	}
	if ws {
		c.scope.within(login, func() { c.webSocket(path+".websocket", s.WebSocket) })
	}
	switch {
	case flow:
		if hasExpect(&s.Expect) {
			c.add(path+".expect", "a flow checks its steps' responses: move expect onto the step it is about")
		}
		if len(s.Extract) > 0 {
			c.add(path+".extract", "a flow extracts from its steps' responses: move extract onto the step it is about")
		}
		visible := slices.Clone(login)
		for i := range s.Steps {
			c.scope.within(visible, func() { c.step(fmt.Sprintf("%s.steps[%d]", path, i), &s.Steps[i]) })
			visible = append(visible, extractNames(s.Steps[i].Extract)...)
		}
	case ws && !single:
		if hasExpect(&s.Expect) {
			c.add(path+".expect", "a websocket scenario has no response to check: a frame is ok when its ack arrives within ack_timeout")
		}
		if len(s.Extract) > 0 {
			c.add(path+".extract", "a websocket scenario has no response to extract from: remove extract")
		}
	default:
		c.expect(path+".expect", &s.Expect)
		c.extract(path+".extract", s.Extract)
	}
	if s.Delivery != nil {
		// Rendered once the iteration is over: everything it extracted is set.
		after := slices.Clone(login)
		after = append(after, extractNames(s.Extract)...)
		for i := range s.Steps {
			after = append(after, extractNames(s.Steps[i].Extract)...)
		}
		c.scope.within(after, func() { c.delivery(path+".delivery", s.Delivery) })
	}
	for _, key := range slices.Sorted(maps.Keys(s.Tags)) {
		p := path + ".tags." + key
		if !isIdentifier(key) {
			c.add(p, "want a tag name made of letters, digits and _, such as site, not %q", key)
			continue
		}
		c.scope.within(login, func() { c.template(p, s.Tags[key], false) }) // rendered before the requests
	}
}

// loginNames returns the names the first n login steps extract.
func (c *checker) loginNames(n int) []string {
	var out []string
	for i := range min(n, len(c.p.Login)) {
		out = append(out, extractNames(c.p.Login[i].Extract)...)
	}
	return out
}

// kind reports whether a scenario is a flow, a single request and a
// WebSocket scenario, adding a problem unless it is exactly one of them.
func (c *checker) kind(path string, s *Scenario) (flow, single, ws bool) {
	flow, single, ws = len(s.Steps) > 0, c.p.single(path, s), s.WebSocket != nil
	switch {
	case flow && single:
		c.add(path+".steps", "give request or steps, not both: a flow's requests are its steps")
	case !flow && !single && !ws && c.p.has(path+".steps"):
		c.add(path+".steps", "want at least one step, e.g. [{request: {url: /login}}]")
	case !flow && !single && !ws:
		c.add(path, "a scenario needs request, steps or websocket, e.g. {request: {url: /}}")
	}
	if ws && single {
		c.add(path+".websocket", "give request or websocket, not both: a websocket scenario sends frames over its sockets")
	}
	if ws && flow {
		c.add(path+".websocket", "give steps or websocket, not both: a websocket scenario sends frames over its sockets")
	}
	return flow, single, ws
}

// login checks the steps each virtual user runs before its iterations.
func (c *checker) login() {
	c.scope.early = true
	for i := range c.p.Login {
		c.scope.within(c.loginNames(i), func() { c.step(fmt.Sprintf("login[%d]", i), &c.p.Login[i]) })
	}
	c.scope.early = false
}

// step checks one step of a flow or of the login.
func (c *checker) step(path string, st *Step) {
	c.request(path+".request", &st.Request)
	c.expect(path+".expect", &st.Expect)
	c.extract(path+".extract", st.Extract)
}

// request checks a request's method, URL, headers and body.
func (c *checker) request(path string, r *Request) {
	if !isToken(r.Method) {
		c.add(path+".method", "want a method made of letters, such as GET or POST, not %q", r.Method)
	}
	switch {
	case r.URL == "":
		c.add(path+".url", "required: an absolute URL, or a path relative to target")
	case !isAbsolute(r.URL) && c.p.Target == "":
		if _, err := url.Parse(r.URL); err != nil && !strings.Contains(r.URL, "{{") {
			c.add(path+".url", "%q is not a valid URL (%v): want an absolute URL such as http://127.0.0.1:3000/path", r.URL, errors.Unwrap(err))
		} else if !strings.HasPrefix(r.URL, "/") && !strings.Contains(r.URL, "{{") {
			c.add(path+".url", "%q is neither an absolute URL (such as http://127.0.0.1:3000/path) nor a path relative to target (/path)", r.URL)
		} else {
			c.add(path+".url", "%q is relative: set target (e.g. http://127.0.0.1:3000) or give an absolute URL", r.URL)
		}
	case !isAbsolute(r.URL) && c.badTarget:
		// The target's problem is reported; the resolved URL would repeat it.
	default:
		if msg := httpURLProblem(c.p.RequestURL(r)); msg != "" {
			c.add(path+".url", "%s", msg)
		}
	}
	c.template(path+".url", r.URL, false)
	c.headers(path+".headers", r.Headers, true)
	c.template(path+".body", r.Body, false)
	switch {
	case r.Body != "" && r.JSON != nil:
		c.add(path+".json", "give body or json, not both")
	case r.BodyFile != "" && (r.Body != "" || r.JSON != nil):
		c.add(path+".body_file", "give one of body, json and body_file")
	case r.BodyFile != "":
		if msg := bodyFileProblem(c.p.BodyPath(r)); msg != "" {
			c.add(path+".body_file", "%s", msg)
		}
	}
	c.jsonTemplates(path+".json", r.JSON)
}

// jsonTemplates checks the string leaves of a json body as templates.
func (c *checker) jsonTemplates(path string, v any) {
	switch v := v.(type) {
	case string:
		c.template(path, v, false)
	case []any:
		for i, item := range v {
			c.jsonTemplates(fmt.Sprintf("%s[%d]", path, i), item)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c.jsonTemplates(path+"."+k, v[k])
		}
	}
}

// expect checks a response's checks.
func (c *checker) expect(path string, e *Expect) {
	c.statuses(path+".status", e.Status)
	if e.BodyRegex != "" {
		if _, err := regexp.Compile(e.BodyRegex); err != nil {
			c.add(path+".body_regex", "%v", err)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(e.JSON)) {
		p := path + ".json." + key
		if key == "" {
			c.add(p, "want a JSON path such as data.id")
			continue
		}
		if what := nonScalar(e.JSON[key]); what != "" {
			c.add(p, "want a value to compare with (text, a number, true, false or null), not %s; check a nested value by its path, e.g. data.id", what)
		}
	}
	c.headers(path+".header", e.Header, false)
}

// nonScalar names a value that is not a JSON scalar ("a mapping", "a list"),
// or returns "" for a string, number, bool or nil.
func nonScalar(v any) string {
	if v == nil {
		return ""
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return ""
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}

// extract checks where values are taken from and the names they get.
func (c *checker) extract(path string, ex map[string]Extract) {
	for _, name := range slices.Sorted(maps.Keys(ex)) {
		p := path + "." + name
		if msg := nameProblem(name); msg != "" {
			c.add(p, "%s", msg)
		} else if _, isVar := c.p.Vars[name]; isVar {
			c.add(p, "%q is also a var: .%s would mean either; rename one", name, name)
		}
		e := ex[name]
		var set []string
		for _, f := range []struct{ key, value string }{
			{"json", e.JSON}, {"header", e.Header}, {"cookie", e.Cookie}, {"regex", e.Regex},
		} {
			if f.value != "" {
				set = append(set, f.key)
			}
		}
		switch {
		case len(set) == 0:
			c.add(p, "want one of json, header, cookie or regex, e.g. {json: data.token}")
		case len(set) > 1:
			c.add(p+"."+set[1], "want one of json, header, cookie or regex, not both %s and %s", set[0], set[1])
		}
		if e.Regex != "" {
			if _, err := regexp.Compile(e.Regex); err != nil {
				c.add(p+".regex", "%v", err)
			}
		}
		if e.Header != "" {
			if msg := headerNameProblem(e.Header); msg != "" {
				c.add(p+".header", "%s", msg)
			}
		}
	}
}

// vars checks the names and templates of the plan's vars.
func (c *checker) vars() {
	for _, name := range slices.Sorted(maps.Keys(c.p.Vars)) {
		p := "vars." + name
		if msg := nameProblem(name); msg != "" {
			c.add(p, "%s", msg)
		}
		// Evaluated at the start of every iteration, after the login: they
		// see what it extracted, not what the iteration's steps will.
		c.scope.within(c.loginNames(len(c.p.Login)), func() { c.template(p, c.p.Vars[name], true) })
	}
}

// nameProblem says what is wrong with the name of a var or an extracted
// value, or "".
func nameProblem(name string) string {
	if !isIdentifier(name) {
		return fmt.Sprintf("want a name made of letters, digits and _, not starting with a digit, such as token, not %q", name)
	}
	if slices.Contains(reserved, name) {
		return fmt.Sprintf("%q is a name ceiling sets itself (%s): choose another", name, strings.Join(reserved, ", "))
	}
	return ""
}

// isIdentifier reports whether s is a name templates can read as .s:
// [A-Za-z_][A-Za-z0-9_]*.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, b := range []byte(s) {
		letter := b == '_' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z'
		if !letter && (i == 0 || b < '0' || b > '9') {
			return false
		}
	}
	return true
}
