package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/freeport"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Spec is a sweep: the shapes, how each starts the target, and the plan
// each runs.
type Spec struct {
	Configs []Config
	// Launcher starts and stops the target under each shape.
	Launcher Launcher
	// Plan returns the (not yet validated) plan one shape runs, its
	// templates rendered with the shape's values.
	Plan func(Values) (*plan.Plan, error)
	// Find, when set, searches each shape for its edge (the plan's SLO)
	// instead of running the plan's stairs.
	Find *run.SearchFlags
	// UsersPerRPS converts throughput into estimated active users (by
	// default 0.5 requests a second per active user). Zero: 0.5.
	UsersPerRPS float64
	// Need, when set, marks the smallest shape that holds this many
	// requests a second within its verdict and SLO.
	Need float64
	// Out is sweep.json's path; each shape's result.json goes in a folder
	// beside it, named by the file's stem and the shape's ID.
	Out string
	// Resume keeps the shapes an earlier sweep.json at Out finished (by
	// ID, their result.json still there) and runs only the others, when
	// that sweep had the same Fingerprint.
	Resume bool
	// Fingerprint names what the shapes' figures depend on (the plan, the
	// launcher, the load and its flags, the mode): --resume keeps rows
	// only from a sweep with the same.
	Fingerprint string
	// Command is the sweep's command line, for sweep.json (secrets
	// redacted by the caller).
	Command string
	// Run holds the options every shape's run shares (progress, version,
	// the reproduce line, the Lifecycle that the launcher also gives what
	// it starts to); Out is set per shape.
	Run run.Options
	// Connect, if set, completes a shape's run options for its plan: the
	// agents that run its load (--agents), connected per shape.
	Connect func(*plan.Plan, *run.Options) error
	// OnShape, if set, is called with the sweep so far before each shape
	// is started (next: its name) and after the last row is written (next:
	// ""), for the live page, from the goroutine of Run: the result is
	// Run's, to be read during the call only.
	OnShape func(r *Result, next string)
}

// Values are what a shape's templates read: {{.workers}}, {{.cpus}},
// {{.memory}} ("512Mi"), {{.memory_mb}}, {{.id}} (the shape's ID,
// "2w-1c-512Mi") and {{.port}} (a free loopback port for this shape's
// target).
type Values map[string]any

// Render renders a template with v; an error names the template.
func (v Values) Render(text string) (string, error) {
	t, err := template.New("").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, map[string]any(v)); err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	return b.String(), nil
}

// fileKeys are the shape's values Substitute replaces in a file ({{.id}}
// is left to the plan, where it is a likely name of its own).
var fileKeys = []string{"workers", "cpus", "memory_mb", "memory", "port"}

// shapeKey matches a template action naming one of fileKeys.
var shapeKey = regexp.MustCompile(`\{\{-?\s*\.(` + strings.Join(fileKeys, "|") + `)\s*-?\}\}`)

// Substitute replaces the shape's own template actions in a file's text,
// {{.port}}, {{.workers}}, {{.cpus}}, {{.memory}} and {{.memory_mb}}, and
// leaves every other action alone: a plan's {{uuid}} and {{.msgid}} are
// the plan's. Lines stay where they were, so a problem still names its
// line. A plan that names a value of its own so is refused (Shadowed).
func (v Values) Substitute(text []byte) []byte {
	return shapeKey.ReplaceAllFunc(text, func(m []byte) []byte {
		return fmt.Appendf(nil, "%v", v[string(shapeKey.FindSubmatch(m)[1])])
	})
}

// Shadowed returns an error when the plan has a var, an extract or a
// users' column named as one of the shape's values: Substitute replaced
// its {{.port}} (say) with the shape's.
func Shadowed(p *plan.Plan) error {
	for _, name := range p.Names() {
		if slices.Contains(fileKeys, name) {
			return fmt.Errorf("the plan's own %q has the name of the sweep's {{.%s}}, which replaced it: rename it", name, name)
		}
	}
	return nil
}

// values returns a shape's template values with a free port, below the
// ephemeral range (freeport): a port the kernel handed out for port 0 and
// let go could be given to another listener before the shape's target
// binds it, and the shape's ready check would pass on that one (seen with
// sweeps side by side in one test process: a target that never started
// measured as OVERLOADED).
func values(c Config) (Values, error) {
	port, err := freeport.Loopback()
	if err != nil {
		return nil, err
	}
	return Values{"workers": c.Workers, "cpus": formatCPUs(c.CPUs), "memory": formatMemory(c.MemoryMB), "memory_mb": c.MemoryMB, "id": c.ID(), "port": port}, nil
}

