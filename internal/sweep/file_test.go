package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/failure"
)

func sweepFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every problem of a sweep file is reported at once, each with the file,
// its line and the field.
func TestLoadFileProblems(t *testing.T) {
	path := sweepFile(t, `plan: plan.yaml
launcher:
  kind: kubernetes
  comand: server
configs: ["1@0.5/256m", "2@x/1g"]
matrix: {workers: [1], cpus: [1], memory: [1Gi]}
mode: fast
need: lots
`)
	_, err := LoadFile(path)
	if !errors.As(err, new(*failure.InputError)) {
		t.Fatalf("LoadFile = %v, want a failure.InputError", err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		path + ":4:3: launcher.comand: unknown key",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in\n%s", want, msg)
		}
	}
	// The unknown key stops the checks that follow the decoding; without
	// it, they name their lines too.
	path = sweepFile(t, `plan: plan.yaml
launcher:
  kind: kubernetes
configs: ["1@0.5/256m", "2@x/1g"]
matrix: {workers: [1], cpus: [1], memory: [1Gi]}
mode: fast
need: lots
`)
	_, err = LoadFile(path)
	msg = err.Error()
	t.Log(msg)
	for _, want := range []string{
		path + ":3:9: launcher.kind: want local, docker, podman or command, not \"kubernetes\"",
		path + ":5:", "matrix: give the shapes as configs or as a matrix, not both",
		path + ":6:7: mode: want stairs",
		path + ":7:7: need:",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in\n%s", want, msg)
		}
	}
}

// A sweep file's shapes as a matrix, the launcher's settings, and each
// shape's plan with the shape's values substituted, the plan's own
// templates kept.
func TestLoadFileShapePlan(t *testing.T) {
	path := sweepFile(t, `plan:
  target: http://127.0.0.1:{{.port}}
  load: {rates: [10], step: 1s}
  scenarios:
    - request: {url: "/?id={{uuid}}&w={{ .workers }}&m={{.memory_mb}}"}
launcher:
  command: server --port {{.port}}
  env: {WORKERS: "{{.workers}}"}
  ready: http://127.0.0.1:{{.port}}/health
matrix: {workers: [1, 2], cpus: [0.5, 1], memory: [256Mi]}
`)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := f.Shapes()
	if err != nil || len(shapes) != 4 || shapes[1].ID() != "1w-1c-256Mi" {
		t.Fatalf("shapes %v (%v), want the 2×2 matrix, cpus inner", shapes, err)
	}
	v := Values{"workers": 2, "cpus": "1", "memory": "256Mi", "memory_mb": 256, "id": "2w-1c-256Mi", "port": 4567}
	p, err := f.ShapePlan(v)
	if err != nil {
		t.Fatal(err)
	}
	if p.Target != "http://127.0.0.1:4567" || p.Scenarios[0].Request.URL != "/?id={{uuid}}&w=2&m=256" {
		t.Errorf("target %q, url %q; want the shape's values in, {{uuid}} kept", p.Target, p.Scenarios[0].Request.URL)
	}
	l, err := f.Launcher.NewLauncher()
	if local, ok := l.(*Local); err != nil || !ok || local.Command != "server --port {{.port}}" || local.Env["WORKERS"] != "{{.workers}}" {
		t.Errorf("launcher %#v (%v), want the local one with its templates", l, err)
	}
}

// A plan inside the sweep file with a problem names the sweep file's line.
func TestLoadFileInlinePlanProblem(t *testing.T) {
	path := sweepFile(t, `configs: ["1@1/256m"]
launcher: {command: server}
plan:
  target: http://127.0.0.1:{{.port}}
  load: {rates: [10], stepp: 1s}
  scenarios: [{request: {url: /}}]
`)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ShapePlan(Values{"port": 1})
	if err == nil || !strings.Contains(err.Error(), path+":5:") || !strings.Contains(err.Error(), "stepp") {
		t.Errorf("ShapePlan = %v, want the problem at %s:5 naming stepp", err, path)
	}
}

// A plan file named by path is relative to the sweep file and gets the
// shape's values too.
func TestLoadFilePlanPath(t *testing.T) {
	path := sweepFile(t, "plan: plans/p.yaml\nconfigs: [\"1@1/256m\"]\nlauncher: {command: server}\n")
	os.MkdirAll(filepath.Join(filepath.Dir(path), "plans"), 0o755)
	os.WriteFile(filepath.Join(filepath.Dir(path), "plans", "p.yaml"), []byte("target: http://127.0.0.1:{{.port}}\nload: {rates: [10], step: 1s}\nscenarios: [{request: {url: /}}]\n"), 0o644)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.ShapePlan(Values{"port": 99})
	if err != nil || p.Target != "http://127.0.0.1:99" {
		t.Errorf("plan %+v (%v), want the plan file with the shape's port", p, err)
	}
}

func TestSubstitute(t *testing.T) {
	v := Values{"workers": 4, "cpus": "0.5", "memory": "1Gi", "memory_mb": 1024, "id": "4w-0.5c-1Gi", "port": 8080}
	in := "{{.port}} {{ .workers }} {{.cpus}} {{.memory}} {{.memory_mb}} {{.id}} {{uuid}} {{.msgid}} {{.portal}} {{-.port-}}"
	want := "8080 4 0.5 1Gi 1024 {{.id}} {{uuid}} {{.msgid}} {{.portal}} 8080"
	if got := string(v.Substitute([]byte(in))); got != want {
		t.Errorf("Substitute = %q, want %q", got, want)
	}
}

// The container launcher's command line: the shape's limits, the port on
// loopback, environment names without their values, each argument whole
// (no shell: the same on Windows).
func TestContainerRunArgs(t *testing.T) {
	k := &Container{Engine: "podman", Image: "shop:1.2", Port: 8080, Args: []string{"--workers", "2 3"}}
	got := strings.Join(k.runArgs("podman", "ceiling-x", Config{Workers: 2, CPUs: 1.5, MemoryMB: 1024}, Values{"port": 4000}, map[string]string{"WORKERS": "2", "TOKEN": "s"}, k.Args), "|")
	want := "podman|run|-d|--name|ceiling-x|-p|127.0.0.1:4000:8080|--cpus|1.5|--memory|1024m|--memory-swap|1024m|-e|TOKEN|-e|WORKERS|shop:1.2|--workers|2 3"
	if got != want {
		t.Errorf("runArgs =\n%s\nwant\n%s", got, want)
	}
}

// A plan with a var (or an extract) named as a shape's value is refused:
// its {{.port}} was replaced by the shape's.
func TestShadowed(t *testing.T) {
	path := sweepFile(t, `configs: ["1@1/256m"]
launcher: {command: server}
plan:
  target: http://127.0.0.1:{{.port}}
  vars: {port: "8080"}
  load: {rates: [10], step: 1s}
  scenarios: [{request: {url: "/?p={{.port}}"}}]
`)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.ShapePlan(Values{"port": 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := Shadowed(p); err == nil || !strings.Contains(err.Error(), `"port"`) {
		t.Errorf("Shadowed = %v, want the plan's own port named", err)
	}
}
