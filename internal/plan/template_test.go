package plan

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTemplateFuncsSignatures(t *testing.T) {
	want := map[string]string{
		"uuid":       "func() string",
		"seq":        "func() int64",
		"randInt":    "func(int, int) int",
		"randString": "func(int) string",
		"pick":       "func(...interface {}) interface {}",
		"now":        "func() plan.Now",
		"env":        "func(string) string",
		"json":       "func(interface {}) string",
		"TODO":       "func(string) string",
	}
	got := map[string]string{}
	for name, fn := range TemplateFuncs {
		got[name] = reflect.TypeOf(fn).String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TemplateFuncs signatures mismatch (-want +got):\n%s", diff)
	}
	for name := range TemplateFuncs {
		if _, ok := funcExamples[name]; !ok {
			t.Errorf("funcExamples has no example of %s", name)
		}
	}
}

func TestNow(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)
	if got, want := (Now{at}).String(), "2026-01-02T15:04:05.123456789Z"; got != want {
		t.Errorf("Now.String() = %q, want %q", got, want)
	}
	// The runner binds real functions as below; the signatures stay.
	tmpl, err := ParseTemplate("t", `{{now}} {{now.Unix}} {{now.Format "2006"}}`)
	if err != nil {
		t.Fatalf("ParseTemplate() = %v", err)
	}
	bound := template.Must(tmpl.Clone()).Funcs(template.FuncMap{"now": func() Now { return Now{at} }})
	var b strings.Builder
	if err := bound.Execute(&b, nil); err != nil {
		t.Fatalf("Execute() = %v", err)
	}
	if got, want := b.String(), "2026-01-02T15:04:05.123456789Z 1767366245 2026"; got != want {
		t.Errorf("Execute() = %q, want %q", got, want)
	}
}

