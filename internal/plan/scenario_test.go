package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// head starts a plan to which cases add scenarios (from line 3 on).
const head = "target: http://h\nload: {rates: [1]}\n"

// parseCases are plans and the exact problems Parse reports, or none.
type parseCase struct {
	name string
	yaml string
	want []string
}

// runParseCases parses each case's plan and compares its problems.
func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.yaml))
			var got []string
			if err != nil {
				got = problemsOf(t, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) problems mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}

func TestScenarioRules(t *testing.T) {
	runParseCases(t, []parseCase{
		{"weighted mix", head + "scenarios:\n- {weight: 2, request: {url: /a}}\n- {weight: 0.5, request: {url: /b}}\n", nil},
		{"flow", head + "scenarios: [{steps: [{request: {url: /a}}, {request: {method: POST, url: /b}}]}]\n", nil},
		{"neither", head + "scenarios: [{name: x}]\n", []string{
			`p.yaml:3:13: scenarios[0]: a scenario needs request, steps or websocket, e.g. {request: {url: /}}`,
		}},
		{"both", head + "scenarios: [{request: {url: /a}, steps: [{request: {url: /b}}]}]\n", []string{
			`p.yaml:3:34: scenarios[0].steps: give request or steps, not both: a flow's requests are its steps`,
		}},
		{"empty steps", head + "scenarios: [{steps: []}]\n", []string{
			`p.yaml:3:14: scenarios[0].steps: want at least one step, e.g. [{request: {url: /login}}]`,
		}},
		{"empty request", head + "scenarios: [{request: {}}]\n", []string{
			`p.yaml:3:14: scenarios[0].request.url: required: an absolute URL, or a path relative to target`,
		}},
		{"weight zero", head + "scenarios: [{weight: 0, request: {url: /a}}]\n", []string{
			`p.yaml:3:22: scenarios[0].weight: weight 0 would never run: remove the scenario instead`,
		}},
		{"weight not finite", head + "scenarios: [{weight: .inf, request: {url: /a}}]\n", []string{
			`p.yaml:3:22: scenarios[0].weight: want a positive, finite weight such as 30, not +Inf`,
		}},
		{"weight negative", head + "scenarios: [{weight: -3, request: {url: /a}}]\n", []string{
			`p.yaml:3:22: scenarios[0].weight: want a positive, finite weight such as 30, not -3`,
		}},
		{"duplicate default names", head + "scenarios:\n- request: {url: /a}\n- request: {url: '/a?x=1'}\n", []string{
			`p.yaml:5:3: scenarios[1].name: scenario name "GET /a" is already used by scenarios[0] (p.yaml:4:3): names must be unique; give one a name`,
		}},
		{"duplicate names", head + "scenarios:\n- {name: s, request: {url: /a}}\n- {name: s, steps: [{request: {url: /b}}]}\n", []string{
			`p.yaml:5:10: scenarios[1].name: scenario name "s" is already used by scenarios[0] (p.yaml:4:10): names must be unique`,
		}},
		{"flow named by its first step", head + "scenarios:\n- steps: [{request: {url: /a}}]\n- request: {url: /a}\n", []string{
			`p.yaml:5:3: scenarios[1].name: scenario name "GET /a" is already used by scenarios[0] (p.yaml:4:3): names must be unique; give one a name`,
		}},
		{"expect and extract on a flow", head + "scenarios:\n- steps: [{request: {url: /a}}]\n  expect: {status: [200]}\n  extract: {t: {json: t}}\n", []string{
			`p.yaml:5:3: scenarios[0].expect: a flow checks its steps' responses: move expect onto the step it is about`,
			`p.yaml:6:3: scenarios[0].extract: a flow extracts from its steps' responses: move extract onto the step it is about`,
		}},
		{"step checks like a request", head + "scenarios: [{steps: [{request: {method: 'GE T', url: 'ftp://h/x', headers: {'A B': c}}}]}]\n", []string{
			`p.yaml:3:41: scenarios[0].steps[0].request.method: want a method made of letters, such as GET or POST, not "GE T"`,
			`p.yaml:3:54: scenarios[0].steps[0].request.url: want an http:// or https:// URL, not "ftp://h/x"`,
			`p.yaml:3:84: scenarios[0].steps[0].request.headers.A B: header name "A B" must not contain spaces, colons or control characters`,
		}},
		{"login checks like a request", head + "scenarios: [{request: {url: /a}}]\nlogin: [{request: {url: /l, body: x, json: {a: 1}}, expect: {status: [0]}}]\n", []string{
			`p.yaml:4:38: login[0].request.json: give body or json, not both`,
			`p.yaml:4:71: login[0].expect.status[0]: want an HTTP status from 100 to 599, not 0`,
		}},
		{"step without request", head + "scenarios: [{steps: [{name: s}]}]\n", []string{
			`p.yaml:3:22: scenarios[0].steps[0].request.method: want a method made of letters, such as GET or POST, not ""`,
			`p.yaml:3:22: scenarios[0].steps[0].request.url: required: an absolute URL, or a path relative to target`,
		}},
		{"body and json", head + "scenarios: [{request: {url: /a, body: x, json: [1]}}]\n", []string{
			`p.yaml:3:42: scenarios[0].request.json: give body or json, not both`,
		}},
		{"tags", head + "scenarios: [{request: {url: /a}, tags: {site: s, '': x, 'a-b': y, 9: z}}]\n", []string{
			`p.yaml:3:54: scenarios[0].tags.: want a tag name made of letters, digits and _, such as site, not ""`,
			`p.yaml:3:64: scenarios[0].tags.a-b: want a tag name made of letters, digits and _, such as site, not "a-b"`,
			`p.yaml:3:70: scenarios[0].tags.9: want a tag name made of letters, digits and _, such as site, not "9"`,
		}},
		{"tag_limit", head + "scenarios: [{request: {url: /a}}]\ntag_limit: -1\n", []string{
			`p.yaml:4:12: tag_limit: want 0 (the default, 50) or more, not -1`,
		}},
	})
}

