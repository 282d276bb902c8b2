package sweep

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Flags are `ceiling sweep`'s own flags. With a sweep file, each one the
// user gives overrides the file; without, they are the whole sweep (the
// seed's flag form).
type Flags struct {
	Configs, Launcher, Cmd, Ready, ReadyTimeout string
	Env                                         []string
	Image                                       string
	Port                                        int
	Apply, Teardown, Plan                       string
	Find                                        bool
	Search                                      run.SearchFlags
	Need                                        string
	UsersPerRPS                                 float64
	Out, HTML                                   string
	Resume, Markdown, Quiet                     bool
}

// Register adds the flags to fs, each under its help group.
func (f *Flags) Register(fs *pflag.FlagSet) {
	flaggroup.In(fs, flaggroup.Shape, func() {
		fs.StringVar(&f.Configs, "configs", "", `the shapes, workers@cpus/memory: "1@0.5/256m 2@1/512m 4@2/1g"`)
		fs.StringVar(&f.Launcher, "launcher", "", "how each shape's target starts: local (default), docker, podman or command")
		fs.StringVar(&f.Cmd, "cmd", "", "local: the command that starts the target (a template)")
		fs.StringArrayVar(&f.Env, "env", []string{"WORKERS={{.workers}}"}, "the target's environment, KEY=template (repeatable)")
		fs.StringVar(&f.Ready, "ready", "", "a URL that answers once the target is up (a template)")
		fs.StringVar(&f.ReadyTimeout, "ready-timeout", "", "how long the target may take to answer --ready (default 30s)")
		fs.StringVar(&f.Image, "image", "", "docker, podman: the image to run")
		fs.IntVar(&f.Port, "port", 0, "docker, podman: the port the target listens on in the container")
		fs.StringVar(&f.Apply, "apply", "", "command: your command that applies a shape, e.g. helm upgrade ... --wait (a template)")
		fs.StringVar(&f.Teardown, "teardown", "", "command: your command that removes it after the run (a template)")
		fs.StringVar(&f.Plan, "plan", "", "the plan file each shape runs (without a sweep file)")
	})
	flaggroup.In(fs, flaggroup.Search, func() {
		fs.BoolVar(&f.Find, "find", false, "search each shape for its edge under the SLO instead of running the stairs")
		fs.StringVar(&f.Search.Start, "start", "", "--find: the first level (default the plan's first)")
		fs.StringVar(&f.Search.Max, "max", "", "--find: the highest level to try")
		fs.StringVar(&f.Search.Precision, "precision", "5%", "--find: stop narrowing when pass and fail are this close")
	})
	flaggroup.In(fs, flaggroup.Output, func() {
		fs.StringVar(&f.Need, "need", "", "mark the smallest shape that holds this rate, e.g. 1500/s")
		fs.Float64Var(&f.UsersPerRPS, "users-per-rps", 0.5, "requests a second one active user makes, for est. users")
		fs.StringVar(&f.Out, "out", "sweep.json", "where to write sweep.json; each shape's result.json and logs go in the folder named by its stem beside it (./sweep/<shape id>/ by default)")
		fs.StringVar(&f.HTML, "html", "", "also write the HTML report (bar charts) to this file")
		fs.BoolVar(&f.Resume, "resume", false, "keep the shapes an earlier sweep.json at --out finished; run the rest")
		fs.BoolVar(&f.Markdown, "md", false, "print the table as Markdown, with Helm values for each shape")
		fs.BoolVar(&f.Quiet, "quiet", false, "no notes on stderr")
	})
}

// Spec builds the sweep from a sweep file (none when file is "") and the
// flags the user set (changed reports one by name), with the quick flags
// (--url, --rate, --slo...) applied to every shape's plan; --url,
// --target and --prom are templates of the shape. args is the command
// line, for sweep.json (its secrets redacted). Its errors are
// *failure.InputError: a problem with what the user gave.
func (f *Flags) Spec(file string, q plan.Quick, changed func(string) bool, args []string) (Spec, error) {
	sf := &File{}
	if file != "" {
		var err error
		if sf, err = LoadFile(file); err != nil {
			return Spec{}, err
		}
	}
	l, err := f.launcher(sf.Launcher, file == "", changed)
	if err != nil {
		return Spec{}, err
	}
	launcher, err := l.NewLauncher()
	if err != nil {
		return Spec{}, err
	}
	s := Spec{Launcher: launcher, Out: f.Out, Resume: f.Resume, UsersPerRPS: cmp.Or(sf.UsersPerRPS, 0.5), Find: f.search(sf, changed),
		Command: "ceiling " + strings.Join(secret.Names(nil).Args(args), " ")}
	if changed("users-per-rps") {
		s.UsersPerRPS = f.UsersPerRPS
	}
	need := sf.Need
	if changed("need") {
		need = f.Need
	}
	if s.Need, err = ParseNeed(need); err != nil {
		return Spec{}, invalid("--need %w", err)
	}
	if s.Configs, err = f.shapes(sf, file, changed); err != nil {
		return Spec{}, err
	}
	if file == "" && f.Plan == "" && q.URL == "" {
		return Spec{}, invalid("nothing to run: give a sweep file, --plan, or --url with --rate or --vus")
	}
	if file != "" && f.Plan != "" {
		return Spec{}, invalid("--plan: the sweep file %s has its plan; give one or the other", file)
	}
	s.Plan = func(v Values) (*plan.Plan, error) { return f.plan(sf, file, q, changed, v) }
	s.Fingerprint = fingerprint(sf.data, f.planData(), q, l, s.Find)
	return s, nil
}

