package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// demoSLO is the threshold the demo reads its stairs against.
const demoSLO = "p99<100ms, errors<1%"

func demoCmd(e *env) *cobra.Command {
	var quick bool
	var dir string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run stairs against a built-in target with a real bottleneck (needs nothing else)",
		Long: `Start a small built-in service on loopback (four worker lanes of 5 ms each, so
800 jobs a second, with a bounded queue that answers 503 when full), run open-model
stairs across its capacity, print the step table and write DIR/result.json.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runDemo(e, quick, dir)
		},
	}
	c.Flags().BoolVar(&quick, "quick", false, "a few seconds instead of about half a minute (for CI)")
	c.Flags().StringVar(&dir, "out", "ceiling-demo", "folder for result.json")
	return c
}

func runDemo(e *env, quick bool, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cannotRun("create demo folder: %w", err)
	}
	srv, err := demo.Start(demo.Config{})
	if err != nil {
		return cannotRun("%w", err)
	}
	defer srv.Close()
	capacity := srv.Config().Capacity()
	rates := []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5}
	step, warm := 4*time.Second, time.Second
	if quick {
		rates, step, warm = []float64{0.25, 0.75, 1.5}, time.Second, 500*time.Millisecond
	}
	for i := range rates {
		rates[i] *= capacity
	}
	p := &plan.Plan{
		Name:   "ceiling demo: a worker queue of 4 lanes × 5 ms (800/s)",
		Target: srv.URL(),
		Load: plan.Load{
			Model: plan.Open, Rates: rates,
			Step: plan.Duration{Duration: step}, Warmup: &plan.Duration{Duration: warm},
		},
		HTTP:      plan.HTTP{Timeout: plan.Duration{Duration: 5 * time.Second}},
		Scenarios: []plan.Scenario{{Name: "send", Request: plan.Request{Method: "POST", URL: "/send", Body: `{"text":"hi"}`}}},
		SLO:       demoSLO,
	}
	if err := p.Validate(); err != nil {
		return cannotRun("demo plan: %w", err)
	}
	out := filepath.Join(dir, "result.json")
	page := filepath.Join(dir, "report.html")
	res, err := runPlan(e, p, &outputFlags{out: out, html: page})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n%s\n", edgeSentence(res))
	fmt.Fprintf(e.stdout, "\nThe target's nominal capacity is %.0f/s (4 lanes × 5 ms); the achieved column shows what it really served once overloaded, and the table where it bends.\n", capacity)
	fmt.Fprintf(e.stdout, "Open %s for the plots, and %s for every figure, per step and per second.\n", page, out)
	if res.Interrupted {
		return &codedError{code: ExitInterrupted, err: fmt.Errorf("interrupted")}
	}
	return nil
}

// edgeSentence reads the stairs: the highest rate whose step held the SLO
// and the first one above it that did not.
func edgeSentence(r *results.Result) string {
	var pass, fail *results.Step
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.SLOPassed == nil {
			continue
		}
		if *s.SLOPassed && fail == nil {
			pass = s
		} else if !*s.SLOPassed && fail == nil {
			fail = s
		}
	}
	switch {
	case pass == nil && fail == nil:
		return "No step finished."
	case pass == nil:
		return fmt.Sprintf("Even the first step, %.0f/s, failed %s: p99 %.1f ms, errors %.1f%%.",
			fail.TargetRate, demoSLO, fail.LatencyMS.P99, 100*fail.ErrorRate)
	case fail == nil:
		return fmt.Sprintf("Every step held %s, up to %.0f/s (p99 %.1f ms).", demoSLO, pass.TargetRate, pass.LatencyMS.P99)
	}
	return fmt.Sprintf("Held %s up to %.0f/s (p99 %.1f ms); %.0f/s fails: p99 %.1f ms, errors %.1f%%.",
		demoSLO, pass.TargetRate, pass.LatencyMS.P99, fail.TargetRate, fail.LatencyMS.P99, 100*fail.ErrorRate)
}

// demoTargetCmd serves the demo target in the foreground until interrupted:
// the example plans in docs/examples load it.
func demoTargetCmd(e *env) *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:    "demo-target",
		Short:  "Serve the built-in demo target (the example plans load it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			srv, err := demo.Start(demo.Config{Addr: addr})
			if err != nil {
				return cannotRun("%w", err)
			}
			defer srv.Close()
			fmt.Fprintf(e.stderr, "ceiling demo-target: serving on %s (Ctrl-C stops it)\n", srv.URL())
			<-e.ctx.Done()
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	return c
}
