package plan

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// TemplateFuncs declares the functions that plan templates may call, with
// their real signatures but stub bodies: Validate parses every template with
// them, so that an unknown function or a wrong number of arguments is a
// problem of the plan, not of the run. The package that runs a plan binds
// the real ones for each virtual user with Clone().Funcs(...), under the
// same names and signatures:
//
//	uuid() string             a random version 4 UUID
//	seq() int64               a counter unique per run: 1, 2, 3…
//	randInt(a, b int) int     a uniformly random integer from a to b inclusive
//	randString(n int) string  n random letters and digits
//	pick(items ...any) any    one of its arguments, at random
//	now() Now                 the current time: {{now}} prints RFC 3339, {{now.Unix}} seconds
//	env(name string) string   an environment variable of the machine that runs the plan
//	json(v any) string        v as a JSON string, quotes included, for a JSON body written as text
//	TODO(what string) string  a value still to be filled in (ceiling init writes them)
//
// env is the real function (it needs no binding per user): Validate checks
// that each variable it names is set, and the runner reads its value once.
// TODO never runs: every call of it is a problem of the plan.
var TemplateFuncs = template.FuncMap{
	"uuid":       func() string { return "00000000-0000-4000-8000-000000000000" },
	"seq":        func() int64 { return 0 },
	"randInt":    func(a, b int) int { return a },
	"randString": func(n int) string { return strings.Repeat("x", max(n, 0)) },
	"pick": func(items ...any) any {
		if len(items) == 0 {
			return nil
		}
		return items[0]
	},
	"now":  func() Now { return Now{} },
	"env":  os.Getenv,
	"json": JSONString,
	"TODO": func(what string) string { return "" },
}

// JSONString is the template function json: its argument (printed as
// {{print}} would) as a JSON string, quotes included, for a value put in
// a JSON body written as text: {"password": {{env "PASSWORD" | json}}}.
func JSONString(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(fmt.Sprint(v)) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// funcExamples shows a call of each function in TemplateFuncs, for messages.
var funcExamples = map[string]string{
	"uuid": "{{uuid}}", "seq": "{{seq}}", "randInt": "{{randInt 1 100}}",
	"randString": "{{randString 16}}", "pick": `{{pick "a" "b"}}`, "now": "{{now}}",
	"env": `{{env "API_TOKEN"}}`, "json": `{{env "PASSWORD" | json}}`, "TODO": `{{TODO "an instance id"}}`,
}

// Now is what the template function now returns: a time that prints as
// RFC 3339 with nanoseconds ({{now}}) and keeps time.Time's methods
// ({{now.Unix}}, {{now.Format "2006-01-02"}}).
type Now struct {
	time.Time
}

// String formats the time as RFC 3339 with nanoseconds, e.g.
// "2026-01-02T15:04:05.123456789Z".
func (n Now) String() string {
	return n.Time.Format(time.RFC3339Nano)
}

// ParseTemplate parses a plan template, such as a templated URL or header
// value, with TemplateFuncs and missingkey=error, so that executing it with
// a field that is not set fails instead of printing "<no value>". name
// labels the template in errors.
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(TemplateFuncs).Option("missingkey=error").Parse(text)
}

// IsTemplate reports whether s holds a template action ("{{"); a string
// without one is sent as written.
func IsTemplate(s string) bool {
	return strings.Contains(s, "{{")
}

// scope is what templates may read: the fields of the data a virtual user
// executes them with.
type scope struct {
	users     bool     // data.users is set
	usersFile string   // data.users resolved, for messages
	columns   []string // the users file's columns; nil when it could not be read
	vars      []string // var names, sorted
	extracted []string // names extracted anywhere in the plan, sorted
	// from says where each extracted name is first extracted, for messages.
	from map[string]string
	// visible, when scoped, lists the extracted names set by the time the
	// template being checked is rendered: the login's, and the earlier
	// steps' of the same flow.
	visible []string
	scoped  bool
	// early is set while checking templates rendered before a user's login
	// has run (the login's own, http.headers when there is a login, the
	// open model's held sockets): the vars that read what the login
	// extracts (lateVars) have no value there yet.
	early    bool
	lateVars map[string]bool
}