func TestParseTemplate(t *testing.T) {
	tmpl, err := ParseTemplate("t", "{{.token}}")
	if err != nil {
		t.Fatalf("ParseTemplate() = %v", err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, map[string]any{}); err == nil || !strings.Contains(err.Error(), `map has no entry for key "token"`) {
		t.Errorf("Execute(missing key) = %v, want a missing-key error", err)
	}
	if _, err := ParseTemplate("t", "{{uid}}"); err == nil || !strings.Contains(err.Error(), `function "uid" not defined`) {
		t.Errorf(`ParseTemplate("{{uid}}") = %v, want "function not defined"`, err)
	}
	for _, text := range []string{"{{uuid}}", "{{seq}}", "{{randInt 1 9}}", "{{randString 8}}", `{{pick "a" 1}}`, "{{now.Unix}}", "{{printf \"%s\" uuid}}"} {
		if _, err := ParseTemplate("t", text); err != nil {
			t.Errorf("ParseTemplate(%q) = %v, want no error", text, err)
		}
	}
}

func TestIsTemplate(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"/api", false}, {"{}", false}, {`{"a":{"b":1}}`, false}, {"/u/{{uuid}}", true}, {"{{", true},
	}
	for _, tt := range tests {
		if got := IsTemplate(tt.in); got != tt.want {
			t.Errorf("IsTemplate(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTemplateUses(t *testing.T) {
	tests := []struct {
		text  string
		refs  [][]string
		calls []call
	}{
		{"{{.user.site}}-{{.vu}}", [][]string{{"user", "site"}, {"vu"}}, nil},
		{"{{$.token}}{{with .user}}{{.site}}{{$.vu}}{{end}}", [][]string{{"token"}, {"user"}, {"vu"}}, nil},
		{"{{range $i, $e := .items}}{{.x}}{{else}}{{.y}}{{end}}", [][]string{{"items"}, {"y"}}, nil},
		{"{{if .a}}{{.b}}{{end}}", [][]string{{"a"}, {"b"}}, nil},
		{`{{define "x"}}{{.z}}{{end}}{{template "x" .a}}`, [][]string{{"a"}}, nil},
		{"{{randInt 1 2 | printf `%d`}}", nil, []call{{name: "randInt", args: 2}, {name: "printf", args: 2, literal: "%d", quoted: true}}},
		{"{{16 | randString}}", nil, []call{{name: "randString", args: 1}}},
		{"{{printf `%s` uuid (randInt .n 3)}}", [][]string{{"n"}}, []call{{name: "printf", args: 3, literal: "%s", quoted: true}, {name: "uuid"}, {name: "randInt", args: 2}}},
		{"{{now.Unix}}", nil, []call{{name: "now"}}},
		{`{{env "API_TOKEN" | urlquery}}{{"X" | env}}`, nil, []call{{name: "env", args: 1, literal: "API_TOKEN", quoted: true}, {name: "urlquery", args: 1}, {name: "env", args: 1}}},
		{`{{TODO "an id"}}`, nil, []call{{name: "TODO", args: 1, literal: "an id", quoted: true}}},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate("t", tt.text)
		if err != nil {
			t.Fatalf("ParseTemplate(%q) = %v", tt.text, err)
		}
		refs, calls := templateUses(tmpl)
		if diff := cmp.Diff(tt.refs, refs); diff != "" {
			t.Errorf("templateUses(%q) refs mismatch (-want +got):\n%s", tt.text, diff)
		}
		if diff := cmp.Diff(tt.calls, calls, cmp.AllowUnexported(call{})); diff != "" {
			t.Errorf("templateUses(%q) calls mismatch (-want +got):\n%s", tt.text, diff)
		}
	}
}

// templateCases are plans with templates and the problems Parse reports
// when the plan file is in testdata, so that data.users is
// testdata/users.csv.
func templateCases() []parseCase {
	const users = "data: {users: users.csv}\n"
	const vars = "vars: {msgid: '{{uuid}}'}\n"
	const login = "login: [{request: {url: /l}, extract: {token: {json: t}}}]\n"
	sc := func(url string) string {
		return head + "scenarios: [{request: {url: '" + url + "'}}]\n"
	}
	return []parseCase{
		{"every kind of name", head + users + vars + login + "scenarios:\n" +
			"- request: {url: '/{{.user.email}}/{{.vu}}/{{.iteration}}/{{.msgid}}/{{.token}}'}\n" +
			"- steps: [{request: {url: /y}, extract: {id: {regex: 'id=(\\d+)'}}}, {request: {url: '/{{.id}}/{{.token}}'}}]\n" +
			"  delivery: {sink: s, id: '{{.id}}'}\n" +
			"sinks: [{name: s, id: {json: id}}]\n", nil},
		{"vars and the login", head + "login: [{request: {url: '/l/{{.msgid}}/{{.auth}}'}, extract: {token: {json: t}}}]\n" +
			"vars: {msgid: '{{uuid}}', auth: '{{.token}}', bad: '{{.id}}'}\n" +
			"http: {headers: {X-A: '{{.auth}}', X-M: '{{.msgid}}'}}\n" +
			"scenarios: [{steps: [{request: {url: '/y/{{.auth}}'}, extract: {id: {json: id}}}]}, {websocket: {url: 'ws://h/{{.auth}}', send: x, ack: {json: id}}}]\n", []string{
			`p.yaml:3:25: login[0].request.url: template reads .auth, a var that reads what the login extracts: it has no value yet where this is rendered, before the login has run`,
			`p.yaml:4:52: vars.bad: template reads .id, which scenarios[0].steps[0] extracts, so it has no value yet where this is rendered (only the login's values have, and in a flow those of earlier steps)`,
			`p.yaml:5:23: http.headers.X-A: template reads .auth, a var that reads what the login extracts: it has no value yet where this is rendered, before the login has run`,
			`p.yaml:6:103: scenarios[1].websocket.url: template reads .auth, a var that reads what the login extracts: it has no value yet where this is rendered, before the login has run`,
		}},
		{"a name extracted elsewhere or later", head + login + "scenarios:\n" +
			"- request: {url: '/{{.later}}'}\n" +
			"  tags: {t: '{{.id}}'}\n" +
			"- {request: {url: /x}, extract: {later: {header: X}}}\n" +
			"- steps: [{request: {url: '/{{.id}}'}}, {request: {url: /y}, extract: {id: {regex: 'id=(\\d+)'}}}]\n", []string{
			`p.yaml:5:18: scenarios[0].request.url: template reads .later, which scenarios[1] extracts, so it has no value yet where this is rendered (only the login's values have, and in a flow those of earlier steps)`,
			`p.yaml:6:13: scenarios[0].tags.t: template reads .id, which scenarios[2].steps[1] extracts, so it has no value yet where this is rendered (only the login's values have, and in a flow those of earlier steps)`,
			`p.yaml:8:27: scenarios[2].steps[0].request.url: template reads .id, which scenarios[2].steps[1] extracts, so it has no value yet where this is rendered (only the login's values have, and in a flow those of earlier steps)`,
		}},
		{"functions", sc(`/{{uuid}}/{{seq}}/{{randInt 1 9}}/{{randString 4}}/{{pick "a" "b"}}/{{now.Unix}}/{{printf "%03d" seq}}`), nil},
		{"dot inside with", sc("/{{with .user}}{{.anything}}{{end}}") + users, nil},
		{"unknown name", sc("/{{.tokne}}") + login + vars, []string{
			`p.yaml:3:29: scenarios[0].request.url: template reads .tokne, which is not set (did you mean .token?); known: .vu, .iteration, .msgid, .token`,
		}},
		{"unknown name through $", sc("/{{with .vu}}{{$.nope}}{{end}}"), []string{
			`p.yaml:3:29: scenarios[0].request.url: template reads .nope, which is not set; known: .vu, .iteration`,
		}},
		{"user without data", sc("/{{.user.email}}"), []string{
			`p.yaml:3:29: scenarios[0].request.url: template reads .user.email but data.users is not set: .user.<column> is a column of the virtual user's row in that file`,
		}},
		{"unknown column", sc("/{{.user.mail}}") + users, []string{
			`p.yaml:3:29: scenarios[0].request.url: template reads .user.mail but users.csv has no column "mail" (did you mean .user.email?); columns: email, phone, tenant`,
		}},
		{"var reads a var", head + "scenarios: [{request: {url: /}}]\nvars: {a: '{{.b}}', b: '{{.a}}{{.vu}}'}\n", []string{
			`p.yaml:4:11: vars.a: template reads .b, another var: vars are evaluated together and may not read each other`,
			`p.yaml:4:24: vars.b: template reads .a, another var: vars are evaluated together and may not read each other`,
		}},
		{"var names", head + "scenarios: [{request: {url: /}}]\nvars: {vu: x, a-b: y}\n", []string{
			`p.yaml:4:12: vars.vu: "vu" is a name ceiling sets itself (user, vu, iteration): choose another`,
			`p.yaml:4:20: vars.a-b: want a name made of letters, digits and _, not starting with a digit, such as token, not "a-b"`,
		}},
		{"number has no fields", sc("/{{.iteration.n}}"), []string{
			`p.yaml:3:29: scenarios[0].request.url: template reads .iteration.n, but .iteration is a number without fields`,
		}},
		{"arity", sc("/{{randInt 1}}/{{pick}}/{{uuid 1}}/{{3 | randInt 1}}/{{printf `%d` randString}}"), []string{
			`p.yaml:3:29: scenarios[0].request.url: randInt takes 2 arguments, not 1, e.g. {{randInt 1 100}}`,
			`p.yaml:3:29: scenarios[0].request.url: pick takes at least one argument, e.g. {{pick "a" "b"}}`,
			`p.yaml:3:29: scenarios[0].request.url: uuid takes 0 arguments, not 1, e.g. {{uuid}}`,
			`p.yaml:3:29: scenarios[0].request.url: randString takes 1 argument, not 0, e.g. {{randString 16}}`,
		}},
		{"syntax", sc("/{{.vu"), []string{
			`p.yaml:3:29: scenarios[0].request.url: template: unclosed action`,
		}},
		{"unknown function", sc("/{{uid}}"), []string{
			`p.yaml:3:29: scenarios[0].request.url: template: function "uid" not defined (ceiling's functions: TODO, env, json, now, pick, randInt, randString, seq, uuid; and text/template's, such as printf and index)`,
		}},
		{"line of a long template", head + "scenarios: [{request: {url: /, body: \"a\\n{{.vu}}\\n{{end}}\"}}]\n", []string{
			`p.yaml:3:38: scenarios[0].request.body: template: unexpected {{end}} (line 3 of the template)`,
		}},
		{"every templated field", head + "http: {headers: {A: '{{.x1}}'}}\nvars: {v: '{{.x2}}'}\nscenarios:\n- request: {url: '/{{.x3}}', headers: {B: '{{.x4}}'}, body: '{{.x5}}'}\n  tags: {t: '{{.x6}}'}\n" +
			"- steps: [{request: {url: /, json: {a: ['{{.x7}}']}}}]\n", []string{
			`p.yaml:3:21: http.headers.A: template reads .x1, which is not set; known: .vu, .iteration, .v`,
			`p.yaml:4:11: vars.v: template reads .x2, which is not set; known: .vu, .iteration`,
			`p.yaml:6:18: scenarios[0].request.url: template reads .x3, which is not set; known: .vu, .iteration, .v`,
			`p.yaml:6:43: scenarios[0].request.headers.B: template reads .x4, which is not set; known: .vu, .iteration, .v`,
			`p.yaml:6:61: scenarios[0].request.body: template reads .x5, which is not set; known: .vu, .iteration, .v`,
			`p.yaml:7:13: scenarios[0].tags.t: template reads .x6, which is not set; known: .vu, .iteration, .v`,
			`p.yaml:8:41: scenarios[1].steps[0].request.json.a[0]: template reads .x7, which is not set; known: .vu, .iteration, .v`,
		}},
		{"checks are not templates", head + "scenarios:\n- request: {url: /}\n  expect: {body_contains: '{{', header: {X: '{{'}}\n", nil},
		{"env", head + "http: {headers: {Authorization: 'Bearer {{env \"CEILING_TEST_SET\"}}'}}\n" +
			"scenarios: [{request: {url: '/?k={{env \"CEILING_TEST_UNSET\" | urlquery}}', body: '{{env .vu}}{{env \"a b\"}}{{env}}'}}]\n", []string{
			`p.yaml:4:29: scenarios[0].request.url: environment variable CEILING_TEST_UNSET is not set: the plan reads it with env, so set it where the plan is validated and run`,
			`p.yaml:4:82: scenarios[0].request.body: env takes the variable's name in quotes, e.g. {{env "API_TOKEN"}}`,
			`p.yaml:4:82: scenarios[0].request.body: env "a b": not the name of an environment variable (letters, digits and _, not starting with a digit)`,
			`p.yaml:4:82: scenarios[0].request.body: env takes 1 argument, not 0, e.g. {{env "API_TOKEN"}}`,
		}},
		{"TODO", head + "scenarios:\n- request: {url: '/api/{{TODO \"path parameter id (integer)\"}}', json: {a: '{{TODO \"body field a\"}}', b: '{{TODO \"\"}}'}}\n", []string{
			`p.yaml:4:18: scenarios[0].request.url: TODO: path parameter id (integer): replace the {{TODO ...}} with a value`,
			`p.yaml:4:75: scenarios[0].request.json.a: TODO: body field a: replace the {{TODO ...}} with a value`,
			`p.yaml:4:105: scenarios[0].request.json.b: TODO: a value to fill in: replace the {{TODO ...}} with a value`,
		}},
	}
}

func TestTemplateRules(t *testing.T) {
	t.Setenv("CEILING_TEST_SET", "secret")
	os.Unsetenv("CEILING_TEST_UNSET")
	for _, tt := range templateCases() {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("testdata/p.yaml", []byte(tt.yaml))
			var got []string
			if err != nil {
				got = problemsOf(t, err)
			}
			for i := range got {
				got[i] = strings.TrimPrefix(got[i], "testdata/")
			}
			for i, w := range tt.want {
				tt.want[i] = strings.ReplaceAll(w, " users.csv ", " testdata/users.csv ")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) problems mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}

// json writes its argument as a JSON string, quotes included, escaped as
// JSON wants (never as Go does: \a, \x00 are not JSON), HTML as it is.
func TestJSONString(t *testing.T) {
	for in, want := range map[any]string{
		"hunter2": `"hunter2"`, `a"b\c`: `"a\"b\\c"`, "line\nnext\x07": `"line\nnext\u0007"`, "<&>": `"<&>"`, "São": `"São"`, 42: `"42"`,
	} {
		if got := JSONString(in); got != want {
			t.Errorf("JSONString(%q) = %s, want %s", in, got, want)
		}
	}
}
