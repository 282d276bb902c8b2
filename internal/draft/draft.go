package draft

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Options are what `ceiling init` lets a user choose. The zero value
// drafts with the defaults.
type Options struct {
	// Target replaces the base URL the source gives (the origin of the
	// curl lines or the recording, the document's first server). Empty:
	// the source's.
	Target string
	// Secrets names more headers, query parameters and body fields whose
	// values are secret, beyond those whose names say so.
	Secrets []string
	// Flow (HAR) makes the recording one flow in its recorded order,
	// instead of a weighted mix of its endpoints.
	Flow bool
	// KeepStatic (HAR) keeps static assets (scripts, styles, images,
	// fonts), which are left out by default.
	KeepStatic bool
	// Unsafe (OpenAPI) includes the operations of unsafe methods (POST,
	// PUT, PATCH, DELETE); by default only safe ones (GET, HEAD) are.
	Unsafe bool
	// Login (OpenAPI) names the operation that logs in, by operationId or
	// as "METHOD /path": it becomes the plan's login, and its answer's
	// token the bearer token of the operations that need one.
	Login string
	// File is the name the plan is written to, for its comments. Empty:
	// PLAN.yaml.
	File string
}

// Draft is a drafted plan and what its user must know about it.
type Draft struct {
	// YAML is the plan, commented.
	YAML []byte
	// Scenarios is how many scenarios the plan has.
	Scenarios int
	// Env lists the environment variables the plan reads with env, in the
	// order they were first needed.
	Env []Env
	// TODOs says what each {{TODO}} stub of the plan stands for.
	TODOs []string
	// Notes say, a sentence each, what was left out or guessed.
	Notes []string
	// Files are written next to the plan with it: the bodies too large to
	// be in it (body_file).
	Files []File
}

// File is a file a draft writes next to its plan.
type File struct {
	// Name is its path: in the plan's folder (Options.File's), or the
	// working directory's when the plan has no file.
	Name string
	// Data is what it holds.
	Data []byte
}

// maxScenarios bounds a draft's scenarios (and a flow's steps): the most
// frequent are kept, and the draft says how many were left out.
const maxScenarios = 200

// maxPlanBytes is the most a plan file may hold (plan.MaxPlanBytes):
// a draft past it loses its last scenarios until it fits.
const maxPlanBytes = 1 << 20

// maxInlineBody is the largest body a draft writes into its plan; a
// larger one, as the source sent it, goes in a file next to the plan
// (body_file).
const maxInlineBody = 64 << 10

// Env is an environment variable a plan reads.
type Env struct {
	// Name is the variable's name, e.g. CEILING_AUTHORIZATION.
	Name string
	// What says what to set it to, e.g. "the Authorization header's
	// credentials (after \"Bearer \")".
	What string
}

// Load shapes of a draft: gentle, short stairs that show whether every
// scenario passes before anyone raises them.
var (
	draftRates = []float64{5, 10, 20}
	draftVUs   = []int{2, 5, 10}
)

const (
	draftStep   = 20 * time.Second
	draftWarmup = 5 * time.Second
	draftSLO    = "errors<1%"
)

// sketch is a plan being drafted, in the order it is written.
type sketch struct {
	header    []string // comment lines at the top
	name      string
	target    string
	closed    bool          // closed model (virtual users), else open
	think     time.Duration // closed: pause between a user's iterations
	thinkNote string        // where think comes from
	http      httpSettings
	login     []*request
	scenarios []*scenario
	env       envs
	todos     []string
	notes     []string
	secrets   []string // Options.Secrets
	file      string   // Options.File, or PLAN.yaml
	out       string   // Options.File as given: "" when the plan has no file
	files     []File   // written next to the plan
	// consume, while a recorded request is built, returns a value as a
	// template that reads what an earlier answer handed out, if it was
	// one; nil elsewhere.
	consume func(raw string, whole bool) (string, bool)
}

// handedOut returns raw as a template reading what an earlier answer
// handed out, and whether it is one; encode pipes it through urlquery
// when raw needs encoding in a URL or a form.
func (s *sketch) handedOut(raw string, encode bool) (string, bool) {
	if s.consume == nil {
		return "", false
	}
	t, ok := s.consume(raw, true)
	if ok && encode && url.QueryEscape(raw) != raw {
		t = strings.TrimSuffix(t, "}}") + " | urlquery}}"
	}
	return t, ok
}

