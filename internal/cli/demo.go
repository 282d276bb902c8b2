package cli

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
)

// demoTiming is how long the demo's steps are, how finely it searches, and
// the share of a step's messages (percent) that must reach the sink by its
// end (its last ~60 ms are in flight: a bigger share of a short step).
type demoTiming struct {
	step, warmup         time.Duration
	precision, delivered float64
}

var (
	demoFull  = demoTiming{step: 3 * time.Second, warmup: time.Second, precision: 0.05, delivered: 95}
	demoQuick = demoTiming{step: 2 * time.Second, warmup: 500 * time.Millisecond, precision: 0.3, delivered: 93}
)

func demoCmd(e *env) *cobra.Command {
	var quick, events, wide bool
	var dir string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Find the edge of a built-in chat backend, watched as a separate process (needs nothing else)",
		Long: `Start the built-in chat backend (ceiling demo-target) and a Slack-like sink it posts every saved message to,
then search for the highest rate of widget messages at which the acks stay fast and the messages reach the sink.
Writes DIR/result.json, DIR/report.html and DIR/plan.yaml. --events adds a step with the backend restarted.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t := demoFull
			if quick {
				t = demoQuick
			}
			if wide {
				e.columns = 0 // every column, as when stdout is not a terminal
			}
			return runDemo(e, t, dir, events)
		},
	}
	c.Flags().BoolVar(&quick, "quick", false, "shorter steps and a coarser search: about 15 s instead of about 35 s (for CI)")
	c.Flags().BoolVar(&events, "events", false, "then a step at 90% of the edge with the backend restarted 3 s in: what a deploy costs, which messages are lost (about 12 s more; its thresholds do not change the exit code)")
	c.Flags().StringVar(&dir, "out", "ceiling-demo", "folder for result.json, report.html and plan.yaml")
	c.Flags().BoolVar(&wide, "wide", false, "print every column of the table, however narrow the terminal")
	return c
}

func runDemo(e *env, t demoTiming, dir string, events bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cannotRun("create demo folder: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return cannotRun("find the ceiling binary to start the demo target: %w", err)
	}
	ports, err := demo.FreePorts(2)
	if err != nil {
		return cannotRun("find free loopback ports: %w", err)
	}
	planFile := filepath.Join(dir, "plan.yaml")
	text := demo.Plan(demo.PlanConfig{
		Exe: exe, File: planFile, TargetPort: ports[0], SinkPort: ports[1],
		Step: t.step, Warmup: t.warmup, Precision: t.precision, DeliveredPct: t.delivered,
	})
	if err := os.WriteFile(planFile, []byte(text), 0o644); err != nil {
		return cannotRun("write %s: %w", planFile, err)
	}
	p, err := plan.Parse(planFile, []byte(text))
	if err != nil {
		return cannotRun("demo plan: %w", err) // a bug: the demo writes its own plan
	}
	out, page := filepath.Join(dir, "result.json"), filepath.Join(dir, "report.html")
	cfg := search.Config{Start: demo.SearchStart, Max: demo.SearchMax, Precision: t.precision}
	story := func(res *results.Result) string {
		return report.DemoStory(res, report.Demo{Lanes: demo.Lanes, SinkLatency: demo.SinkLatency, AckP99MS: demo.AckP99MS, DeliveredPct: t.delivered})
	}
	res, err := find(e, p, &outputFlags{out: out, html: page, story: story}, cfg)
	var coded *codedError
	if err != nil && !(errors.As(err, &coded) && coded.code == ExitThreshold) {
		return err
	}
	if res != nil {
		fmt.Fprintf(e.stdout, "\n%s\n", story(res))
	}
	fmt.Fprintf(e.stdout, "\nOpen %s for the plots; %s has every figure, per step and per second.\n", page, out)
	if strings.Contains(filepath.ToSlash(exe), "/go-build") { // go run's binary, deleted on exit
		fmt.Fprintf(e.stdout, "To run it again, build ceiling (go run deletes its binary on exit, and the plan starts the target through it):\n  go build -o ceiling ./cmd/ceiling && ./ceiling demo --out %s\n", dir)
	} else {
		fmt.Fprintf(e.stdout, "Run it again with: %s find %s --max %g --precision %g%%\n", exe, planFile, demo.SearchMax, 100*t.precision)
	}
	if events && res != nil && res.Edge != nil {
		act := demoEvents(e, exe, dir, math.Round(0.9*res.Edge.Rate))
		if act != nil && actOutcome(act) == nil {
			fmt.Fprintln(e.stdout, "\nThe restart failed the act's thresholds above: that is what it cost. The demo's exit code is its search's, which found the edge.")
		}
		return cmp.Or(actOutcome(act), err)
	}
	return err
}

// actOutcome is what the second act's error does to the demo's exit code:
// a threshold the restart failed (errors, recovery) is what the act shows,
// printed in its table, not the demo failing, whose exit code is the
// search's; an act that could not run (exit 3) or was interrupted (130)
// still says so.
func actOutcome(err error) error {
	if code, _ := codeOf(err); err != nil && code == ExitThreshold {
		return nil
	}
	return err
}

// demoEvents is the demo's second act: a step at rate with the backend
// restarted 3 s in (demo.EventsPlan), its table and what the restart cost.
func demoEvents(e *env, exe, dir string, rate float64) error {
	ports, err := demo.FreePorts(2)
	if err != nil {
		return cannotRun("%w", err)
	}
	file := filepath.Join(dir, "events.yaml")
	text := demo.EventsPlan(demo.PlanConfig{Exe: exe, File: file, TargetPort: ports[0], SinkPort: ports[1]}, rate)
	p, err := plan.Parse(file, []byte(text))
	if err = cmp.Or(err, os.WriteFile(file, []byte(text), 0o644)); err != nil {
		return cannotRun("demo events: %w", err)
	}
	o := &outputFlags{out: filepath.Join(dir, "events.json"), html: filepath.Join(dir, "events.html")}
	return execute(e, p, o, 1, "one step, the backend restarted 3 s in (a deploy)")
}