// VarsAfterLogin returns, sorted, the vars that read an extracted name
// (which validation allows only for the login's): a user evaluates them
// after its login has run, and the others before it, so that the login's
// requests can read them.
func (p *Plan) VarsAfterLogin() []string {
	extracted := map[string]bool{}
	for _, ex := range p.extracts() {
		for name := range ex {
			extracted[name] = true
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(p.Vars)) {
		if !IsTemplate(p.Vars[name]) {
			continue
		}
		t, err := ParseTemplate("vars."+name, p.Vars[name])
		if err != nil {
			continue
		}
		refs, _ := templateUses(t)
		if slices.ContainsFunc(refs, func(r []string) bool { return extracted[r[0]] }) {
			out = append(out, name)
		}
	}
	return out
}

// Names returns, sorted, every name the plan's templates can read with
// {{.name}}: its vars, the names it extracts, and its users' columns.
func (p *Plan) Names() []string {
	names := map[string]bool{}
	for name := range p.Vars {
		names[name] = true
	}
	for _, ex := range p.extracts() {
		for name := range ex {
			names[name] = true
		}
	}
	for _, c := range p.userColumns {
		names[c] = true
	}
	return slices.Sorted(maps.Keys(names))
}

// extracts yields every extract of the plan with its path, in plan order:
// the login's steps, then each scenario's own and its steps'.
func (p *Plan) extracts() iter.Seq2[string, map[string]Extract] {
	return func(yield func(string, map[string]Extract) bool) {
		for i := range p.Login {
			if !yield(fmt.Sprintf("login[%d]", i), p.Login[i].Extract) {
				return
			}
		}
		for i := range p.Scenarios {
			if !yield(fmt.Sprintf("scenarios[%d]", i), p.Scenarios[i].Extract) {
				return
			}
			for j := range p.Scenarios[i].Steps {
				if !yield(fmt.Sprintf("scenarios[%d].steps[%d]", i, j), p.Scenarios[i].Steps[j].Extract) {
					return
				}
			}
		}
	}
}

// within runs check with only the extracted names visible set; the login's
// names are visible everywhere.
func (s *scope) within(visible []string, check func()) {
	saved, savedScoped := s.visible, s.scoped
	s.visible, s.scoped = visible, true
	check()
	s.visible, s.scoped = saved, savedScoped
}

// extractNames returns the valid names ex extracts, sorted.
func extractNames(ex map[string]Extract) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(ex)) {
		if nameProblem(name) == "" {
			out = append(out, name)
		}
	}
	return out
}

// newScope collects the names a validated-so-far plan gives templates.
func newScope(p *Plan) *scope {
	s := &scope{users: p.Data.Users != "", usersFile: p.usersPath(), columns: p.userColumns}
	for _, name := range slices.Sorted(maps.Keys(p.Vars)) {
		if nameProblem(name) == "" {
			s.vars = append(s.vars, name)
		}
	}
	// Names with a problem of their own are left out, so that a hint never
	// suggests them.
	s.from = map[string]string{}
	for path, ex := range p.extracts() {
		for _, name := range extractNames(ex) {
			if _, ok := s.from[name]; !ok {
				s.from[name] = path
			}
		}
	}
	s.extracted = slices.Sorted(maps.Keys(s.from))
	s.lateVars = map[string]bool{}
	for _, name := range p.VarsAfterLogin() {
		s.lateVars[name] = true
	}
	return s
}

// template checks a templated value at path: it parses, the fields it reads
// exist, and it calls ceiling's functions with the right number of
// arguments. inVars says the value is a var's, which may not read vars.
func (c *checker) template(path, text string, inVars bool) {
	if !IsTemplate(text) {
		return
	}
	t, err := ParseTemplate(path, text)
	if err != nil {
		c.add(path, "%s", templateMessage(path, err))
		return
	}
	refs, calls := templateUses(t)
	seen := map[string]bool{}
	report := func(msg string) {
		if msg != "" && !seen[msg] {
			seen[msg] = true
			c.add(path, "%s", msg)
		}
	}
	for _, ref := range refs {
		report(c.scope.refProblem(ref, inVars))
	}
	for _, call := range calls {
		report(callProblem(call))
		switch call.name {
		case "env":
			if msg := envProblem(call); msg != "" {
				c.addOnce(path, "%s", msg)
			} else if call.quoted {
				c.env[call.literal] = true
			}
		case "TODO":
			what := "a value to fill in"
			if call.quoted && strings.TrimSpace(call.literal) != "" {
				what = call.literal
			}
			c.addOnce(path, "TODO: %s: replace the {{TODO ...}} with a value", what)
		}
	}
}

// envName is the form of an environment variable's name that env reads.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envProblem says what is wrong with a call of env, or "": it names a
// variable in quotes, and that variable is set (a plan that would send an
// empty credential measures the target's 401s).
func envProblem(c call) string {
	switch {
	case c.args != 1:
		return "" // callProblem says so
	case !c.quoted:
		return `env takes the variable's name in quotes, e.g. {{env "API_TOKEN"}}`
	case !envName.MatchString(c.literal):
		return fmt.Sprintf("env %q: not the name of an environment variable (letters, digits and _, not starting with a digit)", c.literal)
	}
	if _, ok := os.LookupEnv(c.literal); !ok {
		return fmt.Sprintf("environment variable %s is not set: the plan reads it with env, so set it where the plan is validated and run", c.literal)
	}
	return ""
}

// Environment returns, sorted, the environment variables the plan's
// templates read with env. Call it on a validated plan.
func (p *Plan) Environment() []string {
	return slices.Clone(p.environment)
}