// httpSettings are the plan's http section.
type httpSettings struct {
	insecure, followRedirects, http2 bool
	timeout                          time.Duration
	headers                          []header
	secretHeaders                    []string
}

// scenario is one scenario: a single request, or a flow of steps.
type scenario struct {
	name    string
	weight  int    // 0: not written (the default, 1)
	comment string // written above it
	flow    bool   // steps: even with one request
	steps   []*request
}

// request is a request with its checks and extractions.
type request struct {
	name     string // a flow step's name; "" for none
	comment  string
	method   string
	url      string // a template: literal text through lit
	headers  []header
	body     string // a template; or
	json     *jvalue
	bodyFile string // or a file of the plan's folder that holds the body
	isJSON   bool   // the body is a JSON document
	status   []int
	extract  []extraction
}

// header is a header whose value is a template.
type header struct {
	name, value, comment string
}

// extraction is one entry of a request's extract.
type extraction struct {
	name, kind, source string // kind: json, header, cookie or regex
}

// newSketch starts a sketch with the user's options.
func newSketch(o Options) *sketch {
	return &sketch{secrets: o.Secrets, file: cmp(o.File, "PLAN.yaml"), out: o.File}
}

// readIt closes every draft's header comment.
func (s *sketch) readIt() string {
	f := s.file
	if strings.ContainsAny(f, " '\"$`\\") {
		f = "'" + strings.ReplaceAll(f, "'", `'\''`) + "'"
	}
	return fmt.Sprintf("Read it through, then: ceiling validate %s && ceiling run %s (docs/plans.md has every key).", f, f)
}

// todo returns a TODO stub for what and counts it.
func (s *sketch) todo(what string) string {
	s.todos = append(s.todos, what)
	return fmt.Sprintf("{{TODO %q}}", what)
}

// note records a sentence for the user.
func (s *sketch) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// secretHeader reports whether a header's value is a secret.
func (s *sketch) secretHeader(name string) bool {
	return secret.Names(s.secrets).Header(name)
}

// secretName reports whether a query parameter's or body field's value is
// a secret.
func (s *sketch) secretName(name string) bool {
	return secret.Name(name) || slices.ContainsFunc(s.secrets, func(n string) bool { return strings.EqualFold(n, name) })
}

// draft finishes a sketch: the YAML and what goes with it. A plan past
// maxPlanBytes loses its last scenarios, a tenth at a time, until it
// fits, and says so.
func (s *sketch) draft() *Draft {
	y := s.render()
	dropped := 0
	for len(y) > maxPlanBytes && len(s.scenarios) > 1 {
		n := max(len(s.scenarios)/10, 1)
		s.scenarios = s.scenarios[:len(s.scenarios)-n]
		dropped += n
		y = s.render()
	}
	if dropped > 0 {
		s.note("Left out the last %d scenarios: the plan was past %d MiB, the most a plan file may hold.", dropped, maxPlanBytes>>20)
		y = s.render()
	}
	d := &Draft{YAML: y, Scenarios: len(s.scenarios), TODOs: s.todos, Notes: s.notes, Files: s.files}
	for _, v := range s.env.vars {
		d.Env = append(d.Env, Env{Name: v.name, What: v.what})
	}
	return d
}

// capScenarios keeps the first maxScenarios scenarios, the heaviest first
// (a stable order: equal weights keep theirs), and says how many of what
// were left out, and which were kept ("the most frequent").
func (s *sketch) capScenarios(what, kept string) {
	n := len(s.scenarios)
	if n <= maxScenarios {
		return
	}
	slices.SortStableFunc(s.scenarios, func(a, b *scenario) int { return b.weight - a.weight })
	s.scenarios = s.scenarios[:maxScenarios]
	s.note("Left out %d %s: the plan keeps %s %d (a plan file is at most %d MiB).", n-maxScenarios, what, kept, maxScenarios, maxPlanBytes>>20)
}

