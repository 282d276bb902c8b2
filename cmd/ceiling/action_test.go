package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The GitHub action (action.yml, which runs scripts/ceiling-gate.sh) and
// the workflows of the documentation that use it agree with each other.
// What the gate does with ceiling's exit codes and outputs is tested in
// package cli, where those are.

// action is what action.yml says, read strictly: a key GitHub does not
// know (a typo) is an error here too.
type action struct {
	Name, Description string
	Branding          struct{ Icon, Color string }
	Inputs            map[string]struct {
		Description, Default string
		Required             bool
	}
	Outputs map[string]struct{ Description, Value string }
	Runs    struct {
		Using string
		Steps []struct {
			Name, ID, If, Uses, Shell, Run string
			WorkingDirectory               string `yaml:"working-directory"`
			With, Env                      map[string]string
		}
	}
}

// readAction reads action.yml strictly, and returns it with its text.
func readAction(t *testing.T) (action, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.UnmarshalWithOptions(raw, &a, yaml.Strict()); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a, string(raw)
}

// action.yml passes every input to the script, and the script reads no
// variable the action does not set; the action's outputs are the ones
// the script writes.
func TestActionRunsTheGate(t *testing.T) {
	a, raw := readAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "ceiling-gate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	checkActionInputs(t, a, raw[strings.Index(raw, "\nruns:"):])
	checkGateEnv(t, a, string(script))
	checkGateOutputs(t, a, string(script))
}

// checkActionInputs checks that the steps (runs, the action's text from
// its runs: key) use every input the action declares, each described, and
// no other.
func checkActionInputs(t *testing.T, a action, runs string) {
	t.Helper()
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`inputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(runs, -1) {
		used[m[1]] = true
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("the steps use inputs.%s, which action.yml does not declare", m[1])
		}
	}
	for name, in := range a.Inputs {
		if !used[name] {
			t.Errorf("input %s is declared but no step uses it", name)
		}
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}
}

// checkGateEnv checks that the gate step runs the script in bash, and sets
// every CEILING_ variable the script reads and no other.
func checkGateEnv(t *testing.T, a action, script string) {
	t.Helper()
	var gate map[string]string
	for _, s := range a.Runs.Steps {
		if s.ID == "gate" {
			gate = s.Env
			if s.Run != `bash "$GITHUB_ACTION_PATH/scripts/ceiling-gate.sh"` || s.Shell != "bash" {
				t.Errorf("the gate step runs %q in %q, want the script in bash", s.Run, s.Shell)
			}
		}
	}
	if gate == nil {
		t.Fatal("action.yml has no step with id gate")
	}
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{(CEILING_[A-Z_]+)`).FindAllStringSubmatch(script, -1) {
		read[m[1]] = true
		if _, ok := gate[m[1]]; !ok {
			t.Errorf("the script reads %s, which the action does not set", m[1])
		}
	}
	for k := range gate {
		if strings.HasPrefix(k, "CEILING_") && !read[k] {
			t.Errorf("the action sets %s, which the script does not read", k)
		}
	}
}

// checkGateOutputs checks that the action's outputs are the gate step's,
// and are the ones the script writes.
func checkGateOutputs(t *testing.T, a action, script string) {
	t.Helper()
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:'|\\n)([a-z][a-z-]*)=%s`).FindAllStringSubmatch(script, -1) {
		written[m[1]] = true
	}
	if len(written) == 0 {
		t.Fatal("the script writes no output")
	}
	for name, out := range a.Outputs {
		if want := "${{ steps.gate.outputs." + name + " }}"; out.Value != want || !written[name] {
			t.Errorf("output %s = %q (the script writes it: %v), want %q", name, out.Value, written[name], want)
		}
		delete(written, name)
	}
	for name := range written {
		t.Errorf("the script writes output %s, which action.yml does not declare", name)
	}
}

// blockLines are the lines of the shell blocks of a page marked
// <!-- doc-test: KIND ... --> (package cli's TestDocShellBlocks runs the
// blocks marked run), trimmed.
func blockLines(t *testing.T, page, kind string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", page))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	block := regexp.MustCompile("(?ms)^<!--\\s*doc-test:\\s*" + kind + "\\b[^\n]*-->\n```(?:sh|bash|shell|console)\\s*\n(.*?)^```")
	for _, m := range block.FindAllStringSubmatch(string(data), -1) {
		for line := range strings.Lines(m[1]) {
			lines[strings.TrimSpace(line)] = true
		}
	}
	return lines
}

