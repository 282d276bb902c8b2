package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// testLauncher starts nothing (the target is the test's own server); it
// calls before with each shape before it runs.
type testLauncher struct{ before func(Config) }

func (l testLauncher) Start(_ context.Context, c Config, _ Values, _ *plan.Plan, _ string, _ *control.Lifecycle) (func() error, Enforced, error) {
	l.before(c)
	return func() error { return nil }, Enforced{How: "not enforced: a test"}, nil
}

// readSweep reads sweep.json as it is on disk.
func readSweep(t *testing.T, path string) Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Every write of sweep.json before the last says unfinished and marks no
// shape best: a ceiling killed (kill -9) between two shapes leaves a file
// that says it is partial, not one that names the best of a sweep it did
// not finish. The last write marks the best, and is finished.
func TestSweepFileUnfinishedUntilItsLastWrite(t *testing.T) {
	t.Parallel()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Body: "ok"})
	out := filepath.Join(t.TempDir(), "sweep.json")
	configs, err := ParseConfigs("1@1/256m 2@1/256m 4@1/256m")
	if err != nil {
		t.Fatal(err)
	}
	var seen []Result // the file as each shape after the first began
	s := Spec{
		Configs: configs,
		Launcher: testLauncher{before: func(c Config) {
			if c.ID() != configs[0].ID() {
				seen = append(seen, readSweep(t, out))
			}
		}},
		Plan: func(Values) (*plan.Plan, error) {
			return plan.Parse("plan.yaml", fmt.Appendf(nil, `
target: %s
load: {rates: [20], step: 200ms, warmup: 0s}
scenarios: [{request: {url: /}}]
`, srv.URL))
		},
		Out: out,
	}
	if _, err := Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("sweep.json read before %d shapes, want 2", len(seen))
	}
	for i, r := range seen {
		if !r.Unfinished || len(r.Configs) != i+1 {
			t.Errorf("sweep.json after %d shapes: unfinished %v, %d rows; want unfinished, %d rows", i+1, r.Unfinished, len(r.Configs), i+1)
		}
		for _, c := range r.Configs {
			if c.Best || c.Needed {
				t.Errorf("sweep.json after %d shapes: %s is best %v, needed %v before the sweep ended", i+1, c.Name, c.Best, c.Needed)
			}
		}
	}
	final := readSweep(t, out)
	best := 0
	for _, c := range final.Configs {
		if c.Best {
			best++
		}
	}
	if final.Unfinished || len(final.Configs) != 3 || best != 1 {
		t.Errorf("final sweep.json: unfinished %v, %d rows, %d best; want finished, 3 rows, 1 best", final.Unfinished, len(final.Configs), best)
	}
}

// badLauncher fails to start every shape with err.
type badLauncher struct{ err error }

func (l badLauncher) Start(context.Context, Config, Values, *plan.Plan, string, *control.Lifecycle) (func() error, Enforced, error) {
	return nil, Enforced{}, l.err
}

// A problem with the sweep's own input stops the sweep as bad input (a
// failure.InputError, exit 2), whether its plan does not parse or a
// launcher's template does not render; a target that does not start is
// its shape's row, and the sweep goes on.
func TestRunInvalidInput(t *testing.T) {
	configs, err := ParseConfigs("1@1/256m")
	if err != nil {
		t.Fatal(err)
	}
	good := func(Values) (*plan.Plan, error) {
		return plan.Parse("plan.yaml", []byte("target: http://127.0.0.1:1\nload: {rates: [1], step: 1s}\nscenarios: [{request: {url: /}}]\n"))
	}
	for _, tt := range []struct {
		name     string
		launcher Launcher
		plan     func(Values) (*plan.Plan, error)
		want     string // "" : not bad input
	}{
		{"a plan that does not parse", badLauncher{}, func(Values) (*plan.Plan, error) { return nil, errors.New("plan.yaml:1:1: no target") },
			"invalid sweep: " + configs[0].Name() + ": plan.yaml:1:1: no target"},
		{"a template that does not render", badLauncher{invalid("command: %w", errors.New("no such value"))}, good,
			configs[0].Name() + ": invalid sweep: command: no such value"},
		{"a target that does not start", badLauncher{errors.New("exit status 1")}, good, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Configs: configs, Launcher: tt.launcher, Plan: tt.plan, Out: filepath.Join(t.TempDir(), "sweep.json")}
			res, err := Run(context.Background(), s)
			var in *failure.InputError
			switch {
			case tt.want == "" && errors.As(err, &in):
				t.Errorf("Run() = %v, want no input error", err)
			case tt.want == "" && (res == nil || len(res.Configs) != 1 || res.Configs[0].State != FailedToStart):
				t.Errorf("Run() = %+v, want one row FAILED TO START", res)
			case tt.want != "" && (!errors.As(err, &in) || err.Error() != tt.want):
				t.Errorf("Run() = %v (%T), want a failure.InputError %q", err, err, tt.want)
			}
		})
	}
}
