package draft

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// isPlan checks that a draft is a plan: plan.Parse accepts it but for
// the variables it reads that are not set here and its TODO stubs, which
// are the problems a draft may have by design.
func isPlan(t testing.TB, yaml []byte) *plan.Plan {
	t.Helper()
	p, err := plan.Parse("plan.yaml", yaml)
	if err == nil {
		return p
	}
	var ps plan.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("the draft does not parse: %v\n%s", err, yaml)
	}
	for _, pr := range ps {
		if !strings.HasPrefix(pr.Msg, "environment variable ") && !strings.HasPrefix(pr.Msg, "TODO: ") {
			t.Fatalf("the draft is not a plan: %v\n%s", pr, yaml)
		}
	}
	return nil
}

// parsed checks that a draft is a valid plan once the variables it names
// are set.
func parsed(t *testing.T, d *Draft) *plan.Plan {
	t.Helper()
	for _, v := range d.Env {
		t.Setenv(v.Name, "set-for-the-test")
	}
	p, err := plan.Parse("plan.yaml", d.YAML)
	if err != nil {
		t.Fatalf("the draft is not a valid plan: %v\n%s", err, d.YAML)
	}
	return p
}

func curlDraft(t *testing.T, dir string, cmds ...string) (*Draft, error) {
	t.Helper()
	var srcs []Source
	for i, c := range cmds {
		srcs = append(srcs, Source{Name: "--curl " + string(rune('1'+i)), Text: c, Dir: dir})
	}
	return FromCurl(context.Background(), srcs, Options{})
}

func TestCurl(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte("{\"to\": \"+15550001\",\n \"text\": \"hello\", \"password\": \"hunter2\", \"n\": 1.50}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cmds    []string
		want    []string // in the YAML
		secrets []string // never in the YAML
		env     []string // the variables named, in order
	}{
		{"a POST with a bearer token and a body file", []string{`curl -X POST https://api.example.test/v1/send -H "Authorization: Bearer abc.def.ghi" -d @body.json`},
			[]string{"target: https://api.example.test", "method: POST", "url: /v1/send", `Authorization: 'Bearer {{env "CEILING_AUTHORIZATION"}}'`,
				`body: '{"to": "+15550001", "text": "hello", "password": {{env "CEILING_PASSWORD" | json}}, "n": 1.50}'`, "Content-Type: application/x-www-form-urlencoded  # as curl sends -d"},
			[]string{"abc.def.ghi", "hunter2"}, []string{"CEILING_AUTHORIZATION", "CEILING_PASSWORD"}},
		{"a browser's copy as cURL", []string{`curl 'https://shop.example.test/api/cart?session_token=abc123xyz&page=2' \
  -H 'accept: application/json' \
  -H 'content-type: application/json' \
  -b 'sid=s3cr3t9; theme=dark' \
  -H 'x-api-key: k-1234567' \
  --data-raw $'{"sku":"A-1","note":"it\'s ok\\n","secret":{"pin":"9876"},"idempotency_key":"k1"}' \
  --compressed`},
			[]string{`url: '/api/cart?session_token={{env "CEILING_SESSION_TOKEN" | urlquery}}&page=2'`, `x-api-key: '{{env "CEILING_X_API_KEY"}}'`,
				`Cookie: '{{env "CEILING_COOKIE"}}'`, `body: '{"sku":"A-1","note":"it''s ok\n","secret":{"pin":{{env "CEILING_PIN" | json}}},"idempotency_key":{{uuid | json}}}'`, "Content-Type: application/json"},
			[]string{"abc123xyz", "s3cr3t9", "k-1234567", "9876"}, []string{"CEILING_SESSION_TOKEN", "CEILING_X_API_KEY", "CEILING_COOKIE", "CEILING_PIN"}},
		{"the user's own variables", []string{`curl "https://h.test/items/$ID?key=${API_KEY}" -H "Authorization: Bearer $TOKEN"`},
			[]string{`url: '/items/{{env "ID"}}?key={{env "API_KEY"}}'`, `Authorization: 'Bearer {{env "TOKEN"}}'`, "#   TOKEN: as the curl command read it, $TOKEN"}, nil, []string{"ID", "API_KEY", "TOKEN"}},
		{"basic authentication", []string{`curl -u alice:hunter22 https://h.test/me`},
			[]string{`Authorization: 'Basic {{env "CEILING_BASIC_AUTH"}}'`}, []string{"hunter22", "alice"}, []string{"CEILING_BASIC_AUTH"}},
		{"-G puts the data in the query", []string{`curl -G -d q=1 --data-urlencode 'name=a b' https://h.test/search`},
			[]string{"url: '/search?q=1&name=a%20b'"}, nil, nil},
		{"methods, flags and options", []string{`curl -I https://h.test/`, `curl -XPUT -sSLk -H'X-Id: 1' --max-time 5 https://h.test/a/1 --data-binary 'x y'`, `curl --json '{"a":[1,{"b":null}],"c":{}}' https://h.test/j`},
			[]string{"method: HEAD", "method: PUT", "follow_redirects: true", "insecure: true", "timeout: 5s", "X-Id: '1'", "body: x y",
				"name: POST /j", "Accept: application/json", `body: '{"a":[1,{"b":null}],"c":{}}'`, "Content-Type: application/json"}, nil, nil},
		{"names made unique, another host absolute", []string{`curl https://h.test/a`, `curl https://h.test/a?x=1`, `curl http://other.test:8080/b`},
			[]string{"name: GET /a\n", "name: 'GET /a (2)'", "url: http://other.test:8080/b"}, nil, nil},
		{"a URL made valid", []string{`curl 'https://h.test/{{x}} y/%zz?q=é'`}, []string{`url: '/%7B%7Bx%7D%7D%20y/%25zz?q=%C3%A9'`}, nil, nil},
		{"a body that looks like a template stays literal", []string{`curl https://h.test/ -d '{{x}}'`}, []string{`body: '{{"{{"}}x}}'`}, nil, nil},
		{"a fixed idempotency key", []string{`curl -X POST https://h.test/pay -H 'Idempotency-Key: 123' -d ''`}, []string{`Idempotency-Key: '{{uuid}}'`}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := curlDraft(t, dir, tt.cmds...)
			if err != nil {
				t.Fatal(err)
			}
			y := string(d.YAML)
			for _, w := range tt.want {
				if !strings.Contains(y, w) {
					t.Errorf("the draft lacks %q:\n%s", w, y)
				}
			}
			for _, s := range tt.secrets {
				if strings.Contains(y, s) {
					t.Errorf("the draft holds the secret %q:\n%s", s, y)
				}
			}
			var env []string
			for _, e := range d.Env {
				env = append(env, e.Name)
			}
			if strings.Join(env, ",") != strings.Join(tt.env, ",") {
				t.Errorf("Env = %v, want %v", env, tt.env)
			}
			for _, name := range []string{"ID", "API_KEY", "TOKEN"} {
				t.Setenv(name, "x")
			}
			parsed(t, d)
		})
	}
}

