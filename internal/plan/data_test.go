package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUsers(t *testing.T) {
	tests := []struct {
		name, file, content string
		columns             []string
		rows                []map[string]string
	}{
		{"csv", "u.csv", "email,site\na@x,s1\n\"b,@x\",\"s\n2\"\n", []string{"email", "site"}, []map[string]string{
			{"email": "a@x", "site": "s1"}, {"email": "b,@x", "site": "s\n2"},
		}},
		{"csv with a byte order mark and CRLF", "u.CSV", "\xef\xbb\xbfemail\r\na@x\r\n", []string{"email"}, []map[string]string{
			{"email": "a@x"},
		}},
		{"json", "u.json", `[{"email": "a@x", "n": 10, "f": 1.50, "ok": true}, {"ok": false, "f": 0, "n": -1, "email": ""}]`,
			[]string{"email", "f", "n", "ok"}, []map[string]string{
				{"email": "a@x", "n": "10", "f": "1.50", "ok": "true"},
				{"email": "", "n": "-1", "f": "0", "ok": "false"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, tt.file), tt.content)
			p := flagPlan()
			p.Data.Users = filepath.Join(dir, tt.file)
			if err := p.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if diff := cmp.Diff(tt.columns, p.UserColumns()); diff != "" {
				t.Errorf("UserColumns() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.rows, p.Users()); diff != "" {
				t.Errorf("Users() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsersProblems(t *testing.T) {
	many := "a,b\n" + strings.Repeat("1\n", 8)
	tests := []struct {
		name, file, content string
		want                []string // with F for the file's path
	}{
		{"empty csv", "u.csv", "", []string{"F: the file is empty: want a row of column names, then one row per user"}},
		{"header only", "u.csv", "a,b\n", []string{"F: no users: want one row per virtual user after the column names"}},
		{"blank column", "u.csv", "a, \nx,y\n", []string{"F:1: column 2 has no name"}},
		{"duplicate column", "u.csv", "a,a\nx,y\n", []string{`F:1: column "a" appears twice`}},
		{"ragged", "u.csv", "a,b\n1,2\n3\n4,5,6\n", []string{
			"F:3: want 2 fields, one per column, not 1",
			"F:4: want 2 fields, one per column, not 3",
		}},
		{"many ragged rows", "u.csv", many, []string{
			"F:2: want 2 fields, one per column, not 1",
			"F:3: want 2 fields, one per column, not 1",
			"F:4: want 2 fields, one per column, not 1",
			"F:5: want 2 fields, one per column, not 1",
			"F:6: want 2 fields, one per column, not 1",
			"F: and 3 more problems",
		}},
		{"bad quote", "u.csv", "a\n\"x\n", []string{"F:2: extraneous or missing \" in quoted-field"}},
		{"json not an array", "u.json", `{"a": 1}`, []string{`F:1: want a JSON array of objects, such as [{"email": "a@example.com"}]`}},
		{"json empty", "u.json", `[]`, []string{"F: no users: want one row per virtual user after the column names"}},
		{"json values", "u.json", "[\n{\"a\": null},\n{\"a\": [1]}\n]", []string{
			"F:2: [0].a: want a string, number or boolean, not null",
			"F:3: [1].a: want a string, number or boolean, not an array",
		}},
		{"json keys differ", "u.json", "[{\"a\": 1},\n {\"b\": 2}]", []string{"F:2: [1]: has keys b, want those of [0]: a"}},
		{"json syntax", "u.json", "[{\"a\": 1},\n {\"a\": }]", []string{"F:2: [1]: invalid character '}' looking for beginning of value"}},
		{"json trailing", "u.json", "[{\"a\": 1}", []string{`F:1: want a JSON array of objects, such as [{"email": "a@example.com"}]: EOF`}},
		{"extension", "u.yaml", "a: 1", []string{`F: want a .csv or .json file of users, not ".yaml"`}},
		{"missing", "", "", []string{"F: cannot read the users file: no such file or directory"}},
		{"a folder", ".", "", []string{`F: want a .csv or .json file of users, not ""`}},
		{"a folder named .csv", "d.csv/", "", []string{"F: want a regular file of users"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "missing.csv")
			if tt.file != "" {
				path = filepath.Join(dir, tt.file)
				switch {
				case strings.HasSuffix(tt.file, "/"):
					if err := os.Mkdir(path, 0o755); err != nil {
						t.Fatal(err)
					}
				case tt.file != ".":
					writeFile(t, path, tt.content)
				}
			}
			p := flagPlan()
			p.Data.Users = path
			err := p.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want problems")
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, "data.users: "+strings.Replace(w, "F", path, 1))
			}
			if diff := cmp.Diff(want, problemsOf(t, err)); diff != "" {
				t.Errorf("Validate() problems mismatch (-want +got):\n%s", diff)
			}
			if p.Users() != nil {
				t.Errorf("Users() = %v after a problem, want nil", p.Users())
			}
		})
	}
}

func TestUsersPath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sub", "users.csv"), "id\n1\n")
	writeFile(t, filepath.Join(dir, "sub", "plan.yaml"), minimal+"load: {rates: [1]}\ndata: {users: users.csv}\n")
	t.Chdir(dir)

	p, err := LoadFile(filepath.Join("sub", "plan.yaml"))
	if err != nil {
		t.Fatalf("LoadFile() = %v, want the users file found next to the plan", err)
	}
	if got := p.Users(); len(got) != 1 || got[0]["id"] != "1" {
		t.Errorf("Users() = %v, want [{id: 1}]", got)
	}

	flags := flagPlan()
	flags.Data.Users = filepath.Join("sub", "users.csv")
	if err := flags.Validate(); err != nil {
		t.Errorf("Validate() of a plan from flags = %v, want users.csv found from the working directory", err)
	}
	flags.Data.Users = "users.csv"
	if err := flags.Validate(); err == nil {
		t.Errorf("Validate() of a plan from flags with users.csv = nil, want a problem (it is not in the working directory)")
	}

	abs := minimal + "load: {rates: [1]}\ndata: {users: " + filepath.Join(dir, "sub", "users.csv") + "}\n"
	if _, err := Parse("elsewhere/plan.yaml", []byte(abs)); err != nil {
		t.Errorf("Parse() with an absolute data.users = %v, want no error", err)
	}
}

func TestUsersNotSet(t *testing.T) {
	p := flagPlan()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Users() != nil || p.UserColumns() != nil {
		t.Errorf("Users(), UserColumns() = %v, %v without data.users, want nil", p.Users(), p.UserColumns())
	}
}

// writeFile writes content to path, creating its folder.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// body_file names a file of the plan's folder whose bytes are the body: a
// missing one, a folder, or one with body or json beside it is a problem.
func TestBodyFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "order.json"), `{"sku":"A-1"}`)
	plan := func(request string) string {
		return "target: http://127.0.0.1:9\nload: {rates: [1]}\nscenarios:\n  - request: " + request + "\n"
	}
	load := func(text string) (*Plan, error) {
		path := filepath.Join(dir, "plan.yaml")
		writeFile(t, path, text)
		return LoadFile(path)
	}
	p, err := load(plan("{method: POST, url: /orders, body_file: order.json}"))
	if err != nil {
		t.Fatalf("a plan with a body_file: %v", err)
	}
	if got, want := p.BodyPath(&p.Scenarios[0].Request), filepath.Join(dir, "order.json"); got != want {
		t.Errorf("BodyPath = %q, want %q", got, want)
	}
	for request, want := range map[string]string{
		"{url: /o, body_file: missing.json}":             "scenarios[0].request.body_file: cannot read the body's file",
		"{url: /o, body_file: .}":                        "scenarios[0].request.body_file: want a regular file",
		"{url: /o, body_file: order.json, body: x}":      "give one of body, json and body_file",
		"{url: /o, body_file: order.json, json: {a: 1}}": "give one of body, json and body_file",
	} {
		if _, err := load(plan(request)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("request %s: %v, want %q", request, err, want)
		}
	}
}