// ParseNeed reads --need, a rate such as "1500/s" ("" is none).
func ParseNeed(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	rates, err := plan.ParseRates(strings.TrimSuffix(s, "/s"))
	if err != nil || len(rates) != 1 {
		return 0, fmt.Errorf("%q: want one rate such as 1500/s", s)
	}
	return rates[0], nil
}

// ErrNothingStarted is the error of a sweep in which every shape FAILED TO
// START: it measured nothing (its table says why each did not start).
var ErrNothingStarted = errors.New("every shape failed to start: the sweep measured nothing")

// Run starts the target under each shape in turn, runs the plan against
// it, stops it, and writes sweep.json after every shape, so that an
// interrupted sweep keeps every finished shape. A shape whose target never
// became ready is FAILED TO START, and the sweep goes on; when every shape
// failed so, it returns ErrNothingStarted with the result. A preflight that
// saw the target refuse every scenario's request (failure.ErrRefused) stops
// the sweep: the next shapes would run the same plan. It returns
// failure.ErrInterrupted when ctx was cancelled.
func Run(ctx context.Context, s Spec) (*Result, error) {
	if s.UsersPerRPS <= 0 {
		s.UsersPerRPS = 0.5
	}
	r := &Result{Schema: Schema, Command: s.Command, StartedAt: time.Now().Round(0), UsersPerRPS: s.UsersPerRPS, Need: s.Need, Fingerprint: s.Fingerprint, Configs: []Row{}, Lessons: []string{},
		strict: true} // until a shape's plan says (every shape's is the same plan)
	if s.Find != nil {
		r.Mode = "find"
	}
	// A sweep killed before it could clean up (kill -9) left its shape's
	// group, perhaps with its target in it: removed now, and said.
	if stale, err := RemoveStale(); (len(stale) > 0 || err != nil) && s.Run.OnNote != nil {
		msg := fmt.Sprintf("removed %d cgroups left by a ceiling that no longer runs (killed before it could remove them), and what ran in them: %s",
			len(stale), strings.Join(stale, ", "))
		if err != nil {
			msg += fmt.Sprintf(" (some could not be removed: %v)", err)
		}
		s.Run.OnNote(msg)
	}
	done := map[string]Row{}
	if s.Resume {
		var err error
		if done, err = finished(s.Out, s.Fingerprint); err != nil {
			return nil, err
		}
	}
	dir := shapesDir(s.Out)
	for i, c := range s.Configs {
		if ctx.Err() != nil {
			r.Interrupted, r.Unfinished = true, false
			r.judge()
			return r, errors.Join(failure.ErrInterrupted, r.write(s.Out))
		}
		if row, ok := done[c.ID()]; ok {
			if s.Run.OnNote != nil {
				s.Run.OnNote(fmt.Sprintf("shape %s: kept from %s (--resume)", c.Name(), s.Out))
			}
			r.Configs = append(r.Configs, row)
			r.Resumed++
			continue
		}
		if s.OnShape != nil {
			s.OnShape(r, c.Name())
		}
		row, err := s.one(ctx, c, filepath.Join(dir, c.ID(), "result.json"), r)
		if row != nil {
			r.Configs = append(r.Configs, *row)
		}
		if errors.Is(err, failure.ErrInterrupted) || ctx.Err() != nil {
			// A run cut short returns its result without an error: the
			// sweep stops here all the same, and says so.
			r.Interrupted, err = true, failure.ErrInterrupted
		}
		// Until the last write, the file says the sweep is unfinished, and
		// marks no best: a kill -9 now leaves a file that says so.
		r.Unfinished = err == nil && i < len(s.Configs)-1
		r.judge()
		if werr := r.write(s.Out); werr != nil || err != nil {
			return r, errors.Join(err, werr)
		}
	}
	r.Unfinished = false
	r.judge()
	if s.OnShape != nil {
		s.OnShape(r, "")
	}
	if err := r.write(s.Out); err != nil {
		return r, err
	}
	if len(r.Configs) > 0 && !slices.ContainsFunc(r.Configs, func(row Row) bool { return row.State != FailedToStart }) {
		return r, ErrNothingStarted
	}
	return r, nil
}