func TestCurlErrors(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"curl --frobnicate https://h.test/", "f:1:1: curl option --frobnicate: not one ceiling init knows"},
		{"curl -Q x https://h.test/", "f:1:1: curl option -Q: not one ceiling init knows"},
		{"# a comment\ncurl https://h.test/ \\\n  -F a=@x", "f:2:1: multipart forms (-F)"},
		{"curl https://h.test/ --digest -u a:b", "f:1:1: curl option --digest: ceiling sends no such authentication"},
		{"curl https://h.test/a https://h.test/b", "f:1:1: 2 URLs"},
		{"curl -H", "f:1:1: curl option --header wants a value"},
		{"curl -s", "f:1:1: no URL"},
		{"curl ftp://h.test/", `f:1:1: want an http:// or https:// URL, not "ftp://h.test/"`},
		{"curl https://h.test/ | jq .", "f:1:1: not a curl command"},
		{"curl https://$NOT_SET_HOST_X/", "the URL's host reads $NOT_SET_HOST_X, which is not set"},
		{"curl https://u:p@h.test/", "a URL with user information"},
		{"curl -d @missing.json https://h.test/", "missing.json"},
		{"curl \"https://h.test/${X:-y}\"", "f:1:6: only $NAME and ${NAME}"},
		{"ls -l", `f:1:1: "ls" is not curl`},
		{"", "no curl command found"},
		{"curl 'https://h.test/", "f:1:6: reached EOF without closing quote"},
		{"curl https://h.test/ -H 'bad header'", `-H "bad header": want "Name: value"`},
	}
	for _, tt := range tests {
		_, err := FromCurl(context.Background(), []Source{{Name: "f", Text: tt.text, Dir: t.TempDir()}}, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FromCurl(context.Background(), %q) = %v, want %q", tt.text, err, tt.want)
		}
	}
}

// Whatever the text, FromCurl does not crash, and what it drafts is a
// plan (but for its environment variables and TODOs).
func FuzzCurl(f *testing.F) {
	for _, s := range []string{
		`curl -X POST https://api.example.test/v1/send -H "Authorization: Bearer abc" -d '{"a":1}'`,
		`curl 'https://h.test/a?token=x&b=2' -H 'Cookie: a=b' -b 'c=d' --data-raw $'{"password":"p\'"}' -u a:b`,
		"curl https://h.test/ \\\n -G -d q=1 --data-urlencode 'x=a b' -sSLk --max-time 2",
		`curl "https://h.test/$ID/{{x}}" -H "X-Idempotency-Key: 1" --json '[1,"{{",null]'`,
		`curl -XPUT https://h.test/é -H 'X:' -H 'Y;' -A agent -e ref -r 0-9`,
		"curl http://h.test:99999/", "curl https://[::1]:8/x", "curl h.test/x y", "curl 'http://h/%zz'", "curl 'http://h/a b'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, err := FromCurl(context.Background(), []Source{{Name: "f", Text: text, Dir: t.TempDir()}}, Options{})
		if err != nil {
			return
		}
		isPlan(t, d.YAML)
	})
}

// --secret names more secrets: a header so named is read from the
// environment and listed in http.secret_headers, a field so named too.
func TestCurlMoreSecrets(t *testing.T) {
	d, err := FromCurl(context.Background(), []Source{{Name: "c", Text: `curl https://h.test/a?tenant=acme -H 'X-Tenant: acme-42' --json '{"account": "ac-9"}'`}},
		Options{Secrets: []string{"X-Tenant", "account", "tenant"}})
	if err != nil {
		t.Fatal(err)
	}
	y := string(d.YAML)
	for _, want := range []string{`X-Tenant: '{{env "CEILING_X_TENANT"}}'`, "secret_headers: [X-Tenant]", `body: '{"account": {{env "CEILING_ACCOUNT" | json}}}'`, `tenant={{env "CEILING_TENANT" | urlquery}}`} {
		if !strings.Contains(y, want) {
			t.Errorf("the draft lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "acme") || strings.Contains(y, "ac-9") {
		t.Errorf("the draft holds a secret:\n%s", y)
	}
	parsed(t, d)
}