// launcher is the sweep file's launcher l with the launcher's flags the
// user set over it. Without a sweep file (alone), the flags must give
// what their kind of launcher needs (FileLauncher.missing); a kind there
// is none of is NewLauncher's to refuse.
func (f *Flags) launcher(l FileLauncher, alone bool, changed func(string) bool) (FileLauncher, error) {
	set := func(name string, dst *string, v string) {
		if changed(name) {
			*dst = v
		}
	}
	set("launcher", &l.Kind, f.Launcher)
	set("cmd", &l.Command, f.Cmd)
	set("ready", &l.Ready, f.Ready)
	set("image", &l.Image, f.Image)
	set("apply", &l.Apply, f.Apply)
	set("teardown", &l.Teardown, f.Teardown)
	if changed("port") {
		l.Port = f.Port
	}
	if changed("ready-timeout") {
		d, err := time.ParseDuration(f.ReadyTimeout)
		if err != nil || d <= 0 {
			return l, invalid("--ready-timeout %q: want a duration such as 60s", f.ReadyTimeout)
		}
		l.ReadyTimeout.Duration = d
	}
	if changed("env") || l.Env == nil {
		l.Env = map[string]string{}
		for _, e := range f.Env {
			k, v, ok := strings.Cut(e, "=")
			if !ok || k == "" {
				return l, invalid("--env %q: want KEY=value", e)
			}
			l.Env[k] = v
		}
	}
	if missing := l.missing(); alone && len(missing) > 0 {
		switch missing[0] {
		case "launcher.command":
			return l, invalid("--cmd: required: the command that starts the target (or a sweep file)")
		case "launcher.image", "launcher.port":
			return l, invalid("--launcher %s needs --image and --port (the port the target listens on in the container)", l.Kind)
		case "launcher.apply":
			return l, invalid("--launcher command needs --apply (your command that applies a shape)")
		}
	}
	return l, nil
}

// search is find mode's settings: the flags' with --find, else the sweep
// file's find mode (its precision 5% unless it says), nil in stairs mode.
func (f *Flags) search(sf *File, changed func(string) bool) *run.SearchFlags {
	if f.Find {
		f.Search.RateGiven = changed("rate")
		return &f.Search
	}
	find := sf.findFlags()
	if find != nil && find.Precision == "" {
		find.Precision = "5%"
	}
	return find
}

// shapes are the shapes to run: --configs when given or without a sweep
// file, else the sweep file's.
func (f *Flags) shapes(sf *File, file string, changed func(string) bool) ([]Config, error) {
	if changed("configs") || file == "" {
		configs, err := ParseConfigs(f.Configs)
		if err != nil {
			return nil, invalid("--configs: %w", err)
		}
		return configs, nil
	}
	configs, err := sf.Shapes()
	if err != nil {
		return nil, invalid("%s: %w", file, err)
	}
	return configs, nil
}

// planData is the --plan file's contents, for the fingerprint (nil when
// there is none, or it cannot be read: the run says why).
func (f *Flags) planData() []byte {
	if f.Plan == "" {
		return nil
	}
	data, _ := plan.ReadLimited(f.Plan)
	return data
}

// fingerprint hashes what a sweep's figures depend on: the sweep file,
// the plan file, the quick flags, the launcher and the search.
func fingerprint(file, planFile []byte, q plan.Quick, l FileLauncher, find *run.SearchFlags) string {
	h := sha256.New()
	h.Write(file)
	h.Write(planFile)
	fmt.Fprintf(h, "%#v\n%#v\n%#v", q, l, find)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// plan is the plan one shape runs: the sweep file's, the --plan file, or
// none, with the quick flags applied.
func (f *Flags) plan(sf *File, file string, q plan.Quick, changed func(string) bool, v Values) (*plan.Plan, error) {
	var err error
	for _, s := range []*string{&q.URL, &q.Target, &q.Prom} {
		if *s, err = v.Render(*s); err != nil {
			return nil, err
		}
	}
	p := &plan.Plan{}
	switch {
	case file != "":
		p, err = sf.ShapePlan(v)
	case f.Plan != "":
		p, err = (&plan.Embedded{Path: f.Plan}).Plan(v.Substitute)
	case q.URL == "":
		return nil, errors.New("nothing to run: give a sweep file, --plan, or --url with --rate or --vus")
	}
	if err != nil {
		return nil, err
	}
	if err := Shadowed(p); err != nil {
		return nil, err
	}
	if err := p.Apply(&q, changed); err != nil {
		return nil, err
	}
	return p, nil
}