// templateMessage turns a text/template parse error into a message:
// "template: function "uid" not defined (…)", with the line when the
// template has several.
func templateMessage(name string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "template: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, name+":"); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, after
			}
		}
	}
	if strings.HasPrefix(msg, "function ") && strings.HasSuffix(msg, " not defined") {
		msg += " (ceiling's functions: " + strings.Join(slices.Sorted(maps.Keys(TemplateFuncs)), ", ") +
			"; and text/template's, such as printf and index)"
	}
	if line > 1 {
		msg += fmt.Sprintf(" (line %d of the template)", line)
	}
	return "template: " + msg
}

// refProblem says what is wrong with a template's reference to a field
// chain such as [user site] (.user.site), or "".
func (s *scope) refProblem(chain []string, inVars bool) string {
	name := chain[0]
	switch {
	case name == "user":
		if !s.users {
			return "template reads ." + strings.Join(chain, ".") +
				" but data.users is not set: .user.<column> is a column of the virtual user's row in that file"
		}
		if len(chain) > 1 && s.columns != nil && !slices.Contains(s.columns, chain[1]) {
			return fmt.Sprintf("template reads .user.%s but %s has no column %q%s; columns: %s",
				chain[1], s.usersFile, chain[1], didYouMean(chain[1], s.columns, ".user."), strings.Join(s.columns, ", "))
		}
	case name == "vu" || name == "iteration":
		if len(chain) > 1 {
			return fmt.Sprintf("template reads .%s, but .%s is a number without fields", strings.Join(chain, "."), name)
		}
	case slices.Contains(s.vars, name):
		if s.early && s.lateVars[name] {
			return fmt.Sprintf("template reads .%s, a var that reads what the login extracts: it has no value yet where this is rendered, before the login has run", name)
		}
		if inVars {
			return fmt.Sprintf("template reads .%s, another var: vars are evaluated together and may not read each other", name)
		}
	case slices.Contains(s.extracted, name):
		if s.scoped && !slices.Contains(s.visible, name) {
			return fmt.Sprintf("template reads .%s, which %s extracts, so it has no value yet where this is rendered (only the login's values have, and in a flow those of earlier steps)",
				name, s.from[name])
		}
	default:
		known := s.known(inVars)
		return fmt.Sprintf("template reads .%s, which is not set%s; known: %s",
			name, didYouMean(name, s.names(inVars), "."), strings.Join(known, ", "))
	}
	return ""
}

// names lists the top-level names a template may read.
func (s *scope) names(inVars bool) []string {
	names := []string{"vu", "iteration"}
	if s.users {
		names = append(names, "user")
	}
	if !inVars {
		names = append(names, s.vars...)
	}
	return append(names, s.extracted...)
}

// known lists the fields a template may read, for a hint:
// ".user.email, .user.site, .vu, .iteration, .msgid, .token".
func (s *scope) known(inVars bool) []string {
	var out []string
	switch {
	case s.users && s.columns != nil:
		for _, col := range s.columns {
			out = append(out, ".user."+col)
		}
	case s.users:
		out = append(out, ".user.<column>")
	}
	out = append(out, ".vu", ".iteration")
	if !inVars {
		for _, v := range s.vars {
			out = append(out, "."+v)
		}
	}
	for _, e := range s.extracted {
		out = append(out, "."+e)
	}
	const most = 12
	if len(out) > most {
		out = append(out[:most], fmt.Sprintf("and %d more", len(out)-most))
	}
	return out
}

// didYouMean returns " (did you mean PREFIXbest?)" for the candidate
// nearest to name when it looks like a typo of it, else "".
func didYouMean(name string, candidates []string, prefix string) string {
	best := Nearest(name, candidates)
	if len(best) == 0 {
		return ""
	}
	return " (did you mean " + prefix + best[0] + "?)"
}

// Nearest returns the candidates nearest to name when they look like a
// typo of it, in their order: a few edits (insertions, deletions,
// substitutions, swaps), at most one for every three letters of the
// candidate (more is another word). It is empty when none does; "p98"
// gives p90, p95 and p99, which are all one edit away.
func Nearest(name string, candidates []string) []string {
	var best []string
	bestDist := len(name)
	for _, c := range candidates {
		d := Distance(name, c)
		if d > max(1, len(c)/3) {
			continue
		}
		switch {
		case d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	return best
}

// callProblem says what is wrong with a call of one of ceiling's template
// functions, or "". Other functions (text/template's own) are not checked.
func callProblem(c call) string {
	fn, ok := TemplateFuncs[c.name]
	if !ok {
		return ""
	}
	t := reflect.TypeOf(fn)
	if t.Kind() != reflect.Func {
		return ""
	}
	want := t.NumIn()
	switch {
	case t.IsVariadic() && c.args >= max(1, want-1):
		return ""
	case t.IsVariadic():
		return fmt.Sprintf("%s takes at least one argument, e.g. %s", c.name, funcExamples[c.name])
	case c.args == want:
		return ""
	}
	return fmt.Sprintf("%s takes %d argument%s, not %d, e.g. %s", c.name, want, plural(want), c.args, funcExamples[c.name])
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