// The shell blocks of README.md and docs/*.md marked ci (the demo, the tests) are run by
// .ci/run: a line of it has every word of the block's command (CI adds
// flags, such as -race).
func TestCIRunsTheCIBlocks(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, page := range pages {
		pages[i], _ = filepath.Rel(filepath.Join("..", ".."), page)
	}
	for _, page := range append([]string{"README.md"}, pages...) {
		for line := range blockLines(t, page, "ci") {
			cmd, _, _ := strings.Cut(line, "#")
			// `go run ./cmd/ceiling demo` is run by CI from a built binary:
			// its subcommand is what must be there.
			want := strings.Fields(strings.TrimPrefix(strings.TrimSpace(cmd), "go run ./cmd/ceiling "))
			if len(want) == 0 {
				continue
			}
			checked++
			if !ciRuns(string(ci), want) {
				t.Errorf("%s: a block marked ci, but no line of .ci/run runs %q", page, cmd)
			}
		}
	}
	if checked == 0 {
		t.Error("no command in a block marked ci: the check checked nothing")
	}
}

// ciRuns reports whether a line of ci, not a comment, has every word of
// want.
func ciRuns(ci string, want []string) bool {
	for line := range strings.Lines(ci) {
		words := strings.Fields(line)
		if !strings.HasPrefix(strings.TrimSpace(line), "#") && !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(words, w) }) {
			return true
		}
	}
	return false
}

// The workflows in the documentation give the action only inputs it
// has and read only outputs it has; the GitLab job's ceiling commands
// are those of a shell block that is run (package cli's
// TestDocShellBlocks).
func TestCIDocsMatchTheAction(t *testing.T) {
	a, _ := readAction(t)
	tested := blockLines(t, "docs/ci.md", "run")
	uses, gitlab := 0, 0
	for _, file := range []string{"README.md", "docs/ci.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
			text := block[1]
			if !strings.Contains(text, "ceiling-dev/ceiling@") && !strings.Contains(text, "script:") {
				continue
			}
			var doc any
			if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
				t.Errorf("%s: a YAML block does not parse: %v\n%s", file, err, text)
				continue
			}
			walkYAML(doc, func(m map[string]any) {
				uses += checkActionUse(t, a, file, text, m)
				gitlab += checkGitLabScript(t, tested, file, m)
			})
		}
	}
	if uses < 2 || gitlab < 3 {
		t.Errorf("found the action used %d times and %d GitLab ceiling commands: the check checked nothing", uses, gitlab)
	}
}

// checkActionUse checks a mapping m of a YAML block (text) of file that
// uses the action: its with: keys are the action's inputs, and what the
// block reads of its outputs are outputs it has. It returns 1 when m
// uses the action, else 0.
func checkActionUse(t *testing.T, a action, file, text string, m map[string]any) int {
	t.Helper()
	if u, _ := m["uses"].(string); !strings.HasPrefix(u, "ceiling-dev/ceiling@") {
		return 0
	}
	with, _ := m["with"].(map[string]any)
	for k := range with {
		if _, ok := a.Inputs[k]; !ok {
			t.Errorf("%s: the action is given %s:, which is not one of its inputs", file, k)
		}
	}
	if id, _ := m["id"].(string); id != "" {
		for _, o := range regexp.MustCompile(`steps\.`+regexp.QuoteMeta(id)+`\.outputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(text, -1) {
			if _, ok := a.Outputs[o[1]]; !ok {
				t.Errorf("%s: reads the action's output %s, which it does not have", file, o[1])
			}
		}
	}
	return 1
}

// checkGitLabScript checks that each ceiling command of a GitLab job's
// script: (a mapping m of file) is a line of a run block (tested), and
// returns how many it checked.
func checkGitLabScript(t *testing.T, tested map[string]bool, file string, m map[string]any) int {
	t.Helper()
	n := 0
	script, _ := m["script"].([]any)
	for _, line := range script {
		if s, _ := line.(string); strings.HasPrefix(s, "ceiling ") {
			n++
			if !tested[s] {
				t.Errorf("%s: the GitLab job runs %q, which no run block of docs/ci.md runs", file, s)
			}
		}
	}
	return n
}

// walkYAML calls f with every mapping in a decoded YAML document.
func walkYAML(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, e := range v {
			walkYAML(e, f)
		}
	case []any:
		for _, e := range v {
			walkYAML(e, f)
		}
	}
}
