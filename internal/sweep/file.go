package sweep

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// File is a sweep file (SWEEP.yaml): the plan, the launcher, the shapes as
// a list or a matrix, and the mode. Every {{.port}}, {{.workers}},
// {{.cpus}}, {{.memory}}, {{.memory_mb}} and {{.id}} in it (and in the plan
// file it names) is the shape's value; the plan's own templates
// ({{uuid}}, {{.msgid}}) are left alone.
type File struct {
	// Plan is the path of a plan file (relative to the sweep file) or the
	// plan inline.
	Plan     plan.Embedded `yaml:"plan"`
	Launcher FileLauncher  `yaml:"launcher"`
	// Configs are shapes as --configs writes them ("2@1/512m"), one or
	// more to an item; Matrix is the product of axes instead.
	Configs []string `yaml:"configs"`
	Matrix  *Matrix  `yaml:"matrix"`
	// Mode is "stairs" (the plan's levels, the default) or "find" (each
	// shape's edge under the plan's SLO, from Find's settings).
	Mode string   `yaml:"mode"`
	Find FileFind `yaml:"find"`
	// Need is a rate such as 1500/s; UsersPerRPS as --users-per-rps.
	Need        string  `yaml:"need"`
	UsersPerRPS float64 `yaml:"users_per_rps"`

	path string
	data []byte
}

// FileLauncher is a sweep file's launcher: kind local (the default),
// docker, podman or command, and the fields of that kind.
type FileLauncher struct {
	Kind string `yaml:"kind"`
	// Command starts the target (local).
	Command string `yaml:"command"`
	// Image, Port and Args run a container (docker, podman).
	Image string   `yaml:"image"`
	Port  int      `yaml:"port"`
	Args  []string `yaml:"args"`
	// Apply and Teardown are the user's own commands (command), each
	// bounded by Timeout.
	Apply    string        `yaml:"apply"`
	Teardown string        `yaml:"teardown"`
	Timeout  plan.Duration `yaml:"timeout"`
	// Env, Ready and ReadyTimeout are every kind's.
	Env          map[string]string `yaml:"env"`
	Ready        string            `yaml:"ready"`
	ReadyTimeout plan.Duration     `yaml:"ready_timeout"`
}

// FileFind is find mode's search: as find's --start, --max and
// --precision.
type FileFind struct {
	Start     string `yaml:"start"`
	Max       string `yaml:"max"`
	Precision string `yaml:"precision"`
}

// LoadFile reads and checks a sweep file. Problems name the file, the
// line and the field.
func LoadFile(path string) (*File, error) {
	data, err := plan.ReadLimited(path)
	if err != nil {
		return nil, invalid("read sweep file: %w", err)
	}
	f := &File{path: path, data: data}
	if err := plan.Decode(path, data, f); err != nil {
		return nil, invalid("%w", err)
	}
	if err := f.check(); err != nil {
		return nil, invalid("%w", err)
	}
	return f, nil
}