// shapesDir is the folder beside sweep.json that holds the shapes'
// folders: its path without the extension ("sweep" for sweep.json), or
// with "-shapes" added when it has none.
func shapesDir(out string) string {
	if dir := strings.TrimSuffix(out, filepath.Ext(out)); dir != out {
		return dir
	}
	return out + "-shapes"
}

// finished reads the rows of an earlier sweep.json at path that are
// complete: measured to the end (not interrupted, not failed to start, its
// target not dead),
// their result.json still there. No file is no row; a file from a sweep
// with another fingerprint is an error: its figures are of another load.
func finished(path, fingerprint string) (map[string]Row, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Row{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	var old Result
	if err := json.Unmarshal(data, &old); err != nil || old.Schema != Schema {
		return nil, invalid("--resume: %s is not a %s file (%v)", path, Schema, err)
	}
	if old.Fingerprint != fingerprint {
		return nil, invalid("--resume: %s is from a sweep with another plan, launcher, load or mode: its shapes would not compare with this one's (use another --out, or leave --resume out to start again)", path)
	}
	out := map[string]Row{}
	for _, row := range old.Configs {
		if row.State == FailedToStart || row.State == TargetDied || row.State == "INTERRUPTED" || row.State == "" {
			continue
		}
		if _, err := os.Stat(row.Result); err == nil {
			out[row.ID] = row
		}
	}
	return out, nil
}

// one runs the plan against one shape.
func (s *Spec) one(ctx context.Context, c Config, out string, r *Result) (*Row, error) {
	v, err := values(c)
	if err != nil {
		return nil, err
	}
	p, err := s.Plan(v)
	if err != nil {
		return nil, invalid("%s: %w", c.Name(), err)
	}
	r.strict = p.Strict == nil || *p.Strict
	row := &Row{Name: c.Name(), ID: c.ID(), Workers: c.Workers, CPUs: c.CPUs, MemoryMB: c.MemoryMB, Result: out}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	if s.Run.OnNote != nil {
		s.Run.OnNote(fmt.Sprintf("shape %s: starting the target (port %v)", c.Name(), v["port"]))
	}
	stop, enforced, err := s.Launcher.Start(ctx, c, v, p, filepath.Dir(out), s.Run.Lifecycle)
	switch {
	case errors.As(err, new(*failure.InputError)):
		return nil, fmt.Errorf("%s: %w", c.Name(), err)
	case ctx.Err() != nil:
		return nil, failure.ErrInterrupted
	case err != nil:
		row.State, row.Error, row.LogTail = FailedToStart, err.Error(), logTail(out)
		return row, nil
	}
	defer func() {
		if err := stop(); err != nil {
			row.Warnings = append(row.Warnings, "stopping the target: "+err.Error())
		}
	}()
	row.Limits, row.CPUsEffective = enforced.How, enforced.CPUs
	if err := p.Validate(); err != nil {
		return nil, invalid("%s: %w", c.Name(), err)
	}
	o := s.Run
	o.Out = out
	o.RefusedStops = true // the same plan would be refused under every shape
	if s.Connect != nil {
		if err := s.Connect(p, &o); err != nil {
			var bad *failure.InputError
			if errors.As(err, &bad) {
				return nil, invalid("%s: %w", c.Name(), err)
			}
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
	}
	sess, err := run.Open(ctx, p, o)
	if err != nil {
		var bad *failure.InputError
		switch {
		case ctx.Err() != nil:
			return nil, failure.ErrInterrupted
		case errors.As(err, &bad):
			return nil, invalid("%s: %w", c.Name(), err)
		case errors.Is(err, failure.ErrRefused):
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		row.State, row.Error, row.LogTail = FailedToStart, err.Error(), logTail(out)
		return row, nil
	}
	defer sess.Close()
	var res *results.Result
	if s.Find != nil {
		cfg, cerr := s.Find.Config(p)
		if cerr != nil {
			return nil, invalid("%s: %w", c.Name(), cerr)
		}
		res, err = run.Find(ctx, sess, cfg)
	} else {
		res, err = sess.Run(ctx)
	}
	if res != nil {
		row.fill(res, r.UsersPerRPS)
	}
	var died *run.TargetDiedError
	if errors.As(err, &died) && ctx.Err() == nil {
		// A row of its own, and the sweep goes on to the next shape.
		row.died(died, enforced.Group, out)
		err = nil
	}
	return row, err
}

// plural writes n things: "1 OOM kill", "2 OOM kills".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// died makes the row of a shape whose target died during its run: TARGET
// DIED, why (OOM-killed at the shape's memory limit only when its cgroup
// counted an OOM kill), when, and its log's tail. Its rates and latencies
// are left out: they measured a target on its way down, not the shape.
// Its CPU and peak memory stay: they say how it got there.
func (row *Row) died(d *run.TargetDiedError, group *Limits, out string) {
	cause, evidence := d.Exit.String(), ""
	if group != nil {
		ev, err := group.MemoryEvents()
		at := "at " + memoryText(row.MemoryMB)
		if row.MemoryMB <= 0 {
			at = "(the shape sets no memory limit: the machine's memory ran out)"
		}
		switch {
		case err != nil:
			evidence = "; its cgroup's memory counters could not be read: " + err.Error()
		case ev.OOMKills > 0 && d.Exit.Signal == "SIGKILL":
			cause = "OOM-killed " + at
			evidence = fmt.Sprintf("; its cgroup counted %s", plural(ev.OOMKills, "OOM kill"))
		case ev.OOMKills > 0:
			cause += ", after an OOM kill in its group " + at
		case ev.OOMKills < 0 && ev.LimitHits > 0:
			evidence = fmt.Sprintf("; its memory reached the limit %s %s (this kernel does not count OOM kills)", plural(ev.LimitHits, "time"), at)
		}
	}
	*row = Row{Name: row.Name, ID: row.ID, Workers: row.Workers, CPUs: row.CPUs, MemoryMB: row.MemoryMB,
		CPUPct: row.CPUPct, RSSMB: row.RSSMB, TargetRate: row.TargetRate, Limits: row.Limits, CPUsEffective: row.CPUsEffective,
		Result: row.Result, Warnings: row.Warnings,
		State: TargetDied, Died: cause, Error: d.Error() + evidence, LogTail: logTail(out)}
}

// fill takes a shape's figures from its run: the step at its edge (find),
// or the last step, the top of the stairs (a plan of one level gives one
// level per shape).
func (row *Row) fill(res *results.Result, usersPerRPS float64) {
	if len(res.Steps) == 0 {
		row.State = "NO STEP"
		return
	}
	s := res.Steps[len(res.Steps)-1]
	if e := res.Edge; e != nil {
		row.Edge = e.Rate
		if e.VUs > 0 {
			row.Edge = float64(e.VUs)
		}
		for _, st := range res.Steps {
			if st.Index == e.Step {
				s = st
			}
		}
	} else if res.Search != nil {
		row.Error = report.FindAnswer(res) // no edge: the search says why
	}
	row.Throughput, row.ErrorRate = s.Throughput, s.ErrorRate
	row.P50MS, row.P95MS, row.P99MS = s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99
	row.State, row.SLOPassed = s.Verdict, s.SLOPassed
	row.EstUsers = s.Throughput / usersPerRPS
	if row.CPUsEffective > 0 {
		row.PerCPU = s.Throughput / row.CPUsEffective
	}
	if t := s.Target; t != nil && t.SourceSamples > 0 {
		row.CPUPct, row.RSSMB = &t.CPUPct, &t.RSSMaxMB
	}
	row.TargetRate = s.TargetRate
	switch {
	case res.Search != nil:
		row.Unlimited = res.Search.Outcome == "no_failure"
	case s.TargetRate > 0:
		row.Unlimited = s.Throughput >= 0.97*s.TargetRate
	}
	if res.Interrupted {
		row.State = "INTERRUPTED"
	}
}

// logTail returns the last lines (at most 2 KB) of the newest log in a
// shape's folder (the target's output, the apply's, the container run's),
// for a shape that failed to start; a line that mentions a secret word
// (token, password, authorization...) is withheld.
func logTail(out string) string {
	var newest string
	var at time.Time
	for _, f := range []string{out + ".target.log", filepath.Join(filepath.Dir(out), "target.log"), filepath.Join(filepath.Dir(out), "apply.log"), filepath.Join(filepath.Dir(out), "run.log")} {
		if st, err := os.Stat(f); err == nil && st.Size() > 0 && st.ModTime().After(at) {
			newest, at = f, st.ModTime()
		}
	}
	if newest == "" {
		return ""
	}
	return secret.Tail(newest, 10, 2048)
}