// bodyFile puts a body the source sent, too large for the plan, in a
// file next to it, and makes r send it from there (body_file); where
// names the body for the note.
func (s *sketch) bodyFile(r *request, body, contentType, where string) {
	dir, base := ".", "plan"
	if s.out != "" {
		dir, base = filepath.Dir(s.out), strings.TrimSuffix(filepath.Base(s.out), filepath.Ext(s.out))
	}
	name := filepath.Join(dir, fmt.Sprintf("%s.body-%d%s", base, len(s.files)+1, bodyExt(contentType)))
	s.files = append(s.files, File{Name: name, Data: []byte(body)})
	r.body, r.bodyFile = "", filepath.Base(name)
	s.note("%s (%d KiB) is in %s, sent as it is (body_file): keep the file next to the plan.", where, len(body)>>10, filepath.Base(name))
}

// bodyExt is the file extension of a body of a content type.
func bodyExt(contentType string) string {
	ct := strings.ToLower(contentType)
	switch {
	case strings.Contains(ct, "json"):
		return ".json"
	case strings.Contains(ct, "xml"):
		return ".xml"
	case strings.HasPrefix(ct, "text/") || strings.Contains(ct, "form-urlencoded"):
		return ".txt"
	}
	return ".bin"
}

// envs allocates the environment variables a plan reads: one per secret
// value, named after where the value goes.
type envs struct {
	vars []envVar
	// byName gives one variable per name whatever the values: a
	// document's examples are no one's credentials.
	byName bool
}

type envVar struct {
	name, what string
	value      string // compared only, never written; "" when the source named the variable
}

// ref returns the name of the variable that stands for value, which goes
// where base says (a header's, a parameter's or a field's name): the same
// variable for the same value, CEILING_BASE, then CEILING_BASE_2 for
// another value.
func (e *envs) ref(base, what, value string) string {
	stem := "CEILING_" + envStem(base)
	name := stem
	for n := 2; ; n++ {
		i := slices.IndexFunc(e.vars, func(v envVar) bool { return v.name == name })
		if i < 0 {
			e.vars = append(e.vars, envVar{name: name, what: what, value: value})
			return name
		}
		if e.byName || e.vars[i].value == value {
			return name
		}
		name = fmt.Sprintf("%s_%d", stem, n)
	}
}

// named records a variable the source itself read ($TOKEN in a curl
// line).
func (e *envs) named(name, what string) {
	if !slices.ContainsFunc(e.vars, func(v envVar) bool { return v.name == name }) {
		e.vars = append(e.vars, envVar{name: name, what: what})
	}
}

// envStem turns a name into the upper-case words of a variable name:
// "X-Api-Key" gives X_API_KEY, "bearerAuth" BEARER_AUTH.
func envStem(name string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			prevLower = true
		case r >= 'A' && r <= 'Z':
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			prevLower = false
		case r >= '0' && r <= '9':
			b.WriteRune(r)
			prevLower = true
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "_") {
				b.WriteByte('_')
			}
			prevLower = false
		}
	}
	out := strings.Trim(b.String(), "_")
	if out == "" {
		return "SECRET"
	}
	return out
}

// envTemplate is the template that reads variable name.
func envTemplate(name string) string {
	return fmt.Sprintf("{{env %q}}", name)
}

// lit makes text literal in a template: "{{" would start an action, so it
// is written as an action that prints it. A source's references to
// environment variables (sentinels) become {{env "NAME"}}.
func lit(s string) string {
	s = strings.ReplaceAll(s, "{{", `{{"{{"}}`)
	return sentinel.ReplaceAllString(s, `{{env "$1"}}`)
}

// lookupEnv reads the environment, for what a draft must resolve now.
var lookupEnv = os.LookupEnv

// isIdempotency reports whether a header or field name holds a key the
// target must see only once (Idempotency-Key): a fixed one would make
// every request after the first a duplicate.
func isIdempotency(name string) bool {
	return strings.Contains(strings.ToLower(name), "idempotency")
}

// uniqueNames makes the scenarios' names unique: a second "GET /a" is
// "GET /a (2)".
func uniqueNames(scs []*scenario) {
	taken := map[string]bool{}
	for _, sc := range scs {
		name := sc.name
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s (%d)", sc.name, n)
		}
		sc.name, taken[name] = name, true
	}
}