func TestExpectAndExtractRules(t *testing.T) {
	const sc = head + "vars: {v: x}\nscenarios:\n- request: {url: /a}\n"
	runParseCases(t, []parseCase{
		{"all checks", sc + "  expect: {status: [200], body_contains: ok, body_regex: '^o', json: {a.b: 1, c: x, d: true, e: null, f: 1.5}, header: {X-A: b}}\n", nil},
		{"bad body_regex", sc + "  expect: {body_regex: 'a)'}\n", []string{
			"p.yaml:6:24: scenarios[0].expect.body_regex: error parsing regexp: unexpected ): `a)`",
		}},
		{"json values are scalars", sc + "  expect: {json: {a: {b: 1}, c: [1]}}\n", []string{
			`p.yaml:6:19: scenarios[0].expect.json.a: want a value to compare with (text, a number, true, false or null), not a mapping; check a nested value by its path, e.g. data.id`,
			`p.yaml:6:30: scenarios[0].expect.json.c: want a value to compare with (text, a number, true, false or null), not a list; check a nested value by its path, e.g. data.id`,
		}},
		{"header names", sc + "  expect: {header: {'X:Y': a}}\n", []string{
			`p.yaml:6:28: scenarios[0].expect.header.X:Y: header name "X:Y" must not contain spaces, colons or control characters`,
		}},
		{"each source", sc + "  extract: {a: {json: x}, b: {header: X-B}, c: {cookie: sid}, d: {regex: 'id=(\\d+)'}}\n", nil},
		{"no source", sc + "  extract: {a: {}}\n", []string{
			`p.yaml:6:13: scenarios[0].extract.a: want one of json, header, cookie or regex, e.g. {json: data.token}`,
		}},
		{"two sources", sc + "  extract: {a: {cookie: c, header: h}}\n", []string{
			`p.yaml:6:25: scenarios[0].extract.a.cookie: want one of json, header, cookie or regex, not both header and cookie`,
		}},
		{"bad regex", sc + "  extract: {a: {regex: '[z-a]'}}\n", []string{
			"p.yaml:6:24: scenarios[0].extract.a.regex: error parsing regexp: invalid character class range: `z-a`",
		}},
		{"names", sc + "  extract: {iteration: {json: i}, a.b: {json: x}, v: {json: v}}\n", []string{
			`p.yaml:6:13: scenarios[0].extract.iteration: "iteration" is a name ceiling sets itself (user, vu, iteration): choose another`,
			`p.yaml:6:35: scenarios[0].extract.a.b: want a name made of letters, digits and _, not starting with a digit, such as token, not "a.b"`,
			`p.yaml:6:51: scenarios[0].extract.v: "v" is also a var: .v would mean either; rename one`,
		}},
		{"header to extract", sc + "  extract: {a: {header: 'X Y'}}\n", []string{
			`p.yaml:6:25: scenarios[0].extract.a.header: header name "X Y" must not contain spaces, colons or control characters`,
		}},
	})
}