// check reports every problem of the file's settings, each at its line.
func (f *File) check() error {
	var ps plan.Problems
	add := func(field, format string, args ...any) {
		line, col := f.position(field)
		ps = append(ps, plan.Problem{File: f.path, Line: line, Col: col, Path: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !f.Plan.Given() {
		add("plan", "required: the path of a plan file, or the plan inline (target, load, scenarios)")
	}
	for _, field := range f.Launcher.missing() {
		add(field, "%s", f.Launcher.problem(field))
	}
	switch {
	case len(f.Configs) > 0 && f.Matrix != nil:
		add("matrix", "give the shapes as configs or as a matrix, not both")
	case len(f.Configs) == 0 && f.Matrix == nil:
		add("configs", "required: the shapes, as configs: [\"1@0.5/256Mi\", \"2@1/512Mi\"] or a matrix: {workers: [1, 2], cpus: [1, 2], memory: [512Mi]}")
	case f.Matrix != nil:
		if _, err := f.Matrix.Configs(); err != nil {
			add("matrix", "%v", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	default:
		if _, err := ParseConfigs(strings.Join(f.Configs, " ")); err != nil {
			add("configs", "%v", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	if f.Mode != "" && f.Mode != "stairs" && f.Mode != "find" {
		add("mode", "want stairs (the plan's levels) or find (each shape's edge), not %q", f.Mode)
	}
	if _, err := ParseNeed(f.Need); err != nil {
		add("need", "%v", err)
	}
	if f.UsersPerRPS < 0 {
		add("users_per_rps", "want a rate above 0, such as 0.5")
	}
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// position finds a field's line and column in the file (0 when it is not
// written there).
func (f *File) position(field string) (line, col int) {
	af, err := parser.ParseBytes(f.data, 0)
	if err != nil {
		return 0, 0
	}
	for field != "" {
		if p, err := yaml.PathString("$." + field); err == nil {
			if n, err := p.FilterFile(af); err == nil && n != nil && n.GetToken() != nil {
				return n.GetToken().Position.Line, n.GetToken().Position.Column
			}
		}
		field, _, _ = cutLast(field)
	}
	return 0, 0
}

// cutLast drops a field path's last element: "launcher.kind" → "launcher".
func cutLast(field string) (string, string, bool) {
	i := strings.LastIndexByte(field, '.')
	if i < 0 {
		return "", field, false
	}
	return field[:i], field[i+1:], true
}

// Shapes returns the file's shapes.
func (f *File) Shapes() ([]Config, error) {
	if f.Matrix != nil {
		return f.Matrix.Configs()
	}
	return ParseConfigs(strings.Join(f.Configs, " "))
}

// ShapePlan returns the plan as one shape runs it: the file (and the plan
// file it names) with the shape's values substituted, parsed again, so
// that a problem names its line.
func (f *File) ShapePlan(v Values) (*plan.Plan, error) {
	g := &File{}
	if err := plan.Decode(f.path, v.Substitute(f.data), g); err != nil {
		return nil, err
	}
	return g.Plan.Plan(v.Substitute)
}

// missing lists what the launcher lacks for its kind, by the sweep file's
// fields: launcher.command (local), launcher.image and launcher.port, a
// TCP port (docker, podman), launcher.apply (command), or launcher.kind
// for a kind there is none of. It is the one rule of what a launcher
// needs, for a sweep file and for the flags alike.
func (l *FileLauncher) missing() []string {
	switch l.Kind {
	case "", "local":
		if l.Command == "" {
			return []string{"launcher.command"}
		}
	case "docker", "podman":
		var fields []string
		if l.Image == "" {
			fields = append(fields, "launcher.image")
		}
		if l.Port < 1 || l.Port > 65535 {
			fields = append(fields, "launcher.port")
		}
		return fields
	case "command":
		if l.Apply == "" {
			return []string{"launcher.apply"}
		}
	default:
		return []string{"launcher.kind"}
	}
	return nil
}

// problem says, in a sweep file's terms, what is wrong with the field
// that missing named.
func (l *FileLauncher) problem(field string) string {
	switch field {
	case "launcher.command":
		return "required for the local launcher: the command that starts the target, e.g. \"server --port {{.port}}\""
	case "launcher.image":
		return fmt.Sprintf("required for the %s launcher: the image to run", l.Kind)
	case "launcher.port":
		return fmt.Sprintf("required for the %s launcher: the port the target listens on inside the container (1-65535)", l.Kind)
	case "launcher.apply":
		return "required for the command launcher: the command that applies a shape, e.g. \"helm upgrade app ./chart --set resources.limits.cpu={{.cpus}} --wait\""
	}
	return fmt.Sprintf("want local, docker, podman or command, not %q", l.Kind)
}

// NewLauncher builds the launcher a sweep file's launcher section (or the
// flags) describes.
func (l *FileLauncher) NewLauncher() (Launcher, error) {
	t := Target{Env: l.Env, Ready: l.Ready, ReadyTimeout: l.ReadyTimeout.Duration}
	switch l.Kind {
	case "", "local":
		return &Local{Target: t, Command: l.Command}, nil
	case "docker", "podman":
		return &Container{Target: t, Engine: l.Kind, Image: l.Image, Port: l.Port, Args: l.Args}, nil
	case "command":
		return &Commands{Target: t, Apply: l.Apply, Teardown: l.Teardown, Timeout: l.Timeout.Duration}, nil
	}
	return nil, invalid("launcher %q: want local, docker, podman or command", l.Kind)
}

// findFlags returns find mode's search settings, nil in stairs mode.
func (f *File) findFlags() *run.SearchFlags {
	if f.Mode != "find" {
		return nil
	}
	return &run.SearchFlags{Start: f.Find.Start, Max: f.Find.Max, Precision: f.Find.Precision}
}
