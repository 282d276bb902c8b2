package cli

import (
	"errors"
	"fmt"
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

// demoTiming is how long the demo's steps are, and how finely it searches.
type demoTiming struct {
	step, warmup time.Duration
	precision    float64
	// delivered is the share of a step's messages that must reach the sink
	// by the step's end: the tail of a step (the last ~60 ms of messages)
	// is always in flight, a bigger share of a short step.
	delivered float64 // percent
}

var (
	demoFull  = demoTiming{step: 3 * time.Second, warmup: time.Second, precision: 0.05, delivered: 95}
	demoQuick = demoTiming{step: 2 * time.Second, warmup: 500 * time.Millisecond, precision: 0.3, delivered: 93}
)

func demoCmd(e *env) *cobra.Command {
	var quick bool
	var dir string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Find the edge of a built-in chat backend, watched as a separate process (needs nothing else)",
		Long: `Start the built-in chat backend (ceiling demo-target) as a separate process on
loopback, and a Slack-like sink it posts every saved message to; then search for
the highest rate of widget messages (WebSocket frames, each acked once saved) at
which the acks stay fast and the messages reach the sink. Prints the step table
and the edge, and writes DIR/result.json, DIR/report.html and DIR/plan.yaml (the
plan it ran, to run again with ceiling find).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t := demoFull
			if quick {
				t = demoQuick
			}
			return runDemo(e, t, dir)
		},
	}
	c.Flags().BoolVar(&quick, "quick", false, "shorter steps and a coarser search: about 20 s instead of under a minute (for CI)")
	c.Flags().StringVar(&dir, "out", "ceiling-demo", "folder for result.json, report.html and plan.yaml")
	return c
}

func runDemo(e *env, t demoTiming, dir string) error {
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
	return err
}