func TestFlowDefaults(t *testing.T) {
	yaml := head + "login: [{request: {url: /l}}]\nscenarios:\n- steps: [{request: {method: POST, url: '/a?x=1'}}, {name: b, request: {url: http://o/b}}]\n"
	p, err := Parse("p.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("Parse() = %v", err)
	}
	want := []Scenario{{
		Name: "POST /a", Weight: 1,
		Steps: []Step{
			{Name: "POST /a", Request: Request{Method: "POST", URL: "/a?x=1"}},
			{Name: "b", Request: Request{Method: "GET", URL: "http://o/b"}},
		},
	}}
	if diff := cmp.Diff(want, p.Scenarios); diff != "" {
		t.Errorf("Parse() scenarios mismatch (-want +got):\n%s", diff)
	}
	wantLogin := []Step{{Name: "GET /l", Request: Request{Method: "GET", URL: "/l"}}}
	if diff := cmp.Diff(wantLogin, p.Login); diff != "" {
		t.Errorf("Parse() login mismatch (-want +got):\n%s", diff)
	}
	if p.TagLimit != DefaultTagLimit {
		t.Errorf("TagLimit = %d, want %d", p.TagLimit, DefaultTagLimit)
	}
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name string
		json string
		want any
	}{
		{"mapping", "{a: 1, b: [x, 2.5, true, null], c: {d: '010'}}", map[string]any{
			"a": int64(1), "b": []any{"x", 2.5, true, nil}, "c": map[string]any{"d": "010"},
		}},
		{"list", "[1, -2, 18446744073709551615]", []any{int64(1), int64(-2), uint64(18446744073709551615)}},
		{"string kept as written", "' {{uuid}} '", " {{uuid}} "},
		{"block text", "|\n        a\n        b", "a\nb\n"},
		{"tagged string", "!!str 12", "12"},
		{"merge key", "{<<: {a: 1, b: 2}, b: 3}", map[string]any{"a": int64(1), "b": int64(3)}},
		{"alias", "[&x {a: 1}, *x]", []any{map[string]any{"a": int64(1)}, map[string]any{"a": int64(1)}}},
		{"null is absent", "null", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := head + "scenarios:\n- request:\n    url: /a\n    json: " + tt.json + "\n"
			p, err := Parse("p.yaml", []byte(yaml))
			if err != nil {
				t.Fatalf("Parse(%q) = %v", yaml, err)
			}
			if diff := cmp.Diff(tt.want, p.Scenarios[0].Request.JSON); diff != "" {
				t.Errorf("Parse(json: %s) mismatch (-want +got):\n%s", tt.json, diff)
			}
		})
	}
	runParseCases(t, []parseCase{
		{"infinity", head + "scenarios: [{request: {url: /a, json: {n: .inf}}}]\n", []string{
			`p.yaml:3:43: scenarios[0].request.json.n: JSON has no infinity or NaN: want a finite number, not .inf`,
		}},
		{"unknown alias", head + "scenarios: [{request: {url: /a, json: {a: *x}}}]\n", []string{
			`p.yaml:3:43: scenarios[0].request.json.a: unknown alias "x" (an alias must follow its complete anchor)`,
		}},
		{"expect json null and numbers", head + "scenarios: [{request: {url: /a}, expect: {json: {a: null, b: 1e3}}}]\n", nil},
	})
}
